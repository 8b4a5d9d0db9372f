"""A history's bookkeeping: what the checker is given, in what order."""

from __future__ import annotations

import pytest

from kafkalite.checker import Ack, Commit, Poll, Send
from kafkalite.lab.history import History, Op, OpKind, combine

pytestmark = pytest.mark.unit


def run() -> History:
    h = History()
    h.record(Op(10.0, OpKind.SEND, "p1", "orders", None, b"a"))
    h.record(Op(10.1, OpKind.SEND, "p1", "orders", None, b"b"))
    h.record(Op(10.2, OpKind.ACK, "p1", "orders", 1, b"b", offset=0, latency_ms=100))
    h.record(Op(10.3, OpKind.ERROR, "p1", "orders", None, b"a", latency_ms=300, error="Timeout"))
    h.record(Op(10.4, OpKind.READ, "c1", "orders", 1, b"b", offset=0, seek=True))
    h.record(Op(10.5, OpKind.COMMIT, "g", "orders", 1, None, offset=1))
    return h


def test_acks_polls_and_commits_are_the_checkers_records():
    h = run()
    assert h.acks() == [Ack(("orders", 1), b"b", 0)]
    assert h.polls() == [Poll("c1", ("orders", 1), ((0, b"b"),), seek=True)]
    assert h.commits() == [Commit("g", ("orders", 1), 1)]


def test_send_order_takes_the_partition_from_the_ack_and_skips_unacknowledged_sends():
    assert run().sends() == [Send("p1", ("orders", 1), b"b")]


def test_span_partitions_and_summary():
    h = run()
    assert h.span == (10.0, 10.5)
    assert h.partitions() == {("orders", 1)}
    assert h.summary() == {"send": 2, "ack": 1, "error": 1, "read": 1, "commit": 1}
    assert History().span is None


def test_combine_merges_in_time_order():
    a, b = History(), History()
    a.record(Op(2.0, OpKind.SEND, "p1", "t", 0, b"x"))
    b.record(Op(1.0, OpKind.SEND, "p2", "t", 0, b"y"))
    assert [op.client for op in combine(a, b)] == ["p2", "p1"]
