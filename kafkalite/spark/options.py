"""The options of Spark's Kafka connector, parsed once and validated where they are given.

Code written for Spark's own connector (``format("kafka")``) must run unchanged with
``format("kafkalite")``, so the option names, defaults and JSON formats are Spark's (see
the Structured Streaming + Kafka Integration Guide). Where Kafka-Lite differs it says so:
``kafka.isolation.level`` is ``read_committed`` by default (Spark's consumer default is
``read_uncommitted``), and ``kafkaConsumer.pollTimeoutMs`` bounds the driver's offset
lookups as well as the executors' reads (30 s instead of Spark's 120 s: a lab's
broker failover takes about a second, an unreachable cluster should say so soon).

Pure: parsing only, no Kafka client. The results are small frozen dataclasses, cheap to
pickle into every Spark task.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from kafkalite.spark.offsets import EARLIEST, LATEST, TopicPartition

Isolation = Literal["read_committed", "read_uncommitted"]
DeliveryGuarantee = Literal["at-least-once", "exactly-once"]

DEFAULT_TIMEOUT_MS = 30_000

# Options of Spark's connector that change what is read, which Kafka-Lite does not do:
# refusing them is better than silently reading something else.
UNSUPPORTED = {
    "minoffsetspertrigger": "minOffsetsPerTrigger",
    "maxtriggerdelay": "maxTriggerDelay",
    "maxrecordsperpartition": "maxRecordsPerPartition",
    "groupidprefix": "groupIdPrefix",
    "kafka.group.id": "kafka.group.id",
}

# kafka.* settings the source and sink set themselves.
OWNED_KAFKA_SETTINGS = {
    "bootstrap.servers",
    "isolation.level",
    "group.id",
    "enable.auto.commit",
    "auto.offset.reset",
    "transactional.id",
    "key.deserializer",
    "value.deserializer",
    "key.serializer",
    "value.serializer",
}


class OptionError(ValueError):
    """An option that Spark's Kafka connector would also reject (or one Kafka-Lite lacks)."""


@dataclass(frozen=True, slots=True)
class Subscription:
    """What to read: ``assign`` (exact partitions), ``subscribe`` (topics) or
    ``subscribePattern`` (a regex matched against topic names, new topics included)."""

    kind: Literal["assign", "subscribe", "subscribePattern"]
    topics: tuple[str, ...] = ()
    pattern: str = ""
    partitions: tuple[TopicPartition, ...] = ()

    def matches(self, topic: str) -> bool:
        if self.kind == "subscribePattern":
            return re.fullmatch(self.pattern, topic) is not None
        if self.kind == "subscribe":
            return topic in self.topics
        return any(t == topic for t, _ in self.partitions)

    def describe(self) -> str:
        if self.kind == "subscribePattern":
            return f"subscribePattern={self.pattern!r}"
        if self.kind == "subscribe":
            return f"subscribe={','.join(self.topics)}"
        return f"assign={','.join(f'{t}-{p}' for t, p in self.partitions)}"


@dataclass(frozen=True, slots=True)
class OffsetSpec:
    """Where to start (or end): ``earliest``, ``latest``, per-partition offsets (Spark's
    JSON, -2 = earliest, -1 = latest), or timestamps (one for every partition, or per
    partition): the first offset whose record timestamp is at or after it."""

    kind: Literal["earliest", "latest", "offsets", "timestamp", "timestamps"]
    offsets: Mapping[TopicPartition, int] = field(default_factory=dict)
    timestamp_ms: int = 0

    def for_partition(self, tp: TopicPartition) -> int:
        """The offset (or the EARLIEST/LATEST sentinel) for ``tp``; not for timestamps."""
        if self.kind == "earliest":
            return EARLIEST
        if self.kind == "latest":
            return LATEST
        if self.kind == "offsets":
            return self.offsets.get(tp, LATEST)
        raise ValueError(f"a {self.kind} spec has no fixed offset")


@dataclass(frozen=True, slots=True)
class KafkaConnection:
    """How to reach the cluster: bootstrap servers, a time bound and extra client settings
    (``kafka.*`` options, passed to librdkafka under the same names)."""

    bootstrap_servers: str
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    extra: tuple[tuple[str, str], ...] = ()

    def client_config(self, **settings: Any) -> dict[str, Any]:
        return {"bootstrap.servers": self.bootstrap_servers, **dict(self.extra), **settings}


@dataclass(frozen=True, slots=True)
class SourceOptions:
    connection: KafkaConnection
    subscription: Subscription
    starting: OffsetSpec
    ending: OffsetSpec
    isolation: Isolation = "read_committed"
    fail_on_data_loss: bool = True
    include_headers: bool = False
    max_offsets_per_trigger: int | None = None
    min_partitions: int | None = None
    timestamp_strategy: Literal["error", "latest"] = "error"


@dataclass(frozen=True, slots=True)
class SinkOptions:
    connection: KafkaConnection
    topic: str | None = None
    delivery: DeliveryGuarantee = "at-least-once"


def _lower(options: Mapping[str, str]) -> dict[str, str]:
    return {k.lower(): v for k, v in options.items()}


def _connection(opts: dict[str, str]) -> KafkaConnection:
    servers = opts.get("kafka.bootstrap.servers", "").strip()
    if not servers:
        raise OptionError("option 'kafka.bootstrap.servers' must be set (e.g. 127.0.0.1:9092)")
    timeout_ms = _positive_int(opts, "kafkaconsumer.polltimeoutms") or DEFAULT_TIMEOUT_MS
    extra = tuple(
        sorted(
            (k.removeprefix("kafka."), v)
            for k, v in opts.items()
            if k.startswith("kafka.") and k.removeprefix("kafka.") not in OWNED_KAFKA_SETTINGS
        )
    )
    return KafkaConnection(servers, timeout_ms, extra)


def _positive_int(opts: dict[str, str], key: str) -> int | None:
    if key not in opts:
        return None
    try:
        value = int(opts[key])
    except ValueError:
        raise OptionError(f"option '{key}' must be a whole number, got {opts[key]!r}") from None
    if value <= 0:
        raise OptionError(f"option '{key}' must be positive, got {value}")
    return value


def _bool(opts: dict[str, str], key: str, default: bool) -> bool:
    raw = opts.get(key)
    if raw is None:
        return default
    if raw.strip().lower() not in ("true", "false"):
        raise OptionError(f"option '{key}' must be true or false, got {raw!r}")
    return raw.strip().lower() == "true"


def _json_object(key: str, raw: str) -> dict[str, Any]:
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise OptionError(f"option '{key}' is not valid JSON ({exc.msg}): {raw!r}") from None
    if not isinstance(parsed, dict):
        raise OptionError(f"option '{key}' must be a JSON object, got {raw!r}")
    return parsed


def _subscription(opts: dict[str, str]) -> Subscription:
    given = [k for k in ("assign", "subscribe", "subscribepattern") if opts.get(k, "").strip()]
    if len(given) != 1:
        raise OptionError(
            "exactly one of the options 'assign', 'subscribe', 'subscribePattern' must be set"
            + (f" (got {', '.join(given)})" if given else "")
        )
    key = given[0]
    raw = opts[key].strip()
    if key == "subscribe":
        topics = tuple(t.strip() for t in raw.split(",") if t.strip())
        return Subscription("subscribe", topics=topics)
    if key == "subscribepattern":
        try:
            re.compile(raw)
        except re.error as exc:
            raise OptionError(f"option 'subscribePattern' is no regex ({exc}): {raw!r}") from None
        return Subscription("subscribePattern", pattern=raw)
    assigned = _json_object("assign", raw)
    partitions: list[TopicPartition] = []
    for topic, numbers in assigned.items():
        if not isinstance(numbers, list) or not all(isinstance(n, int) for n in numbers):
            raise OptionError(
                f'option \'assign\' must look like {{"topicA":[0,1],"topicB":[2]}}, got {raw!r}'
            )
        partitions.extend((topic, n) for n in numbers)
    if not partitions:
        raise OptionError(f"option 'assign' names no partition: {raw!r}")
    return Subscription("assign", partitions=tuple(sorted(partitions)))


def _offset_json(key: str, raw: str, allowed: tuple[int, ...]) -> dict[TopicPartition, int]:
    offsets: dict[TopicPartition, int] = {}
    for topic, per_partition in _json_object(key, raw).items():
        if not isinstance(per_partition, dict):
            raise OptionError(
                f'option \'{key}\' must look like {{"topicA":{{"0":23,"1":-1}}}}, got {raw!r}'
            )
        for partition, offset in per_partition.items():
            if not partition.lstrip("-").isdigit() or not isinstance(offset, int):
                raise OptionError(f"option '{key}': bad entry {topic}/{partition}: {offset!r}")
            if offset < 0 and offset not in allowed:
                names = {EARLIEST: "-2 (earliest)", LATEST: "-1 (latest)"}
                raise OptionError(
                    f"option '{key}': offset {offset} for {topic}-{partition} is not allowed "
                    f"here (allowed: {', '.join(names[a] for a in allowed) or 'none'})"
                )
            offsets[(topic, int(partition))] = offset
    return offsets


def _offset_spec(
    opts: dict[str, str], prefix: str, default: str, allowed: tuple[int, ...]
) -> OffsetSpec:
    """``startingTimestamp`` wins over ``startingOffsetsByTimestamp``, which wins over
    ``startingOffsets`` (Spark's precedence); the same for ``ending*``."""
    if f"{prefix}timestamp" in opts:
        raw = opts[f"{prefix}timestamp"]
        try:
            return OffsetSpec("timestamp", timestamp_ms=int(raw))
        except ValueError:
            raise OptionError(f"option '{prefix}Timestamp' must be in ms, got {raw!r}") from None
    if f"{prefix}offsetsbytimestamp" in opts:
        key = f"{prefix}OffsetsByTimestamp"
        stamps = _offset_json(key, opts[f"{prefix}offsetsbytimestamp"], ())
        return OffsetSpec("timestamps", offsets=stamps)
    raw = opts.get(f"{prefix}offsets", default).strip()
    if raw.lower() in ("earliest", "latest"):
        kind: Literal["earliest", "latest"] = "earliest" if raw.lower() == "earliest" else "latest"
        if (EARLIEST if kind == "earliest" else LATEST) not in allowed:
            raise OptionError(f"option '{prefix}Offsets' cannot be {kind!r} here")
        return OffsetSpec(kind)
    return OffsetSpec("offsets", offsets=_offset_json(f"{prefix}Offsets", raw, allowed))


def parse_source_options(options: Mapping[str, str], streaming: bool) -> SourceOptions:
    """Spark's Kafka source options; ``streaming`` decides the defaults (a stream starts at
    ``latest``; a batch read reads from ``earliest`` to ``latest``)."""
    opts = _lower(options)
    for key, name in UNSUPPORTED.items():
        if key in opts:
            raise OptionError(f"option '{name}' of Spark's Kafka source is not supported here")
    if streaming and any(k.startswith("ending") for k in opts):
        raise OptionError("'endingOffsets'/'endingTimestamp' are for batch queries only")
    if not streaming and "maxoffsetspertrigger" in opts:
        raise OptionError("option 'maxOffsetsPerTrigger' is for streaming queries only")
    isolation = opts.get("kafka.isolation.level", "read_committed").strip().lower()
    if isolation not in ("read_committed", "read_uncommitted"):
        raise OptionError(
            f"option 'kafka.isolation.level' must be read_committed or read_uncommitted, "
            f"got {isolation!r}"
        )
    strategy = opts.get("startingoffsetsbytimestampstrategy", "error").strip().lower()
    if strategy not in ("error", "latest"):
        raise OptionError(
            f"option 'startingOffsetsByTimestampStrategy' must be error or latest, got {strategy!r}"
        )
    return SourceOptions(
        connection=_connection(opts),
        subscription=_subscription(opts),
        starting=_offset_spec(
            opts,
            "starting",
            "latest" if streaming else "earliest",
            (EARLIEST, LATEST) if streaming else (EARLIEST,),
        ),
        ending=_offset_spec(opts, "ending", "latest", (LATEST,)),
        isolation="read_committed" if isolation == "read_committed" else "read_uncommitted",
        fail_on_data_loss=_bool(opts, "failondataloss", True),
        include_headers=_bool(opts, "includeheaders", False),
        max_offsets_per_trigger=_positive_int(opts, "maxoffsetspertrigger"),
        min_partitions=_positive_int(opts, "minpartitions"),
        timestamp_strategy="latest" if strategy == "latest" else "error",
    )


def parse_sink_options(options: Mapping[str, str], streaming: bool) -> SinkOptions:
    """Spark's Kafka sink options, plus ``deliveryGuarantee`` (``at-least-once``, Spark's
    behaviour and the default, or ``exactly-once``: one transaction per task and batch)."""
    opts = _lower(options)
    delivery = opts.get("deliveryguarantee", "at-least-once").strip().lower()
    if delivery not in ("at-least-once", "exactly-once"):
        raise OptionError(
            f"option 'deliveryGuarantee' must be at-least-once or exactly-once, got {delivery!r}"
        )
    if delivery == "exactly-once" and not streaming:
        raise OptionError(
            "deliveryGuarantee=exactly-once needs a streaming query: it recognises a replayed "
            "micro-batch by its batch id, which a batch write does not have"
        )
    return SinkOptions(
        connection=_connection(opts),
        topic=opts.get("topic", "").strip() or None,
        delivery="exactly-once" if delivery == "exactly-once" else "at-least-once",
    )
