"""The kafkalite command as a user runs it: up, status, kill, restart, down, and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kafka import KafkaProducer

from tests.support.cli import kafkalite
from tests.support.ports import free_base_port

pytestmark = pytest.mark.interop


def test_cli_lifecycle_and_errors(tmp_path: Path) -> None:
    port = free_base_port()
    root = str(tmp_path / "lab")
    up = kafkalite("up", "--brokers", "1", "--dir", root, "--port", str(port))
    assert up.returncode == 0, up.stderr
    bootstrap = up.stdout.strip().splitlines()[-1]
    assert bootstrap == f"127.0.0.1:{port}"
    try:
        producer = KafkaProducer(bootstrap_servers=bootstrap)
        producer.send("cli", b"x").get(timeout=20)
        producer.close()
        status = json.loads(kafkalite("status", "--dir", root, "--json").stdout)
        (broker,) = status["brokers"]
        assert (broker["id"], broker["address"], broker["state"]) == (1, bootstrap, "running")
        assert broker["controller"] is True and broker["slow_ms"] is None
        assert broker["loop_lag_ms"] >= 0
        part = next(p for p in status["partitions"] if p["topic"] == "cli")
        assert part["high_watermark"] == 1 and part["replicas"][0]["log_end_offset"] == 1

        again = kafkalite("up", "--dir", root, "--port", str(free_base_port()))
        assert again.returncode == 1 and "owned by a running cluster" in again.stderr
        busy = kafkalite("up", "--dir", str(tmp_path / "other"), "--port", str(port))
        assert busy.returncode == 1 and f"port {port}" in busy.stderr
        bad = kafkalite(
            "up",
            "--dir",
            str(tmp_path / "bad"),
            "--port",
            str(free_base_port()),
            "--config",
            "min.insync.replicas=zero",
        )
        assert bad.returncode == 1
        assert bad.stderr.strip().splitlines() == [
            "error: Invalid value 'zero' for configuration min.insync.replicas: "
            "expected a whole number"
        ]

        assert kafkalite("kill", "1", "--dir", root).returncode == 0
        status = json.loads(kafkalite("status", "--dir", root, "--json").stdout)
        assert status["brokers"][0]["state"] == "dead"
        restarted = kafkalite("restart", "1", "--dir", root)
        assert restarted.returncode == 0
        assert restarted.stdout.strip() == (
            "broker 1 started (it was not running: it was dead); it is now running"
        )
        status = json.loads(kafkalite("status", "--dir", root, "--json").stdout)
        assert status["brokers"][0]["state"] == "running"
        assert next(p for p in status["partitions"] if p["topic"] == "cli")["high_watermark"] == 1
        assert "partitions" in kafkalite("status", "--dir", root).stdout
    finally:
        assert kafkalite("down", "--dir", root).returncode == 0
    status = json.loads(kafkalite("status", "--dir", root, "--json").stdout)
    assert status["brokers"][0]["state"] == "stopped"
