"""A group worker's handle reads only its own process's log."""

from __future__ import annotations

import json

from kafkalite.lab.workers import GroupWorker


def test_a_worker_started_under_a_used_name_has_only_its_own_log(tmp_path):
    """The demo's consumer-group scenario, run twice, started c1 again: the new c1's
    handle read the first c1's lines (its assignment, commits and kill) as its own."""
    old = {"worker": "c1", "event": "assigned", "time": 0.0, "partitions": [0, 1]}
    (tmp_path / "c1.jsonl").write_text(json.dumps(old) + "\n")
    worker = GroupWorker.start("c1", tmp_path, [])  # no --bootstrap: exits at once
    worker.process.wait(30)
    worker.ended_on_purpose = True
    assert worker.assignment() == []
    assert "arguments are required" in worker.error()
