"""The ``kafkalite`` source: ``spark.read`` and ``spark.readStream`` over Kafka-Lite topics.

The driver plans (partitions and offsets, asked of the cluster); each Spark task reads one
offset range (:mod:`kafkalite.spark.partition_reader`). The stream's offsets are the next
offset to read per partition, kept by Spark in the checkpoint, so a restarted query goes
on exactly where the last committed micro-batch ended, and replays a planned batch from
the very same offsets.

Readers are pickled into other Python processes (Spark plans in one, reads in others):
they hold options only, and the admin client they ask with is made on first use and left
out of the pickled state.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from kafkalite.spark.lookup import ClusterLookup
from kafkalite.spark.offsets import (
    DATA_LOSS_HINT,
    EARLIEST,
    LATEST,
    DataLossError,
    OffsetRange,
    PartitionOffsets,
    TopicPartition,
    clamp_to_log,
    from_json,
    next_end,
    plan_ranges,
    rate_limit,
    task_ranges,
    to_json,
)
from kafkalite.spark.options import OffsetSpec, OptionError, SourceOptions
from kafkalite.spark.partition_reader import ReadSettings, read_ranges

log = logging.getLogger("kafkalite.spark")


@dataclass(frozen=True)
class KafkaInputPartition(InputPartition):
    """One task's input: ranges of topic partitions (one, unless small ranges were packed
    together: :func:`kafkalite.spark.offsets.task_ranges`) and how to read them."""

    settings: ReadSettings
    ranges: tuple[OffsetRange, ...]


class _Planner:
    """What the driver asks the cluster, shared by the batch and the stream reader."""

    def __init__(self, options: SourceOptions) -> None:
        self.options = options
        self._lookup: ClusterLookup | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"options": self.options, "_lookup": None}

    @property
    def lookup(self) -> ClusterLookup:
        if self._lookup is None:
            self._lookup = ClusterLookup(self.options.connection, self.options.isolation)
        return self._lookup

    @property
    def settings(self) -> ReadSettings:
        o = self.options
        return ReadSettings(o.connection, o.isolation, o.include_headers, o.fail_on_data_loss)

    def report(self, losses: list[str]) -> None:
        if not losses:
            return
        if self.options.fail_on_data_loss:
            raise DataLossError(f"kafkalite: {'; '.join(losses)}. {DATA_LOSS_HINT}")
        for loss in losses:
            log.warning("kafkalite: data loss tolerated (failOnDataLoss=false): %s", loss)

    def resolve(self, spec: OffsetSpec, partitions: Sequence[TopicPartition]) -> PartitionOffsets:
        """Concrete offsets for ``spec`` on ``partitions`` (LATEST may remain for an ending
        timestamp no record reaches; ``clamp_to_log`` turns it into the log end)."""
        if spec.kind == "offsets":
            missing = [f"{t}-{p}" for t, p in partitions if (t, p) not in spec.offsets]
            if missing:
                raise OptionError(
                    "kafkalite: offsets given as JSON must name every partition read "
                    f"(use -2 for earliest, -1 for latest); missing: {', '.join(missing)}"
                )
        if spec.kind in ("earliest", "latest", "offsets"):
            return self._clamp({tp: spec.for_partition(tp) for tp in partitions})
        stamps = (
            dict.fromkeys(partitions, spec.timestamp_ms)
            if spec.kind == "timestamp"
            else {tp: spec.offsets[tp] for tp in partitions if tp in spec.offsets}
        )
        if spec.kind == "timestamps" and len(stamps) < len(partitions):
            absent = sorted(f"{t}-{n}" for t, n in set(partitions) - set(stamps))
            raise OptionError(f"kafkalite: no timestamp given for {', '.join(absent)}")
        found = self.lookup.offsets_for_times(stamps)
        return self._clamp({tp: self._no_record(tp, stamps[tp], o) for tp, o in found.items()})

    def _no_record(self, tp: TopicPartition, stamp: int, offset: int) -> int:
        if offset >= 0:
            return offset
        if self.options.timestamp_strategy == "error":
            raise LookupError(
                f"kafkalite: {tp[0]}-{tp[1]} has no record at or after timestamp {stamp}; set "
                "startingOffsetsByTimestampStrategy=latest to start at the log end instead"
            )
        return LATEST

    def _clamp(self, wanted: Mapping[TopicPartition, int]) -> PartitionOffsets:
        earliest = self.lookup.offsets(wanted, EARLIEST)
        latest = self.lookup.offsets(wanted, LATEST)
        resolved, losses = clamp_to_log(wanted, earliest, latest)
        self.report(losses)
        return resolved

    def input_partitions(
        self, start: Mapping[TopicPartition, int], end: Mapping[TopicPartition, int]
    ) -> list[KafkaInputPartition]:
        tasks = task_ranges(plan_ranges(start, end), self.options.min_partitions)
        return [KafkaInputPartition(self.settings, tuple(ranges)) for ranges in tasks]


def read_partition(partition: InputPartition) -> Iterator[pa.RecordBatch]:
    assert isinstance(partition, KafkaInputPartition)
    return read_ranges(partition.settings, partition.ranges)


class KafkaLiteBatchReader(DataSourceReader):
    """``spark.read.format("kafkalite")``: from ``startingOffsets`` (earliest) to
    ``endingOffsets`` (latest), both fixed when the query is planned."""

    def __init__(self, options: SourceOptions) -> None:
        self.planner = _Planner(options)

    def partitions(self) -> Sequence[InputPartition]:
        p = self.planner
        tps = p.lookup.partitions(p.options.subscription, require_topics=True)
        start = p.resolve(p.options.starting, tps)
        end = p.resolve(p.options.ending, tps)
        backwards = [
            f"{t}-{n}: {start[t, n]} > {end[t, n]}" for t, n in tps if start[t, n] > end[t, n]
        ]
        if backwards:
            raise OptionError(f"kafkalite: starting offsets after ending offsets: {backwards}")
        return p.input_partitions(start, end)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return read_partition(partition)


class KafkaLiteStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream.format("kafkalite")``. Offsets in the checkpoint look like Spark's
    Kafka source's: ``{"topic": {"0": next_offset, ...}}``."""

    def __init__(self, options: SourceOptions) -> None:
        self.planner = _Planner(options)
        self.available_now_end: PartitionOffsets | None = None

    def initialOffset(self) -> dict[str, Any]:
        p = self.planner
        tps = p.lookup.partitions(p.options.subscription, require_topics=True)
        return to_json(p.resolve(p.options.starting, tps))

    def getDefaultReadLimit(self) -> ReadLimit:
        limit = self.planner.options.max_offsets_per_trigger
        return ReadAllAvailable() if limit is None else ReadMaxRows(limit)

    def _latest(self) -> PartitionOffsets:
        p = self.planner
        tps = p.lookup.partitions(p.options.subscription, require_topics=False)
        return p.lookup.offsets(tps, LATEST)

    def prepareForTriggerAvailableNow(self) -> None:
        """Trigger.AvailableNow reads what is there now, and stops."""
        self.available_now_end = self._latest()

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        begin = from_json(start)
        latest = self.available_now_end if self.available_now_end is not None else self._latest()
        end, losses = next_end(begin, latest)
        self.planner.report(losses)
        if isinstance(limit, ReadMaxRows):
            end = rate_limit(begin, end, limit.max_rows)
        return to_json(end)

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        return self.planner.input_partitions(from_json(start), from_json(end))

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return read_partition(partition)
