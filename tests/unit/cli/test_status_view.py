"""``kafkalite status`` draws the transactions of a snapshot: the open ones on each
partition (what holds its LSO back) and each transactional id's state at its coordinator."""

from __future__ import annotations

import pytest
from rich.console import Console

from kafkalite.cli.status_view import aborted_cell, replica_cell, status_table

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


def test_the_latest_aborted_transactions_of_a_partition_are_shown() -> None:
    status = snapshot([])
    status["partitions"][0]["aborted_transactions"] = [
        {"producer_id": 7, "first_offset": 2, "last_offset": 3},
        {"producer_id": 9, "first_offset": 5, "last_offset": 8},
    ]
    line = next(line for line in rendered(status).splitlines() if "orders-0" in line)
    assert "7@2-3 9@5-8" in line


def test_many_aborted_transactions_show_the_latest_and_how_many_more() -> None:
    aborted = [
        {"producer_id": 7, "first_offset": 2 * i, "last_offset": 2 * i + 1} for i in range(10)
    ]
    assert aborted_cell(aborted) == "7@14-15 7@16-17 7@18-19 (+7 older)"
    assert aborted_cell([]) == ""


def test_no_transactions_no_table() -> None:
    assert "transactions (from" not in rendered(snapshot([]))


def test_a_slowed_broker_its_loop_lag_and_a_dead_brokers_replicas_are_shown() -> None:
    status = snapshot([])
    status["brokers"] = [
        {"id": 1, "address": "a:1", "state": "running", "controller": True, "loop_lag_ms": 3},
        {"id": 2, "address": "a:2", "state": "dead", "controller": False, "loop_lag_ms": None},
    ]
    status["brokers"][0]["slow_ms"] = 250
    status["partitions"][0]["replicas"].append(
        {"broker": 2, "state": "dead", "log_end_offset": None, "high_watermark": None}
    )
    text = rendered(status)
    assert "250 ms" in text and "3 ms" in text
    assert "2:dead" in text and "None" not in text


@pytest.mark.parametrize(
    ("state", "cell"),
    [("dead", "dead"), ("paused", "paused"), ("stopped", "stopped"), ("running", "?")],
)
def test_a_replica_whose_broker_did_not_answer_says_why(state: str, cell: str) -> None:
    row = {"broker": 2, "state": state, "log_end_offset": None, "high_watermark": None}
    assert replica_cell(row) == cell
    assert replica_cell({**row, "log_end_offset": 5, "high_watermark": 4}) == "5/4"


@pytest.mark.parametrize("width", [80, 120])
def test_the_tables_fit_the_width_with_every_offset_whole(width: int) -> None:
    status = snapshot([])
    status["partitions"] = [
        {
            **status["partitions"][0],
            "topic": "payments-ledger-with-a-long-name",
            "partition": p,
            "high_watermark": 123456,
            "last_stable_offset": 123400,
            "replicas": [
                {"broker": b, "log_end_offset": 123456 + b, "high_watermark": 123456}
                for b in (1, 2, 3)
            ],
        }
        for p in range(3)
    ]
    console = Console(record=True, width=width)
    console.print(status_table(status))
    text = console.export_text()
    assert max(map(len, text.splitlines())) <= width
    assert "…" not in text
    for b in (1, 2, 3):
        assert f"{b}:{123456 + b}/123456" in text
    assert "123400" in text and "7.2@4" in text


def rebalancing_groups() -> list[dict]:
    """A consumer group mid-rebalance (one member giving a partition up, one waiting for
    it) and a classic group beside it, as ``/state`` reports them."""
    return [
        {
            "group": "billing",
            "protocol": "classic",
            "state": "Stable",
            "epoch": 3,
            "assignor": "range",
            "members": [
                {
                    "member_id": "kafka-python-1-abc",
                    "client_id": "kafka-python-1",
                    "instance_id": None,
                    "member_epoch": 3,
                    "state": None,
                    "assigned": ["orders-0"],
                    "revoking": [],
                    "waiting": [],
                    "target": None,
                }
            ],
        },
        {
            "group": "shipping",
            "protocol": "consumer",
            "state": "Reconciling",
            "epoch": 5,
            "assignment_epoch": 5,
            "assignor": "uniform",
            "members": [
                {
                    "member_id": "a",
                    "client_id": "rdkafka-a",
                    "instance_id": None,
                    "member_epoch": 4,
                    "state": "UNREVOKED_PARTITIONS",
                    "assigned": ["orders-0"],
                    "revoking": ["orders-1"],
                    "waiting": [],
                    "target": ["orders-0"],
                },
                {
                    "member_id": "b",
                    "client_id": "rdkafka-b",
                    "instance_id": None,
                    "member_epoch": 5,
                    "state": "UNRELEASED_PARTITIONS",
                    "assigned": [],
                    "revoking": [],
                    "waiting": ["orders-1"],
                    "target": ["orders-1"],
                },
            ],
        },
    ]


@pytest.mark.parametrize("width", [80, 120])
def test_groups_show_protocol_epochs_and_a_rebalance_in_flight(width: int) -> None:
    status = {**snapshot([]), "groups": rebalancing_groups()}
    console = Console(record=True, width=width)
    console.print(status_table(status))
    text = console.export_text()
    assert max(map(len, text.splitlines())) <= width
    assert "…" not in text
    flat = " ".join(text.split())
    assert "giving up orders-1" in flat and "waiting for orders-1" in flat
    for word in ("billing", "classic", "shipping", "consumer", "Reconciling", "rdkafka-b"):
        assert word in flat


def test_groups_without_members_are_not_drawn() -> None:
    empty = {**rebalancing_groups()[0], "members": []}
    assert "consumer groups" not in rendered({**snapshot([]), "groups": [empty]})


def test_a_consumer_groups_classic_members_are_marked() -> None:
    """KIP-848's online migration: a kafka-python member of a consumer group."""
    shipping = rebalancing_groups()[1]
    members = [{**shipping["members"][0], "client_id": "kp-a", "member_protocol": "classic"}]
    text = rendered({**snapshot([]), "groups": [{**shipping, "members": members}]})
    assert "kp-a · classic" in " ".join(text.split())
