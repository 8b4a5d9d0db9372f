"""``kafkalite status`` draws the transactions of a snapshot: the open ones on each
partition (what holds its LSO back) and each transactional id's state at its coordinator."""

from __future__ import annotations

import pytest
from rich.console import Console

from kafkalite.cli.status_view import status_table

pytestmark = pytest.mark.unit


def rendered(status: dict) -> str:
    console = Console(record=True, width=250)
    console.print(status_table(status))
    return console.export_text()


def snapshot(transactions: list[dict]) -> dict:
    return {
        "brokers": [{"id": 1, "address": "127.0.0.1:9092", "state": "running", "controller": True}],
        "partitions": [
            {
                "topic": "orders",
                "partition": 0,
                "leader": 1,
                "leader_epoch": 0,
                "isr": [1],
                "high_watermark": 12,
                "last_stable_offset": 4,
                "replicas": [{"broker": 1, "log_end_offset": 12, "high_watermark": 12}],
                "open_transactions": [{"producer_id": 7, "producer_epoch": 2, "first_offset": 4}],
                "aborted_transactions": [],
            }
        ],
        "quorum": None,
        "transactions": transactions,
    }


def test_open_transactions_and_the_coordinators_view_are_shown() -> None:
    text = rendered(
        snapshot(
            [
                {
                    "transactional_id": "payments-1",
                    "producer_id": 7,
                    "producer_epoch": 2,
                    "state": "Ongoing",
                    "partitions": ["orders-0"],
                    "timeout_ms": 60000,
                    "start_time_ms": 1,
                    "coordinator": 1,
                    "coordinator_epoch": 0,
                }
            ]
        )
    )
    assert "7.2@4" in text  # the open transaction holding the LSO at 4
    line = next(line for line in text.splitlines() if "payments-1" in line)
    assert "Ongoing" in line and "orders-0" in line and "7.2" in line


def test_no_transactions_no_table() -> None:
    assert "transactions (from" not in rendered(snapshot([]))
