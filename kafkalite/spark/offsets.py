"""Offset math of the Spark source: what each micro-batch reads, as plain functions.

A source offset is one log offset per topic partition, the next offset to read. Spark
keeps it in the checkpoint (``offsets/N``) as JSON in the same shape as Spark's own Kafka
source: ``{"orders": {"0": 300, "1": 280}}``. A micro-batch reads, for every partition,
the records in ``[start, end)``; restarting replays a planned batch from the same two
offsets, so everything here is deterministic: the same inputs give the same ranges.

Data loss is named, never silent: a partition that vanished, an offset that went back
(the topic was re-created), or a start before the log start offset (retention deleted
the records) each become one message that ``failOnDataLoss`` turns into an error.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

TopicPartition = tuple[str, int]
PartitionOffsets = dict[TopicPartition, int]

# Spark's sentinels in offset JSON (and Kafka's ListOffsets timestamps).
EARLIEST = -2
LATEST = -1
# Where a partition that appears during a query starts: its first record (as in Spark).
NEW_PARTITION_START = 0
# Up to this many records, ranges of several partitions are read by one Spark task.
TASK_RECORDS = 10_000

DATA_LOSS_HINT = (
    "Some data may have been lost because it is not available in Kafka any more: it was "
    "deleted by retention, or the topic was deleted or re-created before the query read "
    "it. If you do not want the query to fail in such cases, set the source option "
    '"failOnDataLoss" to "false".'
)


class DataLossError(RuntimeError):
    """Records the query should have read are gone (``failOnDataLoss=true``)."""


@dataclass(frozen=True, slots=True)
class OffsetRange:
    """The records ``[start, end)`` of one topic partition (a Spark task reads one or
    more: :func:`task_ranges`)."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def size(self) -> int:
        return self.end - self.start


def to_json(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """Spark's offset JSON (keys must be strings), topics and partitions in order."""
    result: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        result.setdefault(topic, {})[str(partition)] = offset
    return result


def from_json(offsets: Mapping[str, Any]) -> PartitionOffsets:
    return {
        (topic, int(partition)): int(offset)
        for topic, per_partition in offsets.items()
        for partition, offset in per_partition.items()
    }


def clamp_to_log(
    wanted: Mapping[TopicPartition, int],
    earliest: Mapping[TopicPartition, int],
    latest: Mapping[TopicPartition, int],
) -> tuple[PartitionOffsets, list[str]]:
    """Resolve EARLIEST/LATEST and move offsets outside ``[earliest, latest]`` into it;
    each move is a data-loss message (the caller fails or warns, per failOnDataLoss)."""
    resolved: PartitionOffsets = {}
    losses: list[str] = []
    for tp, offset in sorted(wanted.items()):
        low, high = earliest[tp], latest[tp]
        if offset == EARLIEST:
            resolved[tp] = low
        elif offset == LATEST:
            resolved[tp] = high
        elif offset < low:
            losses.append(f"{tp[0]}-{tp[1]}: offset {offset} is before the log start {low}")
            resolved[tp] = low
        elif offset > high:
            losses.append(f"{tp[0]}-{tp[1]}: offset {offset} is after the log end {high}")
            resolved[tp] = high
        else:
            resolved[tp] = offset
    return resolved, losses


def next_end(
    start: Mapping[TopicPartition, int], latest: Mapping[TopicPartition, int]
) -> tuple[PartitionOffsets, list[str]]:
    """The end of the next micro-batch if it read everything available. Partitions new
    since ``start`` are included (read from their first record); partitions that vanished
    or whose end went back are data loss (their end becomes the log's, so reading goes on
    from there when the loss is tolerated)."""
    losses = [
        f"{tp[0]}-{tp[1]} is gone (topic deleted?); offsets after {offset} were not read"
        for tp, offset in sorted(start.items())
        if tp not in latest
    ]
    for tp, end in sorted(latest.items()):
        if tp in start and end < start[tp]:
            losses.append(
                f"{tp[0]}-{tp[1]}: the log end went back from {start[tp]} to {end} "
                "(topic re-created, or records truncated by an unclean election?)"
            )
    return dict(latest), losses


def rate_limit(
    start: Mapping[TopicPartition, int], end: Mapping[TopicPartition, int], max_records: int
) -> PartitionOffsets:
    """Cut ``end`` so that the batch reads at most ``max_records`` offsets in all
    (``maxOffsetsPerTrigger``), shared among partitions in proportion to their backlog.

    Spark floors (or, for tiny shares, ceils) each share and so may exceed the limit by a
    few records; here the shares are floored and the remainder goes to the largest
    fractions, so a batch never exceeds the limit and still reads exactly it when it can.
    """
    backlog = {
        tp: e - start.get(tp, NEW_PARTITION_START)
        for tp, e in end.items()
        if e > start.get(tp, NEW_PARTITION_START)
    }
    total = sum(backlog.values())
    if total <= max_records:
        return dict(end)
    shares = {tp: max_records * size / total for tp, size in backlog.items()}
    taken = {tp: int(share) for tp, share in shares.items()}
    by_fraction = sorted(backlog, key=lambda tp: (-(shares[tp] - taken[tp]), tp))
    for tp in by_fraction[: max_records - sum(taken.values())]:
        taken[tp] += 1
    return {
        tp: (start.get(tp, NEW_PARTITION_START) + taken[tp]) if tp in backlog else e
        for tp, e in end.items()
    }


def plan_ranges(
    start: Mapping[TopicPartition, int], end: Mapping[TopicPartition, int]
) -> list[OffsetRange]:
    """One range per partition with records to read, in topic/partition order."""
    ranges = []
    for (topic, partition), e in sorted(end.items()):
        s = start.get((topic, partition), NEW_PARTITION_START)
        if e > s:
            ranges.append(OffsetRange(topic, partition, s, e))
    return ranges


def split_ranges(ranges: Iterable[OffsetRange], min_partitions: int | None) -> list[OffsetRange]:
    """``minPartitions``: when there are fewer ranges than asked for, cut big ranges into
    near-equal pieces, each partition getting pieces in proportion to its size (Spark's
    KafkaOffsetRangeCalculator)."""
    ranges = list(ranges)
    if min_partitions is None or len(ranges) >= min_partitions:
        return ranges
    total = sum(r.size for r in ranges)
    pieces: list[OffsetRange] = []
    for r in ranges:
        parts = min(max(round(r.size / total * min_partitions), 1), r.size)
        bounds = [r.start + r.size * i // parts for i in range(parts + 1)]
        pieces.extend(
            OffsetRange(r.topic, r.partition, lo, hi) for lo, hi in itertools.pairwise(bounds)
        )
    return pieces


def task_ranges(
    ranges: Iterable[OffsetRange], min_partitions: int | None
) -> list[list[OffsetRange]]:
    """The ranges each Spark task reads. Spark's Kafka source runs one task per partition
    (and splits big ranges for ``minPartitions``, which is kept as it is). Most of a small
    micro-batch's time, though, is per task: a Kafka consumer, and in the exactly-once
    sink a transaction with its batch record. So without ``minPartitions``, consecutive
    ranges are packed into one task while together they hold at most ``TASK_RECORDS``
    records (a bigger range is a task of its own): a lab's micro-batch of a few hundred
    records is one task, one transaction, one wave on ``local[2]``, and a big batch read
    still runs a task per partition in parallel. Deterministic, like everything here: a
    replayed batch gets the same tasks, so each task's transactional id writes the same
    rows again (and is recognised)."""
    ranges = list(ranges)
    if min_partitions is not None:
        return [[r] for r in split_ranges(ranges, min_partitions)]
    tasks: list[list[OffsetRange]] = []
    size = 0
    for r in ranges:
        if tasks and size + r.size <= TASK_RECORDS:
            tasks[-1].append(r)
            size += r.size
        else:
            tasks.append([r])
            size = r.size
    return tasks
