"""Which broker Metadata and DescribeCluster name as the controller, and which they list.

Admin clients send CreateTopics and the like to that broker and nowhere else, so it must
be one that serves: the quorum leader while it is live and this broker is in contact with
it; else a live broker, which forwards to the controller (as KRaft brokers do). A broker
this one found gone is not listed either, until it is fenced, even during an election.
"""

from __future__ import annotations

import pytest

from kafkalite.broker.control_plane_api import QuorumView
from kafkalite.broker.data_plane.cluster_identity import ClusterIdentity, controller_for_clients
from kafkalite.metadata.image import MetadataImage
from kafkalite.metadata.records import RegisterBrokerRecord, UnfenceBrokerRecord

pytestmark = pytest.mark.unit


def view(leader: int, reachable: bool, gone: frozenset[int] = frozenset()) -> QuorumView:
    return QuorumView(leader_id=leader, leader_reachable=reachable, gone_voters=gone)


def test_a_live_leader_in_contact_is_named() -> None:
    assert controller_for_clients(view(1, True), {1, 2, 3}, serving=2) == 1


def test_a_leader_that_stopped_answering_is_not_named_before_it_is_fenced() -> None:
    """Killed: still unfenced (no controller has fenced it yet), but its connection is
    refused; the broker answering is named instead, and forwards."""
    assert controller_for_clients(view(1, False), {1, 2, 3}, serving=2) == 2


def test_a_fenced_leader_is_not_named() -> None:
    assert controller_for_clients(view(1, True), {2, 3}, serving=3) == 3


def test_during_an_election_a_live_broker_is_named_not_minus_one() -> None:
    assert controller_for_clients(view(-1, False), {1, 2, 3}, serving=3) == 3


def test_a_fenced_broker_answering_names_a_live_one() -> None:
    assert controller_for_clients(view(-1, False), {1, 3}, serving=2) == 1


def test_with_no_live_broker_the_answering_broker_is_named() -> None:
    assert controller_for_clients(view(-1, False), set(), serving=2) == 2


def three_live_brokers() -> MetadataImage:
    image = MetadataImage()
    for b in (1, 2, 3):
        image.replay(RegisterBrokerRecord(b, "127.0.0.1", 9090 + b, None, f"i{b}", 5), b)
        image.replay(UnfenceBrokerRecord(b, 5), 10 + b)
    return image


def test_a_gone_leader_is_neither_named_nor_listed_by_the_others() -> None:
    image = three_live_brokers()
    survivor = ClusterIdentity("c", 2, image, lambda: view(1, False, frozenset({1})))
    assert survivor.controller_id() == 2
    assert [b.broker_id for b in survivor.brokers_for_clients()] == [2, 3]
    follower = ClusterIdentity("c", 2, image, lambda: view(1, True))
    assert follower.controller_id() == 1
    assert [b.broker_id for b in follower.brokers_for_clients()] == [1, 2, 3]


def test_a_gone_leader_stays_unlisted_while_the_others_elect_a_new_one() -> None:
    """Seen before: from the election's start until the new controller fenced the killed
    leader (about 1.3 s), both survivors listed it again, and kafka-python's admin client
    picked it (ECONNREFUSED)."""
    image = three_live_brokers()
    electing = ClusterIdentity("c", 2, image, lambda: view(-1, False, frozenset({1})))
    assert electing.controller_id() == 2
    assert [b.broker_id for b in electing.brokers_for_clients()] == [2, 3]
    new_leader = ClusterIdentity("c", 3, image, lambda: view(3, True, frozenset({1})))
    assert new_leader.controller_id() == 3
    assert [b.broker_id for b in new_leader.brokers_for_clients()] == [2, 3]


def test_a_broker_never_leaves_itself_out() -> None:
    image = three_live_brokers()
    odd = ClusterIdentity("c", 2, image, lambda: view(-1, False, frozenset({2})))
    assert [b.broker_id for b in odd.brokers_for_clients()] == [1, 2, 3]
