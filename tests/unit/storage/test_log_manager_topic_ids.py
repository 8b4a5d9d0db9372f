"""A partition directory knows which topic it belongs to: a topic deleted and created again
under its name never takes over the old topic's log."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalite.protocol.records import Record, build_batch
from kafkalite.storage.config import LogConfig
from kafkalite.storage.log_manager import LogManager, read_topic_id

pytestmark = pytest.mark.unit


def manager(root: Path) -> LogManager:
    return LogManager(root, LogConfig(), lambda: 1_000_000)


def test_a_log_of_an_older_topic_of_the_same_name_is_replaced(tmp_path: Path) -> None:
    logs = manager(tmp_path)
    old = logs.get_or_create("ledger", 0, LogConfig(), "old-id")
    old.append_as_leader(build_batch([Record(None, b"old", 0)]), 0)
    assert read_topic_id(old.dir) == "old-id"
    logs.close_all()

    reopened = manager(tmp_path)  # a restart: the directory is on disk, its id recorded
    assert reopened.get_or_create("ledger", 0, LogConfig(), "old-id").log_end_offset == 1
    fresh = reopened.get_or_create("ledger", 0, LogConfig(), "new-id")
    assert fresh.log_end_offset == 0 and read_topic_id(fresh.dir) == "new-id"
    assert [p.name for p in tmp_path.iterdir() if p.is_dir()] == ["ledger-0"]


def test_a_directory_without_an_id_is_adopted(tmp_path: Path) -> None:
    logs = manager(tmp_path)
    plog = logs.get_or_create("ledger", 0, LogConfig())
    plog.append_as_leader(build_batch([Record(None, b"kept", 0)]), 0)
    again = logs.get_or_create("ledger", 0, LogConfig(), "some-id")
    assert again is plog and again.log_end_offset == 1
    assert read_topic_id(plog.dir) == "some-id"
