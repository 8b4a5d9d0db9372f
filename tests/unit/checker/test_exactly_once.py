"""The exactly-once checker finds each anomaly in a hand-made history of a
consume-transform-produce pipeline, and nothing in a clean one."""

from __future__ import annotations

import pytest

from kafkalite.checker import Commit, Poll, check_exactly_once

pytestmark = pytest.mark.unit

IN, OUT = ("in", 0), ("out", 0)


def transform(value: bytes) -> bytes:
    return b"T:" + value


def inputs(n: int) -> dict:
    return {IN: {i: b"v%d" % i for i in range(n)}}


def output(*values: bytes, start: int = 0) -> dict:
    """Committed output records at consecutive offsets (markers in between omitted)."""
    return {OUT: {start + i: v for i, v in enumerate(values)}}


CLEAN_COMMITTED = {OUT: {0: b"T:v0", 1: b"T:v1", 3: b"T:v2"}}  # 2 is a commit marker
CLEAN_ALL = {OUT: {0: b"T:v0", 1: b"T:v1", 3: b"T:v2", 5: b"T:v2-aborted-copy"}}


def run(**changes: object):
    history = {
        "consumed_inputs": inputs(3),
        "committed_output": CLEAN_COMMITTED,
        "all_output": CLEAN_ALL,
        "committed_reads": [
            Poll("r1", OUT, ((0, b"T:v0"), (1, b"T:v1"))),
            Poll("r1", OUT, ((3, b"T:v2"),)),
        ],
        "offset_commits": [Commit("pipeline", IN, 2), Commit("pipeline", IN, 3)],
        "transform": transform,
    }
    history.update(changes)
    return check_exactly_once(**history)  # type: ignore[arg-type]


def test_a_clean_pipeline_is_valid() -> None:
    report = run()
    assert report.valid, report.summary()
    assert (report.acked, report.read) == (3, 3)


def test_a_consumed_input_missing_from_the_output_is_lost() -> None:
    report = run(committed_output={OUT: {0: b"T:v0", 1: b"T:v1"}})
    assert report.counts["lost_transform"] == 1


def test_an_input_processed_twice_is_a_duplicate() -> None:
    twice = {OUT: {**CLEAN_COMMITTED[OUT], 7: b"T:v1"}}
    report = run(committed_output=twice, all_output={OUT: {**CLEAN_ALL[OUT], 7: b"T:v1"}})
    assert report.counts["duplicate_output"] == 1


def test_an_output_of_no_input_is_a_phantom() -> None:
    extra = {OUT: {**CLEAN_COMMITTED[OUT], 7: b"T:nobody"}}
    report = run(committed_output=extra)
    assert report.counts["phantom_output"] == 1


def test_reading_an_aborted_record_under_read_committed() -> None:
    reads = [Poll("r1", OUT, ((0, b"T:v0"), (1, b"T:v1"), (3, b"T:v2"), (5, b"T:v2-aborted-copy")))]
    report = run(committed_reads=reads)
    assert report.counts["aborted_read"] == 1
    assert report.counts["vanished_read"] == 0  # named once, as what it is


def test_committed_offsets_going_back() -> None:
    report = run(offset_commits=[Commit("pipeline", IN, 3), Commit("pipeline", IN, 2)])
    assert report.counts["commit_regression"] == 1


def test_a_read_committed_reader_skipping_a_committed_record() -> None:
    reads = [Poll("r1", OUT, ((0, b"T:v0"),)), Poll("r1", OUT, ((3, b"T:v2"),))]
    report = run(committed_reads=reads)
    assert report.counts["skipped_offset"] == 1


def test_an_input_twice_rightly_yields_its_transform_twice() -> None:
    """A duplicate upstream is the input's anomaly, not the pipeline's."""
    twice_in = {IN: {0: b"v0", 1: b"v1", 2: b"v2", 3: b"v2"}}
    twice_out = {OUT: {**CLEAN_COMMITTED[OUT], 4: b"T:v2"}}
    report = run(consumed_inputs=twice_in, committed_output=twice_out, all_output=twice_out)
    assert report.valid, report.summary()
