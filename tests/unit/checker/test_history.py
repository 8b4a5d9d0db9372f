"""The history checker finds each anomaly in a hand-made history, and nothing in a clean one."""

from __future__ import annotations

import pytest

from kafkalite.checker import Ack, Commit, Poll, Send, check

pytestmark = pytest.mark.unit

P = ("t", 0)


def clean_log(n: int) -> dict[tuple[str, int], dict[int, bytes]]:
    return {P: {i: b"v%d" % i for i in range(n)}}


def test_clean_history_is_valid() -> None:
    acks = [Ack(P, b"v%d" % i, i) for i in range(5)]
    polls = [Poll("c1", P, ((0, b"v0"), (1, b"v1"))), Poll("c1", P, ((2, b"v2"), (3, b"v3")))]
    commits = [Commit("g", P, 2), Commit("g", P, 4)]
    report = check(acks, polls, commits, clean_log(5))
    assert report.valid, report.summary()
    assert report.acked == 5 and report.read == 4


def test_lost_write() -> None:
    report = check([Ack(P, b"gone", 7)], [], [], clean_log(3))
    assert report.counts["lost"] == 1


def test_duplicate_in_the_final_log() -> None:
    log = {P: {0: b"a", 1: b"b", 2: b"a"}}
    assert check([], [], [], log).counts["duplicate"] == 1


def test_inconsistent_offsets_and_vanished_reads() -> None:
    polls = [Poll("c1", P, ((0, b"x"),)), Poll("c2", P, ((0, b"v0"),))]
    report = check([], polls, [], clean_log(1))
    assert report.counts["inconsistent_offset"] == 1
    assert report.counts["vanished_read"] == 1  # c1 saw x, which the final log does not have


def test_ack_mismatch() -> None:
    report = check([Ack(P, b"v1", 0)], [], [], clean_log(2))
    assert report.counts["ack_mismatch"] == 1
    assert report.counts["lost"] == 0


def test_an_ack_without_an_offset_only_has_to_be_in_the_log() -> None:
    assert check([Ack(P, b"v1", None)], [], [], clean_log(2)).valid
    assert check([Ack(P, b"gone", None)], [], [], clean_log(2)).counts["lost"] == 1


def test_nonmonotonic_and_skipping_polls() -> None:
    polls = [
        Poll("c1", P, ((0, b"v0"), (1, b"v1"))),
        Poll("c1", P, ((1, b"v1"),)),  # went back without a seek
        Poll("c1", P, ((4, b"v4"),)),  # skipped 2 and 3
        Poll("c1", P, ((0, b"v0"), (1, b"v1")), seek=True),  # legal after a seek
    ]
    report = check([], polls, [], clean_log(5))
    assert report.counts["nonmonotonic_poll"] == 1
    assert report.counts["skipped_offset"] == 1


def test_gaps_absent_from_the_final_log_are_not_skips() -> None:
    log = {P: {0: b"a", 5: b"b"}}  # e.g. compaction or control records
    report = check([], [Poll("c", P, ((0, b"a"), (5, b"b")))], [], log)
    assert report.valid, report.summary()


def test_commit_regression() -> None:
    commits = [Commit("g", P, 5), Commit("g", P, 3), Commit("h", P, 1)]
    assert check([], [], commits, clean_log(1)).counts["commit_regression"] == 1


def test_a_producers_records_in_another_order_than_sent_are_reordered():
    sends = [Send("p", P, v) for v in (b"a", b"b", b"c")]
    log = {P: {0: b"a", 1: b"c", 2: b"b"}}  # b's batch failed and was retried behind c
    report = check([], [], [], log, sends)
    assert report.counts["reordered"] == 1
    assert "b'c' at 1 was sent after b'b' at 2" in report.anomalies["reordered"][0]


def test_send_order_kept_and_other_producers_interleaved_is_not_reordered():
    sends = [Send("p", P, b"a"), Send("q", P, b"x"), Send("p", P, b"b"), Send("q", P, b"y")]
    log = {P: {0: b"x", 1: b"a", 2: b"y", 3: b"b", 4: b"a"}}  # q first; a duplicated later
    assert check([], [], [], log, sends).counts["reordered"] == 0
