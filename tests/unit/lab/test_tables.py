"""The cluster's tables from a snapshot recorded right after broker 3 (leader of orders-1,
follower of orders-0) was killed: before orders-1 had a new leader."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from kafkalite.lab import tables
from kafkalite.lab.tables import current_incarnation

pytestmark = pytest.mark.unit

STATUS = json.loads((Path(__file__).parent / "snapshots" / "broker-3-killed.json").read_text())


def test_a_dead_brokers_replicas_keep_their_rows_with_missing_offsets():
    frame = tables.replicas_frame(STATUS)
    assert len(frame) == 6
    dead = frame[frame["broker"] == 3]
    assert set(dead["state"]) == {"dead"}
    assert dead["log_end_offset"].isna().all() and dead["lag"].isna().all()


def test_each_replica_shows_its_own_high_watermark_and_the_leaders_lso():
    frame = tables.replicas_frame(STATUS, "orders").set_index(["partition", "broker"])
    leader = frame.loc[(0, 2)]
    follower = frame.loc[(0, 1)]
    assert leader["leader"] and not follower["leader"]
    assert (leader["log_end_offset"], leader["high_watermark"]) == (8, 8)
    # the follower has every record but learns the new high watermark on its next fetch
    assert (follower["log_end_offset"], follower["high_watermark"]) == (8, 5)
    assert follower["last_stable_offset"] == 8 and follower["lag"] == 0
    assert not frame.loc[(0, 3)]["in_isr"] and follower["in_isr"]


def test_a_partition_whose_leader_died_has_no_leader_yet():
    frame = tables.partitions_frame(STATUS).set_index("partition")
    assert frame.loc[0, "leader"] == 2 and frame.loc[0, "isr"] == [2, 1]
    assert pd.isna(frame.loc[1, "leader"]) and pd.isna(frame.loc[1, "high_watermark"])


def test_brokers_frame_names_the_controller():
    frame = tables.brokers_frame(STATUS).set_index("broker")
    assert frame.loc[1, "controller"] and not frame.loc[2, "controller"]
    assert frame.loc[3, "state"] == "dead"


def test_group_lag_is_the_high_watermark_minus_the_committed_offset():
    committed = {"billing": {("orders", 0): 3, ("orders", 1): 0}, "audit": {("orders", 0): 8}}
    frame = tables.groups_frame(committed, STATUS)
    rows = {(r.group, r.partition): r for r in frame.itertuples()}
    assert rows[("billing", 0)].lag == 5
    assert rows[("audit", 0)].lag == 0
    assert pd.isna(rows[("billing", 1)].lag)  # orders-1 has no leader, so no HW to compare
    assert list(frame["group"]) == ["audit", "billing", "billing"]


def test_events_leave_out_replayed_history_and_filter_by_type():
    events = [
        {
            "seq": 1,
            "time_ms": 1_000,
            "broker": 1,
            "type": "topic_created",
            "topic": "t",
            "replay": True,
        },
        {
            "seq": 2,
            "time_ms": 2_000,
            "broker": 2,
            "type": "leader_elected",
            "topic": "t",
            "partition": 0,
        },
        {
            "seq": 3,
            "time_ms": 3_000,
            "broker": 2,
            "type": "isr_shrunk",
            "topic": "t",
            "removed": [3],
        },
    ]
    frame = tables.events_frame(events)
    assert list(frame["type"]) == ["leader_elected", "isr_shrunk"]
    assert frame.loc[0, "details"] == "topic=t, partition=0"
    assert list(tables.events_frame(events, types=["isr_shrunk"])["broker"]) == [2]
    assert len(tables.events_frame(events, include_replay=True)) == 3


def test_transactions_are_the_coordinators_view():
    status = {
        **STATUS,
        "transactions": [
            {
                "transactional_id": "bank-1",
                "producer_id": 0,
                "producer_epoch": 2,
                "state": "Ongoing",
                "partitions": ["accounts-0"],
                "timeout_ms": 60000,
                "start_time_ms": 1,
                "coordinator": 2,
                "coordinator_epoch": 0,
                "pending_markers": [],
            },
        ],
    }
    frame = tables.transactions_frame(status)
    assert frame.to_dict("records") == [
        {
            "transactional_id": "bank-1",
            "state": "Ongoing",
            "producer_id": 0,
            "producer_epoch": 2,
            "partitions": ["accounts-0"],
            "coordinator": 2,
            "timeout_ms": 60000,
        }
    ]
    assert tables.transactions_frame(STATUS).empty  # a snapshot from before transactions


def test_a_topics_events_start_at_its_latest_creation() -> None:
    """A lab run again re-creates its topics: its events table shows only this run."""
    events = [
        {"time_ms": 1_000, "type": "topic_created", "topic": "t", "broker": 1},
        {"time_ms": 2_000, "type": "log_truncated", "topic": "t", "broker": 1},
        {"time_ms": 60_000, "type": "topic_created", "topic": "t", "broker": 1},
        {"time_ms": 60_040, "type": "topic_created", "topic": "t", "broker": 2},
        {"time_ms": 61_000, "type": "leader_elected", "topic": "t", "broker": 2},
        {"time_ms": 90_000, "type": "topic_created", "topic": "t", "broker": 3, "replay": True},
    ]
    assert [e["time_ms"] for e in current_incarnation(events)] == [60_000, 60_040, 61_000, 90_000]
    assert current_incarnation(events[1:2]) == events[1:2]  # created before the events kept
