"""A checker for exactly-once consume-transform-produce pipelines, after Jepsen.

A pipeline reads an input topic, writes ``transform(record)`` to an output topic and
commits its consumed offsets in the same transaction. What a run must show:

- ``lost_transform``: an input record the pipeline consumed (its group's offsets passed
  it) whose transform is not in the committed output;
- ``duplicate_output``: the transform of one input record stands more than once in the
  committed output (processed twice: a zombie, or a retry outside the transaction);
- ``phantom_output``: a committed output record that is the transform of no input;
- ``aborted_read``: a read_committed consumer read a record that is not committed: one of
  an aborted transaction (or of one still open then) - Jepsen's "aborted read";
- ``commit_regression``: the group's committed offset for a partition went backwards;

plus what ``history`` checks of any reader (reads going backwards, skipping committed
records, two values at one offset, a read the final log no longer has), applied to the
read_committed readers against the committed output. A value twice in the output is judged
against the input (``duplicate_output``), not by itself: an input that holds a record twice
(an idempotent producer's duplicate upstream) rightly yields its transform twice.
"Committed output" is a read of the output topic with read_committed after the run; "all
output" is the same with read_uncommitted, which is how an aborted record is told from a
vanished one.

Pure logic, like ``history``: tests feed it hand-made histories with each anomaly.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from kafkalite.checker.history import (
    ANOMALIES,
    Commit,
    Partition,
    Poll,
    Report,
    check_commits,
    check_reads,
)

EXACTLY_ONCE_ANOMALIES = (
    "lost_transform",
    "duplicate_output",
    "phantom_output",
    "aborted_read",
)
Log = dict[Partition, dict[int, bytes]]


def check_exactly_once(
    consumed_inputs: Log,
    committed_output: Log,
    all_output: Log,
    committed_reads: list[Poll],
    offset_commits: list[Commit],
    transform: Callable[[bytes], bytes],
) -> Report:
    """``consumed_inputs``: the input records below the group's final committed offsets.
    ``committed_reads``: what read_committed consumers of the output polled, in order.
    ``offset_commits``: the offsets each committed transaction committed, in order."""
    report = Report(anomalies={name: [] for name in (*ANOMALIES, *EXACTLY_ONCE_ANOMALIES)})
    report.acked = sum(len(records) for records in consumed_inputs.values())
    report.read = sum(len(p.records) for p in committed_reads)
    _check_outputs(consumed_inputs, committed_output, transform, report)
    unaborted = _check_aborted_reads(committed_reads, committed_output, all_output, report)
    check_reads(unaborted, committed_output, report)
    check_commits(offset_commits, report)
    return report


def _check_outputs(
    inputs: Log, committed_output: Log, transform: Callable[[bytes], bytes], report: Report
) -> None:
    expected = Counter(transform(v) for records in inputs.values() for v in records.values())
    produced = Counter(v for records in committed_output.values() for v in records.values())
    for value, times in sorted(produced.items()):
        if value not in expected:
            report.add("phantom_output", f"{value!r} is the transform of no consumed input")
        elif times > expected[value]:
            report.add("duplicate_output", f"{value!r} stands {times} times in the output")
    for value, times in sorted(expected.items()):
        if produced[value] < times:
            report.add("lost_transform", f"{value!r} was consumed but is not in the output")


def _check_aborted_reads(
    reads: list[Poll], committed_output: Log, all_output: Log, report: Report
) -> list[Poll]:
    """Report reads of records that are in the log but not committed; return the polls
    without them, for the generic checks."""
    kept: list[Poll] = []
    for poll in reads:
        committed = committed_output.get(poll.partition, {})
        everything = all_output.get(poll.partition, {})
        records = []
        for offset, value in poll.records:
            if committed.get(offset) != value and everything.get(offset) == value:
                report.add(
                    "aborted_read",
                    f"{poll.consumer} read {value!r} at {poll.partition}@{offset}, "
                    "which is not committed",
                )
            else:
                records.append((offset, value))
        kept.append(Poll(poll.consumer, poll.partition, tuple(records), poll.seek))
    return kept
