"""The checker's verdict as a table naming each anomaly, for the log and for a
consumer's output."""

from __future__ import annotations

import pytest

from kafkalite.checker import Ack, Poll, Send, check
from kafkalite.lab.anomalies import lost_values, output_as_log, result_of

pytestmark = pytest.mark.unit

P = ("orders", 0)


def test_each_anomaly_is_a_row_with_its_plain_name_and_meaning():
    acks = [Ack(P, b"a", 0), Ack(P, b"gone", 1), Ack(P, b"b", 0)]
    log = {P: {0: b"a", 1: b"b", 2: b"b"}}
    result = result_of(check(acks, [], [], log))
    assert sorted(result.table["anomaly"]) == ["ack mismatch", "duplicated", "lost"]
    assert not result.valid
    assert result.counts["lost"] == 1 and result.counts["duplicated"] == 1
    assert "not in the final log" in result.table.set_index("anomaly").loc["lost", "meaning"]
    assert result.verdict().startswith("3 acknowledged: 1 lost")
    assert "<table" in result._repr_html_()


def test_a_clean_run_says_so():
    result = result_of(check([Ack(P, b"a", 0)], [], [], {P: {0: b"a"}}))
    assert result.valid and result.table.empty
    assert repr(result) == "1 acknowledged: no anomaly"


def test_reads_are_named_when_the_history_has_some():
    reads = [Poll("reader", P, ((0, b"a"),))]
    result = result_of(check([Ack(P, b"a", 0)], reads, [], {P: {0: b"a"}}))
    assert result.verdict() == "1 acknowledged, 1 read: no anomaly"


def test_a_consumers_output_missing_a_record_lost_it_and_repeating_one_duplicated_it():
    acks = [Ack(P, b"a", 0), Ack(P, b"b", 1), Ack(("orders", 1), b"c", 0)]
    output = [b"a", b"a", b"c"]  # b never processed, a processed twice
    acks_without_offsets, log = output_as_log(acks, output)
    assert all(a.offset is None for a in acks_without_offsets)
    result = result_of(check(acks_without_offsets, [], [], log), of_output=True)
    assert result.counts["lost"] == 1 and result.counts["duplicated"] == 1
    assert result.counts["ack mismatch"] == 0
    meaning = result.table.set_index("anomaly")["meaning"]
    assert meaning["duplicated"] == "the consumer processed it twice"


def test_a_consumers_output_in_another_order_than_sent_is_reordered():
    acks = [Ack(P, b"a", 0), Ack(P, b"b", 1)]
    sends = [Send("p", P, b"a"), Send("p", P, b"b")]
    acks_without_offsets, log = output_as_log(acks, [b"b", b"a"])
    result = result_of(check(acks_without_offsets, [], [], log, sends))
    assert result.counts["reordered"] == 1 and result.counts["lost"] == 0


def test_lost_values_are_the_acknowledged_values_kept_nowhere():
    acks = [Ack(P, b"a", 0), Ack(P, b"b", 1), Ack(("orders", 1), b"c", 0)]
    log = {P: {0: b"a"}, ("orders", 1): {0: b"b"}}  # b moved partitions: kept, not lost
    assert lost_values(acks, log) == {b"c"}
