"""Vote granting: epoch, one vote per epoch, log up-to-dateness, durability first."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kafkalite.raft import (
    ElectionState,
    FileQuorumStateStore,
    MemoryQuorumStateStore,
    MemoryRaftLog,
    RaftNode,
    Role,
)
from kafkalite.raft.messages import Envelope, VoteRequest, VoteResponse
from tests.unit.raft.helpers import CONFIG, deliver, make_node, settle

pytestmark = pytest.mark.unit


def vote(
    node: RaftNode, candidate: int, epoch: int, last_epoch: int, last_offset: int, now: int = 0
) -> VoteResponse:
    out = node.handle(
        now,
        Envelope(
            candidate, node.node_id, 1, VoteRequest(epoch, candidate, last_epoch, last_offset)
        ),
    )
    (response,) = [e.message for e in out if isinstance(e.message, VoteResponse)]
    return response


def test_grants_an_up_to_date_candidate_of_a_newer_epoch_and_persists_the_vote() -> None:
    node = make_node(1, epochs=[1, 1])
    response = vote(node, 2, epoch=2, last_epoch=1, last_offset=2)
    assert response.vote_granted and response.leader_epoch == 2
    assert node.store.read() == ElectionState(2, voted_id=2)
    assert isinstance(node.store, MemoryQuorumStateStore)
    assert node.store.synced == ElectionState(2, voted_id=2)


def test_one_vote_per_epoch() -> None:
    node = make_node(1)
    assert vote(node, 2, epoch=1, last_epoch=0, last_offset=0).vote_granted
    assert not vote(node, 3, epoch=1, last_epoch=0, last_offset=0).vote_granted
    assert vote(node, 2, epoch=1, last_epoch=0, last_offset=0).vote_granted  # a retry


@pytest.mark.parametrize(
    ("last_epoch", "last_offset", "granted"),
    [
        (2, 3, True),  # same last epoch, same length
        (2, 5, True),  # same last epoch, longer
        (2, 2, False),  # same last epoch, shorter
        (1, 9, False),  # older last epoch, however long
        (3, 1, True),  # newer last epoch, however short
    ],
)
def test_log_up_to_date_compares_last_epoch_then_offset(
    last_epoch: int, last_offset: int, granted: bool
) -> None:
    node = make_node(1, epochs=[1, 2, 2])
    assert vote(node, 2, 5, last_epoch, last_offset).vote_granted is granted


def test_rejects_a_stale_epoch_and_says_which_epoch_is_current() -> None:
    node = make_node(1, state=ElectionState(4))
    response = vote(node, 2, epoch=3, last_epoch=9, last_offset=99)
    assert not response.vote_granted and response.leader_epoch == 4
    assert node.store.read() == ElectionState(4)


def test_a_follower_does_not_vote_in_its_leaders_epoch() -> None:
    node = make_node(1, state=ElectionState(3, leader_id=2))
    node.poll(0)
    assert node.role is Role.FOLLOWER
    assert not vote(node, 3, epoch=3, last_epoch=9, last_offset=99).vote_granted


def test_the_vote_is_on_disk_before_the_response_exists(tmp_path: Path) -> None:
    """The store's write happens inside ``handle``; the response only leaves after it."""
    path = tmp_path / "quorum-state"
    order: list[str] = []

    class RecordingStore(FileQuorumStateStore):
        def write(self, state: ElectionState) -> None:
            super().write(state)
            order.append(f"synced {state.voted_id}")

    node = RaftNode(1, [1, 2, 3], RecordingStore(path), MemoryRaftLog(), random.Random(0), CONFIG)
    response = vote(node, 2, epoch=1, last_epoch=0, last_offset=0)
    order.append("response")
    assert response.vote_granted
    assert order[-2:] == ["synced 2", "response"]
    assert FileQuorumStateStore(path).read() == ElectionState(1, voted_id=2)


def test_a_restarted_voter_remembers_its_vote() -> None:
    node = make_node(1)
    assert vote(node, 2, epoch=1, last_epoch=0, last_offset=0).vote_granted
    assert isinstance(node.store, MemoryQuorumStateStore)
    again = RaftNode(1, [1, 2, 3], node.store.crash(), MemoryRaftLog(), random.Random(1), CONFIG)
    assert not vote(again, 3, epoch=1, last_epoch=0, last_offset=0).vote_granted


def test_a_candidate_with_a_majority_leads_and_writes_leader_change() -> None:
    nodes = {n: make_node(n, seed=n) for n in (1, 2, 3)}
    for node in nodes.values():
        node.poll(0)
    out = nodes[1].poll(10_000)  # election timer fired: pre-votes first (KIP-996)
    assert nodes[1].role is Role.PROSPECTIVE and nodes[1].epoch == 0
    assert all(isinstance(e.message, VoteRequest) and e.message.pre_vote for e in out)
    assert nodes[2].store.read() == ElectionState(0)  # a pre-vote changes nothing
    deliver(nodes, out, 10_000)
    assert nodes[1].role is Role.LEADER
    assert nodes[1].store.read() == ElectionState(1, voted_id=1, leader_id=1)
    first = nodes[1].log.entry_at(0)
    assert first is not None and first.control and first.epoch == 1
    assert {nodes[2].leader_id, nodes[3].leader_id} == {1}


def test_a_single_voter_leads_at_once() -> None:
    node = make_node(1, voters=[1])
    node.poll(0)
    assert node.role is Role.LEADER and node.epoch == 1
    assert node.append(0, [b"x"]) == 1
    node.poll(1)
    assert node.high_watermark == 2
    assert [e.payload for e in node.take_committed() if not getattr(e, "control", True)] == [b"x"]


def test_a_voter_with_a_live_leader_refuses_pre_votes_and_names_the_leader() -> None:
    """A returning, isolated voter does not disrupt a healthy quorum: its pre-vote is
    refused, it learns who leads, and nobody's epoch moves."""
    nodes = {n: make_node(n, seed=n) for n in (1, 2, 3)}
    for node in nodes.values():
        node.poll(0)
    deliver(nodes, nodes[1].poll(10_000), 10_000)  # 1 leads epoch 1
    settle(nodes, 10_000, 200)  # 2 and 3 have fetched from it
    epoch = nodes[2].epoch
    request = Envelope(3, 2, 99, VoteRequest(epoch + 1, 3, 0, 0, pre_vote=True))
    (response,) = [e.message for e in nodes[2].handle(10_200, request)]
    assert isinstance(response, VoteResponse)
    assert not response.vote_granted
    assert response.leader_id == 1
    assert nodes[2].epoch == epoch and nodes[2].leader_id == 1


def test_a_pre_vote_from_a_later_epoch_teaches_that_epoch() -> None:
    """A voter that stood and lost is in a later epoch than the healthy quorum; it can only
    rejoin if the others learn its epoch from its pre-votes (sim seed 14903)."""
    nodes = {n: make_node(n, seed=n) for n in (1, 2, 3)}
    for node in nodes.values():
        node.poll(0)
    deliver(nodes, nodes[1].poll(10_000), 10_000)  # 1 leads epoch 1
    settle(nodes, 10_000, 200)
    request = Envelope(3, 2, 77, VoteRequest(nodes[2].epoch + 2, 3, 0, 0, pre_vote=True))
    nodes[2].handle(10_200, request)
    assert nodes[2].epoch == 2 and nodes[2].role is Role.UNATTACHED
    assert nodes[2].store.read().leader_epoch == 2


def test_followers_of_a_leader_found_gone_elect_another_without_waiting_out_the_fetch_timeout() -> (
    None
):
    """A killed leader's connections are refused or reset: its followers stand after the
    election jitter only, and grant each other's pre-votes although the fetch timeout
    has not run out, so a new leader is elected well within ``fetch.timeout.ms``."""
    nodes = {n: make_node(n, seed=n) for n in (1, 2, 3)}
    for node in nodes.values():
        node.poll(0)
    deliver(nodes, nodes[1].poll(10_000), 10_000)  # 1 leads epoch 1
    now = settle(nodes, 10_000, 200)  # 2 and 3 have fetched from it
    del nodes[1]  # killed
    for node in nodes.values():
        node.voter_unreachable(now, 1)
        assert not node.in_contact_with_majority(now)
    elected_by = now + CONFIG.election_timeout_ms // 2 + 20
    assert elected_by < now + CONFIG.fetch_timeout_ms
    settle(nodes, now, elected_by - now)
    assert {node.leader_id for node in nodes.values()} in ({2}, {3})


@pytest.mark.parametrize("seed", range(40))
def test_the_survivors_of_a_leader_found_gone_stand_in_turn_and_do_not_split_the_vote(
    seed: int,
) -> None:
    """Both followers find the killed leader gone at the same moment. Standing after a
    random jitter alone, they stood together now and then, split the vote and waited out
    another election; by id, the lower stands first and wins the next epoch, and the
    other follows it before its own turn comes."""
    nodes = {n: make_node(n, seed=seed * 10 + n) for n in (1, 2, 3)}
    for node in nodes.values():
        node.poll(0)
    deliver(nodes, nodes[1].poll(10_000), 10_000)  # 1 leads epoch 1
    now = settle(nodes, 10_000, 200)
    epoch = nodes[2].epoch
    del nodes[1]  # killed
    for node in nodes.values():
        node.voter_unreachable(now, 1)
    settle(nodes, now, CONFIG.election_timeout_ms // 2)
    assert {(node.leader_id, node.epoch) for node in nodes.values()} == {(2, epoch + 1)}


def test_only_the_leader_found_gone_ends_a_followers_wait() -> None:
    """Another voter found gone, or a paused leader (its connections stay open, nothing
    is found), leaves the follower waiting for its leader: it refuses pre-votes still."""
    nodes = {n: make_node(n, seed=n) for n in (1, 2, 3)}
    for node in nodes.values():
        node.poll(0)
    deliver(nodes, nodes[1].poll(10_000), 10_000)
    now = settle(nodes, 10_000, 200)
    nodes[2].voter_unreachable(now, 3)
    assert nodes[2].in_contact_with_majority(now)
    request = Envelope(3, 2, 99, VoteRequest(nodes[2].epoch + 1, 3, 0, 0, pre_vote=True))
    (response,) = [e.message for e in nodes[2].handle(now, request)]
    assert isinstance(response, VoteResponse) and not response.vote_granted
