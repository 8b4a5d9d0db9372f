"""The dashboard model on synthetic snapshots: transactions (contract 2's
``open_transactions`` / ``aborted_transactions``), slowed brokers, the offset window, the
event feed's de-duplication, and the static renderings."""

from __future__ import annotations

import re
from typing import Any

import pytest

from kafkalite.lab.dashboard.feed import Feed, describe
from kafkalite.lab.dashboard.model import DashboardModel, GroupOffset
from kafkalite.lab.dashboard.render import render_html, render_text
from kafkalite.lab.dashboard.strips import CellKind, offset_window
from kafkalite.lab.group_members import GroupMember, GroupView

pytestmark = pytest.mark.unit

NOW = 1_800_000_000_000


def replica(broker: int, leo: int | None, hw: int | None, **extra: Any) -> dict[str, Any]:
    return {
        "broker": broker,
        "state": "running",
        "in_isr": True,
        "leader_epoch": 2,
        "log_start_offset": 0,
        "log_end_offset": leo,
        "high_watermark": hw,
        **extra,
    }


def snapshot(partition: dict[str, Any], brokers: list[dict[str, Any]] | None = None) -> dict:
    return {
        "brokers": brokers
        or [
            {"id": 1, "address": "a:1", "state": "running", "controller": True},
            {"id": 2, "address": "a:2", "state": "running", "controller": False},
        ],
        "partitions": [
            {
                "topic": "pay",
                "partition": 0,
                "leader": 1,
                "leader_epoch": 2,
                "isr": [1, 2],
                "high_watermark": 10,
                "last_stable_offset": 4,
                "log_start_offset": 0,
                "replicas": [replica(1, 12, 10), replica(2, 11, 10)],
                **partition,
            }
        ],
        "quorum": {"leader": 1, "epoch": 5},
    }


def kinds_of(state: Any, broker: int) -> dict[int, CellKind]:
    row = next(r for r in state.partition("pay", 0).replicas if r.broker == broker)
    return {c.offset: c.kind for c in row.cells}


def test_open_and_aborted_transactions_colour_their_cells() -> None:
    snap = snapshot(
        {
            "open_transactions": [{"producer_id": 7, "producer_epoch": 0, "first_offset": 4}],
            "aborted_transactions": [{"producer_id": 3, "first_offset": 1, "last_offset": 2}],
        }
    )
    state = DashboardModel().update(snap, [], NOW)
    leader = kinds_of(state, 1)
    assert leader[0] == CellKind.COMMITTED
    assert leader[1] == leader[2] == CellKind.ABORTED
    assert leader[3] == CellKind.COMMITTED
    assert all(leader[o] == CellKind.OPEN_TXN for o in range(4, 12))
    assert kinds_of(state, 2)[10] == CellKind.OPEN_TXN  # the follower has the same records
    html = render_html(state)
    assert 'data-marker="LSO" data-offset="4"' in html
    assert 'data-kind="aborted"' in html and 'data-kind="open_txn"' in html


def test_committed_uncommitted_and_markers_without_transactions() -> None:
    state = DashboardModel().update(snapshot({"last_stable_offset": 10}), [], NOW)
    assert kinds_of(state, 1) == {
        **dict.fromkeys(range(10), CellKind.COMMITTED),
        10: CellKind.UNCOMMITTED,
        11: CellKind.UNCOMMITTED,
    }
    html = render_html(state)
    assert 'data-marker="HW" data-offset="10"' in html
    assert 'data-marker="LEO" data-offset="12"' in html
    assert 'data-marker="LSO"' not in html  # equal to the HW: one marker says it


def test_group_offsets_and_a_slowed_broker() -> None:
    brokers = [
        {"id": 1, "address": "a:1", "state": "running", "controller": True, "slow_ms": None},
        {"id": 2, "address": "a:2", "state": "running", "controller": False, "slow_ms": 500},
    ]
    state = DashboardModel().update(
        snapshot({}, brokers), [], NOW, {("pay", 0): [GroupOffset("billing", 7)]}
    )
    assert state.partition("pay", 0).groups == (GroupOffset("billing", 7),)
    assert state.broker(2).verbs == ("kill", "stop", "pause", "isolate", "heal")
    assert state.broker(1).verbs == ("kill", "stop", "pause", "isolate", "partial_partition")
    html = render_html(state)
    assert "slowed 500 ms" in html
    assert 'data-marker="billing" data-offset="7"' in html
    assert state.controller == 1 and state.quorum_epoch == 5


def test_only_the_newest_offsets_are_drawn_and_the_rest_is_said() -> None:
    snap = snapshot(
        {
            "high_watermark": 1000,
            "last_stable_offset": 1000,
            "replicas": [replica(1, 1000, 1000), replica(2, 990, 990)],
        }
    )
    state = DashboardModel(window_cells=40).update(snap, [], NOW)
    p = state.partition("pay", 0)
    assert (p.window_start, p.window_end) == (960, 1000)
    assert len(p.replicas[0].cells) == 40 and len(p.replicas[1].cells) == 30
    assert "offsets 0..959 not drawn" in render_html(state)
    assert offset_window(5, [7], 40) == range(5, 7)


def test_cells_are_labelled_with_real_offsets_not_modulo_100() -> None:
    """Past offset 99 a cell is too narrow for its number: an axis gives every fifth
    offset its real number (960, 965, ...), and no cell says 60 for offset 960."""
    snap = snapshot(
        {
            "high_watermark": 1000,
            "last_stable_offset": 1000,
            "replicas": [replica(1, 1000, 1000), replica(2, 990, 990)],
        }
    )
    html = render_html(DashboardModel(window_cells=40).update(snap, [], NOW))
    axis = re.findall(r'class="kl-axis" data-offset="(\d+)"[^>]*>(\d+)<', html)
    assert [int(label) for _, label in axis] == list(range(960, 1000, 5))
    assert all(offset == label for offset, label in axis)
    assert re.findall(r'data-offset="960"[^>]*>(\d*)</span>', html).count("60") == 0
    small = render_html(DashboardModel().update(snapshot({}), [], NOW))
    assert 'data-offset="7" data-kind="committed"' in small and ">7</span>" in small
    assert 'class="kl-axis"' not in small  # two digits fit a cell: no axis needed


def test_a_partition_without_a_leader_never_says_none() -> None:
    """While a partition has no leader the dashboard says why, never "None"."""
    electing = snapshot({"leader": None, "high_watermark": None, "last_stable_offset": None})
    state = DashboardModel().update(electing, [], NOW)
    assert state.partition("pay", 0).leaderless == "no leader — election in progress"
    html, text = render_html(state), render_text(state)
    assert "no leader — election in progress" in html and "None" not in html
    assert "no leader — election in progress" in text and "None" not in text
    down = [
        {"id": 1, "address": "a:1", "state": "dead", "controller": False},
        {"id": 2, "address": "a:2", "state": "running", "controller": True},
    ]
    offline = snapshot({"leader": None, "isr": [1], "high_watermark": None}, down)
    waiting = DashboardModel().update(offline, [], NOW).partition("pay", 0).leaderless
    assert waiting == "no leader — waiting for an in-sync replica (1) to come back"


@pytest.mark.parametrize("topic", ["__consumer_offsets", "__transaction_state", "__grader-x1"])
def test_internal_and_grading_topics_are_not_drawn(topic: str) -> None:
    snap = snapshot({"topic": topic})
    state = DashboardModel().update(
        snap, [event(1, "leader_elected", topic=topic, partition=0, leader=1)], NOW
    )
    assert state.partitions == () and state.feed == ()


def test_a_partially_partitioned_broker_says_so_and_can_be_healed() -> None:
    brokers = [
        {"id": 1, "address": "a:1", "state": "running", "controller": True},
        {"id": 2, "address": "a:2", "state": "running", "partial_partition": True},
    ]
    state = DashboardModel().update(snapshot({}, brokers), [], NOW)
    assert state.broker(2).verbs == ("kill", "stop", "pause", "isolate", "heal")
    assert "cut from its replication peers" in render_html(state)


def test_group_members_and_who_reads_which_partition() -> None:
    members = (
        GroupMember("consumer-1", "m1", None, (("pay", 0),)),
        GroupMember("consumer-2", "m2", "replica-b", ()),
    )
    grading = GroupView(
        "g", "Stable", "range", (GroupMember("c", "m", None, (("__grader-1", 0),)),)
    )
    state = DashboardModel().update(
        snapshot({}), [], NOW, groups=[GroupView("billing", "Stable", "range", members), grading]
    )
    assert [g.group for g in state.groups] == ["billing"]  # a grading group is not shown
    assert state.partition("pay", 0).owners == (("billing", "consumer-1"),)
    html = render_html(state)
    assert "read by consumer-1 (billing)" in html
    assert 'data-client="consumer-2" data-partitions="nothing"' in html
    assert "static: replica-b" in html


def event(broker: int, kind: str, time_ms: int = NOW, **fields: Any) -> dict[str, Any]:
    return {"seq": 1, "time_ms": time_ms, "broker": broker, "type": kind, **fields}


def test_a_presenter_draws_only_the_shown_topics_and_their_events() -> None:
    """``kafkalite demo`` shows one scenario's partitions: another topic's partitions and
    events stay off screen; events about no topic (a broker fenced) still show."""
    snap = snapshot({})
    other = {**snap["partitions"][0], "topic": "other"}
    snap["partitions"].append(other)
    events = [
        event(1, "leader_elected", topic="other", partition=0, leader=2, leader_epoch=3),
        event(1, "leader_elected", topic="pay", partition=0, leader=1, leader_epoch=3),
        event(2, "broker_fenced", broker_id=3),
    ]
    snap["transactions"] = [
        {"transactional_id": "bank", "state": "Ongoing", "partitions": ["pay-0"]},
        {"transactional_id": "shop", "state": "Ongoing", "partitions": ["other-0"]},
        {"transactional_id": "done", "state": "CompleteCommit", "partitions": []},
    ]
    state = DashboardModel(shown_topics=frozenset({"pay"})).update(snap, events, NOW)
    assert [t["transactional_id"] for t in state.transactions] == ["bank"]
    assert [p.topic for p in state.partitions] == ["pay"]
    assert [i.type for i in state.feed] == ["broker_fenced", "leader_elected"]
    assert "other" not in render_html(state)
    everything = DashboardModel().update(snap, events, NOW)
    assert [p.topic for p in everything.partitions] == ["pay", "other"]


def test_feed_shows_a_metadata_event_once_and_skips_replays() -> None:
    feed = Feed()
    feed.add(
        [
            event(1, "broker_fenced", broker_id=3),
            event(2, "broker_fenced", NOW + 40, broker_id=3),
            event(
                3, "leader_elected", topic="t", partition=0, leader=3, leader_epoch=0, replay=True
            ),
            event(2, "quorum_following", leader=1, epoch=2),
        ]
    )
    assert [i.text for i in feed.items] == ["controller fenced broker 3"]
    feed.add([event(1, "broker_fenced", NOW + 60_000, broker_id=3)])  # fenced again later
    assert len(feed.items) == 2


def test_feed_words_for_what_the_labs_teach() -> None:
    items = [
        describe(e)
        for e in (
            event(
                2,
                "unclean_leader_elected",
                topic="t",
                partition=0,
                leader=2,
                leader_epoch=4,
                previous_isr=[1],
            ),
            event(1, "duplicate_suppressed", topic="t", partition=0, original_offset=17),
            event(
                1,
                "request_fenced",
                api="Fetch",
                topic="t",
                partition=0,
                replica_id=3,
                leader_epoch=1,
            ),
            event(1, "txn_aborted", transactional_id="tx-1", producer_id=7, producer_epoch=0),
            event(3, "an_event_from_the_future", answer=42),
        )
    ]
    assert [i.category for i in items if i] == ["unclean", "duplicate", "fenced", "txn", "other"]
    texts = [i.text for i in items if i]
    assert "UNCLEAN election" in texts[0] and "may be lost" in texts[0]
    assert "retry of the batch at offset 17" in texts[1]
    assert "stale Fetch request" in texts[2]
    assert texts[3] == "transaction tx-1 aborted (producer 7, epoch 0)"
    assert texts[4] == "broker 3: an_event_from_the_future answer=42"  # new types still show


def test_every_catalogued_event_type_has_words_or_is_hidden() -> None:
    """A new event type in ``kafkalite/events.py`` is either worded for the feed or hidden
    on purpose; the generic fallback is for events from a newer broker."""
    from kafkalite.events import EventType  # noqa: PLC0415
    from kafkalite.lab.dashboard.feed import _TEXT, HIDDEN  # noqa: PLC0415

    unworded = [t for t in EventType if t not in _TEXT and t not in HIDDEN]
    assert unworded == [], (
        f"give {unworded} words for the dashboard's feed in kafkalite/lab/dashboard/feed.py "
        "(_TEXT), or add them to HIDDEN there if students need not see them"
    )


def test_text_snapshot_for_logs() -> None:
    text = render_text(DashboardModel().update(snapshot({}), [], NOW))
    assert text.splitlines()[:3] == [
        "brokers: 1 running (controller), 2 running",
        "pay-0: leader 1 epoch 2 ISR [1, 2] HW 10 LSO 4",
        "  broker 1: LEO 12 HW 10 epoch 2 in ISR",
    ]


def test_a_broker_card_shows_its_silence_against_the_session() -> None:
    """A paused broker's card: how long the controller has not heard from it, and the
    session after which it is fenced; nothing while no controller judges."""
    brokers = [
        {"id": 1, "address": "a:1", "state": "running", "controller": True, "silent_ms": 120},
        {"id": 2, "address": "a:2", "state": "paused", "controller": False, "silent_ms": 2_450},
    ]
    for b in brokers:
        b["session_ms"] = 3_000
    state = DashboardModel().update(snapshot({}, brokers), [], NOW)
    assert [(c.silent_ms, c.session_ms) for c in state.brokers] == [(120, 3_000), (2_450, 3_000)]
    html = render_html(state)
    assert 'data-silent-ms="2450"' in html and "silent 2.5 s of 3.0 s" in html
    electing = [{**b, "silent_ms": None, "session_ms": None} for b in brokers]
    assert "kl-silence" not in render_html(DashboardModel().update(snapshot({}, electing), [], NOW))


def test_a_truncation_belongs_to_its_topic_not_to_one_created_again_with_its_name() -> None:
    """A demo's reset deletes its topics and creates them again: a follower's truncation of
    the old ``pay`` (offsets 30-39) is not drawn or said of the new one, which has the
    same name and another topic id."""
    truncated = event(2, "log_truncated", topic="pay", topic_id="old-id", partition=0)
    truncated |= {"from_offset": 30, "to_offset": 40, "removed": 10}
    same = DashboardModel().update(snapshot({"topic_id": "old-id"}), [truncated], NOW)
    assert kinds_of(same, 2)[30] == CellKind.TRUNCATED
    again = DashboardModel().update(snapshot({"topic_id": "new-id"}), [truncated], NOW)
    assert CellKind.TRUNCATED not in kinds_of(again, 2).values()
