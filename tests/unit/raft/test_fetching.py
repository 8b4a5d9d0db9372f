"""Fetch: divergence and truncation, the high-watermark rule, snapshots, resignation."""

from __future__ import annotations

import pytest

from kafkalite.raft import ElectionState, Entry, RaftNode, Role, Snapshot
from kafkalite.raft.messages import Envelope, EpochEndOffset, FetchRequest, FetchResponse
from kafkalite.raft.node import NotLeader
from kafkalite.raft.roles import LeaderState, VoterProgress
from tests.unit.raft.helpers import CONFIG, deliver, make_node, settle

pytestmark = pytest.mark.unit


def elect(nodes: dict[int, RaftNode], candidate: int, now: int = 10_000) -> None:
    for node in nodes.values():
        node.poll(0)
    deliver(nodes, nodes[candidate].poll(now), now)
    assert nodes[candidate].role is Role.LEADER


def log_of(node: RaftNode) -> list[tuple[int, int]]:
    return [(e.offset, e.epoch) for e in node.log.read(node.log.log_start_offset, 1000)]


def test_a_diverging_follower_truncates_to_the_leaders_epoch_boundary_and_catches_up() -> None:
    # Node 2 holds two uncommitted entries of epoch 2 that nodes 1 and 3 never saw.
    state = ElectionState(2)
    nodes = {
        1: make_node(1, epochs=[1, 1, 1], state=state),
        2: make_node(2, epochs=[1, 1, 1, 2, 2], state=state),
        3: make_node(3, epochs=[1, 1, 1], state=state),
    }
    for node in nodes.values():
        node.poll(0)
    deliver({1: nodes[1], 3: nodes[3]}, nodes[1].poll(10_000), 10_000)  # 2 is away
    assert nodes[1].role is Role.LEADER and nodes[1].epoch == 3
    fetch = FetchRequest(2, 3, fetch_offset=5, last_fetched_epoch=2)
    (reply,) = nodes[1].handle(10_001, Envelope(2, 1, 7, fetch))
    assert isinstance(reply.message, FetchResponse)
    assert reply.message.diverging_epoch == EpochEndOffset(epoch=1, end_offset=3)
    settle(nodes, 10_002, 50)  # node 2 joins: truncates to 3 and fetches epoch 3's entry
    assert log_of(nodes[2]) == log_of(nodes[1]) == [(0, 1), (1, 1), (2, 1), (3, 3)]
    assert nodes[2].high_watermark == 4


def test_high_watermark_waits_for_an_entry_of_the_current_epoch() -> None:
    """Entries 0..4 are from epoch 1; epoch 3's LeaderChange is at offset 5. A majority
    holding 0..4 commits nothing (Raft §5.4.2); a majority holding offset 5 commits all."""
    leader = LeaderState(3, 5, {v: VoterProgress(v) for v in (1, 2, 3)}, 0)
    leader.update_replica(1, 6, 0, 6)
    leader.update_replica(2, 5, 0, 6)
    assert leader.maybe_update_high_watermark(current=0) is None
    leader.update_replica(2, 6, 0, 6)
    assert leader.maybe_update_high_watermark(current=0) == 6
    assert leader.maybe_update_high_watermark(current=6) is None


def elected_by_node_2_alone() -> RaftNode:
    """Node 1 of three voters that all hold entries 0..1 of epoch 1 (as after a restart
    of every voter: none knows what was committed), elected for epoch 2 by node 2's vote;
    its BeginQuorumEpoch is not delivered, so no voter has fetched from it yet."""
    state = ElectionState(1)
    nodes = {n: make_node(n, epochs=[1, 1], state=state, seed=n) for n in (1, 2, 3)}
    for node in nodes.values():
        node.poll(0)
    (pre_vote,) = [e for e in nodes[1].poll(10_000) if e.destination == 2]
    (pre_vote_response,) = nodes[2].handle(10_000, pre_vote)
    (vote_request,) = [e for e in nodes[1].handle(10_000, pre_vote_response) if e.destination == 2]
    (vote_response,) = nodes[2].handle(10_000, vote_request)
    nodes[1].handle(10_000, vote_response)
    assert nodes[1].role is Role.LEADER and nodes[1].epoch == 2
    return nodes[1]


def test_leader_commits_prior_epoch_entries_only_with_its_own() -> None:
    """Node-level: a follower holding 0..1 (epoch 1) does not make them committed; once it
    holds the new leader's LeaderChange (offset 2, epoch 2), all three are."""
    leader = elected_by_node_2_alone()
    leader.handle(10_001, Envelope(2, 1, 5, FetchRequest(2, 2, 2, 1)))
    leader.poll(10_001)
    assert leader.high_watermark == 0
    leader.handle(10_002, Envelope(2, 1, 6, FetchRequest(2, 2, 3, 2)))
    assert leader.high_watermark == 3
    committed = leader.take_committed()
    assert [(e.offset, e.epoch) for e in committed if isinstance(e, Entry)] == [
        (0, 1),
        (1, 1),
        (2, 2),
    ]


def test_a_new_leader_sends_no_high_watermark_until_an_entry_of_its_epoch_commits() -> None:
    """After every voter restarted, no one knows what was committed: a new leader that
    answered with its high watermark of 0 told its followers that nothing was, and a
    restarted broker, caught up with nothing, started on an empty metadata image (and
    then replayed old topic deletions onto its logs). Kafka's leader answers -1 (its
    ``LeaderState.highWatermark()`` is empty) until its epoch's first entry commits."""
    leader = elected_by_node_2_alone()
    (first,) = leader.handle(10_001, Envelope(2, 1, 5, FetchRequest(2, 2, 2, 1)))
    assert isinstance(first.message, FetchResponse)
    assert first.message.high_watermark == -1
    (later,) = leader.handle(10_002, Envelope(2, 1, 6, FetchRequest(2, 2, 3, 2)))
    assert isinstance(later.message, FetchResponse)
    assert later.message.high_watermark == leader.high_watermark == 3


def test_a_fetch_from_an_old_epoch_is_fenced() -> None:
    nodes = {n: make_node(n, seed=n) for n in (1, 2, 3)}
    elect(nodes, 1)
    out = nodes[1].handle(10_001, _fetch(2, epoch=0))
    response = out[0].message
    assert isinstance(response, FetchResponse)
    assert response.error_code == 74 and response.leader_id == 1 and response.leader_epoch == 1


def test_a_parked_fetch_asked_again_is_answered_not_dropped() -> None:
    """A follower whose Fetch waited too long (a busy leader) sends another; the parked
    one must still get an answer, or whatever carries it waits for nothing."""
    nodes = {n: make_node(n, seed=n) for n in (1, 2, 3)}
    elect(nodes, 1)
    settle(nodes, 10_001, 50)
    end = nodes[1].log.end_offset

    def answered(out: list[Envelope]) -> set[int]:
        return {e.correlation_id for e in out if e.correlation_id in (41, 42)}

    first = FetchRequest(2, 1, end, nodes[1].epoch, max_wait_ms=100)
    assert answered(nodes[1].handle(10_100, Envelope(2, 1, 41, first))) == set()  # parked
    again = FetchRequest(2, 1, end, nodes[1].epoch, max_wait_ms=100)
    assert answered(nodes[1].handle(10_150, Envelope(2, 1, 42, again))) == {41}
    assert answered(nodes[1].poll(10_250)) == {42}


def _fetch(replica: int, epoch: int, offset: int = 0, last_epoch: int = 0) -> Envelope:
    return Envelope(replica, 1, 99, FetchRequest(replica, epoch, offset, last_epoch))


def test_append_on_a_follower_says_who_leads() -> None:
    nodes = {n: make_node(n, seed=n) for n in (1, 2, 3)}
    elect(nodes, 1)
    assert nodes[2].append(10_001, [b"x"]) == NotLeader(1, 1)


def test_a_follower_behind_the_log_start_installs_the_snapshot() -> None:
    nodes = {n: make_node(n, seed=n) for n in (1, 2, 3)}
    elect(nodes, 1)
    now = 10_001
    for i in range(10):
        nodes[1].append(now, [b"v%d" % i])
        deliver({1: nodes[1], 2: nodes[2]}, nodes[1].poll(now), now)  # node 3 is away
        now += 1
    applied = nodes[1].take_committed()
    assert nodes[1].high_watermark == 11
    nodes[1].create_snapshot(11, b"state@11" * 1000)  # several FetchSnapshot chunks
    assert nodes[1].log.log_start_offset == 11
    out = nodes[3].poll(now + 1)  # its pending fetch times out and is resent
    deliver(nodes, out + nodes[1].poll(now + 1), now + 1)
    later = now + CONFIG.request_timeout_ms + 50
    deliver(nodes, nodes[3].poll(later), later)
    first = nodes[3].take_committed()[0]
    assert isinstance(first, Snapshot) and first.data == b"state@11" * 1000
    assert nodes[3].log.log_start_offset == 11 and len(applied) == 11


def test_resign_hands_over_quickly_with_end_quorum_epoch() -> None:
    nodes = {n: make_node(n, seed=n) for n in (1, 2, 3)}
    elect(nodes, 1)
    settle(nodes, 10_001, 20)
    deliver(nodes, nodes[1].resign(10_100), 10_100)
    assert nodes[1].role is Role.RESIGNED
    settle(nodes, 10_101, 20)  # well within fetch.timeout.ms: only EndQuorumEpoch explains it
    leaders = [n for n, node in nodes.items() if node.role is Role.LEADER]
    assert leaders == [2] and nodes[2].epoch == 2  # most caught up, then lowest id
    assert nodes[1].role is Role.FOLLOWER and nodes[1].leader_id == 2


def test_the_second_follower_to_ack_an_entry_hears_of_its_commit_at_once() -> None:
    """The first follower's ack commits the entry; the other follower's Fetch, just after,
    has no entries to get but a new high watermark: parked, its broker would apply the
    change a whole max wait later (a new partition leader, a created topic)."""
    nodes = {n: make_node(n, seed=n) for n in (1, 2, 3)}
    elect(nodes, 1)
    now = settle(nodes, 10_001, 50)
    leader = nodes[1]
    end, epoch = leader.log.end_offset, leader.epoch
    leader.append(now, [b"new leader of t-0"])
    leader.poll(now)  # flushed; the parked Fetches get the entry (not yet committed)
    for follower, cid in ((2, 51), (3, 52)):
        fetch = FetchRequest(follower, epoch, end + 1, epoch, max_wait_ms=500)
        out = leader.handle(now + 1, Envelope(follower, 1, cid, fetch))
        answers = [e.message for e in out if e.correlation_id == cid]
        assert len(answers) == 1, f"follower {follower}'s Fetch was parked"
        assert isinstance(answers[0], FetchResponse)
        assert answers[0].high_watermark == end + 1
