"""CPU per request on the broker: what one request of each kind costs the process that
serves it, for two versions of Kafka-Lite side by side in the same run.

Every figure a class feels (failover on a busy server, Spark's micro-batch latency, how
many students share a machine, the idle cost) comes down to this cost. It is measured
with the broker process's CPU clock (user + system time of all its threads, from
``/proc/<pid>/stat``), not with a wall clock: CPU time per request barely moves when other
work shares the machine, where throughput does. What the broker spends idle (heartbeats,
quorum Fetches, followers' held Fetches) is measured just before each run and taken off.

The kinds, each ``--requests`` times (10,000 by default), over ``LANES`` connections each
waiting for its answer before the next request:

- ``produce_acks_1`` / ``produce_acks_all``: one uncompressed batch of one 100-byte
  record to a partition of an RF 3 topic (min.insync.replicas 2), the leader's CPU; for
  acks=all also the three brokers' (the followers' Fetches are the rest of its cost);
- ``fetch_consumer``: a read_committed Fetch (what librdkafka sends) of a partition
  holding ten such batches, from offset 0;
- ``fetch_follower``: the same Fetch from a follower (``replica_id`` 3). Broker 3 is
  stopped first, so the leader takes the bench for it without a real broker 3 fetching
  beside it;
- ``fetch_held``: a consumer Fetch at the log end, held by the leader until a Produce
  (acks=1, on another connection, sent ``HELD_FETCH_LEAD_S`` later) brings a record: the
  CPU of both requests, counted as two;
- ``metadata``: Metadata for one topic;
- ``heartbeat``: Heartbeat of a member of a (one-member) consumer group;
- ``quorum_fetch``: the metadata quorum's Fetch, on the controller listener of the quorum
  leader, from voter 3 at the end of the log (``max_wait`` 0: answered at once).

The same workload runs against a cluster of the baseline commit (a git worktree, by
default :data:`BASELINE`, main when issue 29 began) and one of this tree, both up at
once, alternating kind by kind. Each cluster is started by its own tree's code.

Run: ``.venv/bin/python -m bench.requests`` (``--baseline COMMIT``, ``--requests N``,
``--only KIND``). The load average is recorded with each figure.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import struct
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from kio.schema.describe_quorum.v2 import request as describe_quorum_req
from kio.schema.fetch.v12 import request as fetch_v12
from kio.schema.fetch.v15 import request as quorum_fetch_req
from kio.schema.fetch.v16 import request as fetch_v16
from kio.schema.find_coordinator.v3 import request as find_coordinator_req
from kio.schema.heartbeat.v3 import request as heartbeat_req
from kio.schema.join_group.v5 import request as join_req
from kio.schema.metadata.v13 import request as metadata_req
from kio.schema.produce.v10 import request as produce_req
from kio.schema.sync_group.v3 import request as sync_req

from bench.baseline import BASELINE, REPO, cluster_of, current_commit, short_commit, worktree
from bench.common import cpu_seconds, record
from kafkalite.cluster import Cluster
from kafkalite.protocol.codec import build, decode_response, encode_request
from kafkalite.protocol.record_batch import iter_batches
from kafkalite.protocol.records import Record, build_batch
from tests.support.topics import create_topic
from tests.support.waiting import wait_for

REQUESTS = 10_000
LANES = 4
IDLE_S = 3.0
HELD_FETCH_LEAD_S = 0.005
WRITTEN, READ, HELD = "cpu-write", "cpu-read", "cpu-held"
"""Topics of ``3 * LANES`` partitions, RF 3: produced to; holding ten batches a partition,
only read; fetched at the end and produced to."""
MEMBER_ID_REQUIRED = 79
METADATA_TOPIC_ID = uuid.UUID(int=1)  # Kafka's fixed id of __cluster_metadata
_SIZE = struct.Struct(">i")


# ---- a bare Kafka connection ------------------------------------------------------------


class Wire:
    """One connection; the bench's own cost is not measured, only kept small (requests are
    encoded once, responses read as bytes)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, address: str) -> Wire:
        host, port = address.rsplit(":", 1)
        return cls(*await asyncio.open_connection(host, int(port)))

    def send(self, frame: bytes) -> None:
        self.writer.write(frame)

    async def receive(self) -> bytes:
        size = _SIZE.unpack(await self.reader.readexactly(4))[0]
        return await self.reader.readexactly(size)

    async def call(self, frame: bytes) -> bytes:
        self.send(frame)
        return await self.receive()

    async def request(self, body: Any) -> Any:
        """A decoded round trip (set-up only)."""
        frame = await self.call(frame_of(body))
        return decode_response(body.__api_key__, body.__version__, frame)

    def close(self) -> None:
        self.writer.close()


def frame_of(body: Any) -> bytes:
    return encode_request(body, 1, "bench-requests")


def produce_frame(topic: str, partition: int, acks: int, batch: bytes) -> bytes:
    data = build(produce_req.PartitionProduceData, {"index": partition, "records": batch})
    return frame_of(
        build(
            produce_req.ProduceRequest,
            {
                "transactional_id": None,
                "acks": acks,
                "timeout": 30_000,
                "topic_data": (
                    build(produce_req.TopicProduceData, {"name": topic, "partition_data": (data,)}),
                ),
            },
        )
    )


def fetch_frame(
    topic: str | uuid.UUID,
    partition: int,
    offset: int,
    *,
    replica_id: int = -1,
    leader_epoch: int = -1,
    max_wait_ms: int = 500,
    partition_max_bytes: int = 1 << 20,
) -> bytes:
    """A consumer's Fetch as librdkafka sends it (v16, the topic named by its id,
    read_committed), or a follower's as Kafka-Lite's replica fetcher does (v12, by name)."""
    schema = fetch_v12 if replica_id >= 0 else fetch_v16
    part = build(
        schema.FetchPartition,
        {
            "partition": partition,
            "current_leader_epoch": leader_epoch,
            "fetch_offset": offset,
            "last_fetched_epoch": -1,
            "log_start_offset": 0 if replica_id >= 0 else -1,
            "partition_max_bytes": partition_max_bytes,
        },
    )
    topic_field = "topic" if replica_id >= 0 else "topic_id"
    return frame_of(
        build(
            schema.FetchRequest,
            {
                "cluster_id": None,
                "replica_id": replica_id,
                "max_wait": max_wait_ms,
                "min_bytes": 1,
                "max_bytes": 50 << 20,
                "isolation_level": 0 if replica_id >= 0 else 1,
                "session_id": 0,
                "session_epoch": -1,
                "topics": (build(schema.FetchTopic, {topic_field: topic, "partitions": (part,)}),),
                "forgotten_topics_data": (),
                "rack_id": "",
            },
        )
    )


def metadata_of(topic: str) -> Any:
    """Metadata for one topic, as librdkafka asks it (v13)."""
    return build(
        metadata_req.MetadataRequest,
        {
            "topics": (
                build(metadata_req.MetadataRequestTopic, {"topic_id": None, "name": topic}),
            ),
            "allow_auto_topic_creation": True,
            "include_topic_authorized_operations": False,
        },
    )


SMALL_BATCH = build_batch([Record(b"k", b"v" * 100, int(time.time() * 1000))])


# ---- the workloads ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Target:
    """Where a kind's requests go, and which broker's CPU is its figure."""

    cluster: Cluster
    broker_id: int
    lanes: list[Callable[[], Awaitable[int]]]
    """Each lane serves its requests one after another; returns how many per call."""


class Workloads:
    """Sets each kind up on ``cluster`` (topics, a group, a stopped broker 3)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.wires: list[Wire] = []
        self.topic_ids: dict[str, uuid.UUID] = {}  # known once ``prepare`` made the topics

    def address(self, broker_id: int, controller: bool = False) -> str:
        spec = next(b for b in self.cluster.spec.brokers if b.broker_id == broker_id)
        return f"{spec.host}:{spec.controller_port if controller else spec.port}"

    async def wire(self, broker_id: int, controller: bool = False) -> Wire:
        wire = await Wire.open(self.address(broker_id, controller))
        self.wires.append(wire)
        return wire

    def close(self) -> None:
        for wire in self.wires:
            wire.close()
        self.wires.clear()

    def partitions(self, topic: str) -> list[dict[str, Any]]:
        return [p for p in self.cluster.status()["partitions"] if p["topic"] == topic]

    def prepare(self) -> None:
        """The three topics, fully replicated; ten small batches in each partition of
        ``READ``. Broker 1 leads the partitions the bench uses."""
        for topic in (WRITTEN, READ, HELD):
            create_topic(
                self.cluster.bootstrap_servers, topic, 3 * LANES, 3, {"min.insync.replicas": "2"}
            )
        wait_for(
            lambda: all(
                len(self.partitions(t)) == 3 * LANES
                and all(len(p["isr"]) == 3 for p in self.partitions(t))
                for t in (WRITTEN, READ, HELD)
            ),
            60,
            "the bench topics fully replicated",
        )

        async def fill() -> None:
            for topic in (READ, HELD):
                described = await (await self.wire(1)).request(metadata_of(topic))
                self.topic_ids[topic] = described.topics[0].topic_id
            for row in self.partitions(READ):
                wire = await self.wire(row["leader"])
                frame = produce_frame(READ, row["partition"], -1, SMALL_BATCH)
                for _ in range(10):
                    await wire.call(frame)
            self.close()

        asyncio.run(fill())

    def led_by(self, topic: str, broker_id: int) -> list[dict[str, Any]]:
        return [p for p in self.partitions(topic) if p["leader"] == broker_id][:LANES]

    async def produce(self, acks: int) -> Target:
        lanes = []
        for row in self.led_by(WRITTEN, 1):
            frame = produce_frame(WRITTEN, row["partition"], acks, SMALL_BATCH)
            lanes.append(_repeat(await self.wire(1), frame))
        return Target(self.cluster, 1, lanes)

    async def fetch_consumer(self) -> Target:
        lanes = []
        for row in self.led_by(READ, 1):
            frame = fetch_frame(self.topic_ids[READ], row["partition"], 0)
            lanes.append(_repeat(await self.wire(1), frame))
        return Target(self.cluster, 1, lanes)

    async def fetch_held(self) -> Target:
        lanes = []
        topic_id = self.topic_ids[HELD]
        for row in self.led_by(HELD, 1):
            fetcher, producer = await self.wire(1), await self.wire(1)
            partition = row["partition"]
            offset = log_end(await fetcher.call(fetch_frame(topic_id, partition, 0)))
            lanes.append(_held_pair(fetcher, producer, topic_id, partition, offset))
        return Target(self.cluster, 1, lanes)

    async def metadata(self) -> Target:
        body = frame_of(metadata_of(WRITTEN))
        lanes = [_repeat(await self.wire(1), body) for _ in range(LANES)]
        return Target(self.cluster, 1, lanes)

    async def heartbeat(self) -> Target:
        """``LANES`` groups of one member each, all on one coordinator."""
        lanes: list[Callable[[], Awaitable[int]]] = []
        coordinator = -1
        n = 0
        while len(lanes) < LANES:
            group = f"bench-{n}"
            n += 1
            found = await (await self.wire(1)).request(
                build(find_coordinator_req.FindCoordinatorRequest, {"key": group, "key_type": 0})
            )
            if coordinator not in (-1, int(found.node_id)):
                continue
            coordinator = int(found.node_id)
            wire = await self.wire(coordinator)
            member, generation = await _join(wire, group)
            body = build(
                heartbeat_req.HeartbeatRequest,
                {
                    "group_id": group,
                    "generation_id": generation,
                    "member_id": member,
                    "group_instance_id": None,
                },
            )
            lanes.append(_repeat(wire, frame_of(body)))
        return Target(self.cluster, coordinator, lanes)

    def stop_broker_3(self) -> None:
        """The follower and quorum kinds speak for broker 3: it must not speak too."""
        self.cluster.stop(3)
        wait_for(
            lambda: (
                all(3 not in p["isr"] for p in self.partitions(READ))
                and self.quorum_leader() in (1, 2)
            ),
            60,
            "broker 3 out of every ISR and a quorum leader among 1 and 2",
        )

    def quorum_leader(self) -> int | None:
        rows = [b for b in self.cluster.status()["brokers"] if b.get("controller")]
        return int(rows[0]["id"]) if rows else None

    async def fetch_follower(self) -> Target:
        lanes = []
        for row in self.led_by(READ, 1):
            frame = fetch_frame(
                READ, row["partition"], 0, replica_id=3, leader_epoch=row["leader_epoch"]
            )
            lanes.append(_repeat(await self.wire(1), frame))
        return Target(self.cluster, 1, lanes)

    async def quorum_fetch(self) -> Target:
        """One lane (a voter has one Fetch at a time), at the log end, following it."""
        leader = self.quorum_leader()
        assert leader is not None
        described = await (await self.wire(leader)).request(
            build(
                describe_quorum_req.DescribeQuorumRequest,
                {
                    "topics": (
                        build(
                            describe_quorum_req.TopicData,
                            {
                                "topic_name": "__cluster_metadata",
                                "partitions": (
                                    build(
                                        describe_quorum_req.PartitionData, {"partition_index": 0}
                                    ),
                                ),
                            },
                        ),
                    )
                },
            )
        )
        part = described.topics[0].partitions[0]
        position = _QuorumPosition(int(part.high_watermark), int(part.leader_epoch))
        wire = await self.wire(leader, controller=True)
        return Target(self.cluster, leader, [_quorum_lane(wire, position)])


def _repeat(wire: Wire, frame: bytes) -> Callable[[], Awaitable[int]]:
    async def once() -> int:
        await wire.call(frame)
        return 1

    return once


def log_end(fetch_response: bytes | memoryview) -> int:
    """The offset after the last batch of a consumer Fetch's answer (v16, one partition)."""
    body = decode_response(1, 16, fetch_response)
    records = body.responses[0].partitions[0].records or b""
    return max((h.next_offset for _, h in iter_batches(records)), default=0)


def _held_pair(
    fetcher: Wire, producer: Wire, topic_id: uuid.UUID, partition: int, offset: int
) -> Callable[[], Awaitable[int]]:
    """A Fetch at the log end, then the Produce that answers it: two requests."""
    produce = produce_frame(HELD, partition, 1, SMALL_BATCH)
    at = [offset]

    async def once() -> int:
        fetcher.send(fetch_frame(topic_id, partition, at[0], max_wait_ms=30_000))
        # Pacing, not a wait for an event (none is visible from here): the Produce goes
        # HELD_FETCH_LEAD_S after the Fetch, which is by then (nearly always) held. One
        # that arrived second would be answered at once, a little cheaper.
        await asyncio.sleep(HELD_FETCH_LEAD_S)
        await producer.call(produce)
        answer = await fetcher.receive()
        end = log_end(answer)
        if end <= at[0]:
            raise RuntimeError(f"the held Fetch at {at[0]} came back without the new record")
        at[0] = end
        return 2

    return once


@dataclass(slots=True)
class _QuorumPosition:
    offset: int
    epoch: int


def _quorum_lane(wire: Wire, at: _QuorumPosition) -> Callable[[], Awaitable[int]]:
    async def once() -> int:
        part = build(
            quorum_fetch_req.FetchPartition,
            {
                "partition": 0,
                "current_leader_epoch": at.epoch,
                "fetch_offset": at.offset,
                "last_fetched_epoch": at.epoch,
                "log_start_offset": -1,
                "partition_max_bytes": 1 << 20,
            },
        )
        body = build(
            quorum_fetch_req.FetchRequest,
            {
                "cluster_id": None,
                "replica_state": build(
                    quorum_fetch_req.ReplicaState, {"replica_id": 3, "replica_epoch": -1}
                ),
                "max_wait": 0,
                "min_bytes": 0,
                "max_bytes": 1 << 20,
                "isolation_level": 0,
                "session_id": 0,
                "session_epoch": -1,
                "topics": (
                    build(
                        quorum_fetch_req.FetchTopic,
                        {"topic_id": METADATA_TOPIC_ID, "partitions": (part,)},
                    ),
                ),
                "forgotten_topics_data": (),
                "rack_id": "",
            },
        )
        response = decode_response(1, 15, await wire.call(frame_of(body)))
        answer = response.responses[0].partitions[0]
        if int(answer.error_code) != 0 or int(answer.diverging_epoch.epoch) >= 0:
            raise RuntimeError(f"quorum Fetch at {at}: {answer}")
        for _, header in iter_batches(answer.records or b""):
            at.offset, at.epoch = header.next_offset, header.partition_leader_epoch
        return 1

    return once


async def _join(wire: Wire, group: str) -> tuple[str, int]:
    """Join ``group`` as its only member; returns (member id, generation)."""
    member = ""
    for _ in range(2):  # v4+: the first join is answered MEMBER_ID_REQUIRED with an id
        joined = await wire.request(
            build(
                join_req.JoinGroupRequest,
                {
                    "group_id": group,
                    "session_timeout": 45_000,
                    "rebalance_timeout": 60_000,
                    "member_id": member,
                    "group_instance_id": None,
                    "protocol_type": "consumer",
                    "protocols": (
                        build(
                            join_req.JoinGroupRequestProtocol, {"name": "range", "metadata": b""}
                        ),
                    ),
                },
            )
        )
        member = joined.member_id
        if int(joined.error_code) != MEMBER_ID_REQUIRED:
            break
    if int(joined.error_code) != 0:
        raise RuntimeError(f"JoinGroup {group}: {joined.error_code}")
    generation = int(joined.generation_id)
    synced = await wire.request(
        build(
            sync_req.SyncGroupRequest,
            {
                "group_id": group,
                "generation_id": generation,
                "member_id": member,
                "group_instance_id": None,
                "assignments": (
                    build(
                        sync_req.SyncGroupRequestAssignment,
                        {"member_id": member, "assignment": b""},
                    ),
                ),
            },
        )
    )
    if int(synced.error_code) != 0:
        raise RuntimeError(f"SyncGroup {group}: {synced.error_code}")
    return member, generation


# ---- measuring --------------------------------------------------------------------------


def all_brokers(cluster: Cluster) -> list[int]:
    return [
        cluster.pid(b.broker_id)
        for b in cluster.spec.brokers
        if cluster.broker_states()[b.broker_id].value == "running"
    ]


@dataclass(frozen=True, slots=True)
class Figure:
    """What one or more runs of a kind cost, in totals (runs add up)."""

    requests: int
    cpu_s: float
    """The measured broker's CPU seconds beyond its idle cost over the same time."""
    cpu_raw_s: float
    cluster_cpu_s: float
    """The same over every running broker of the cluster (followers' work included)."""
    wall_s: float
    idle_percent: tuple[float, ...]
    load_average: tuple[float, ...]

    def __add__(self, other: Figure) -> Figure:
        return Figure(
            self.requests + other.requests,
            self.cpu_s + other.cpu_s,
            self.cpu_raw_s + other.cpu_raw_s,
            self.cluster_cpu_s + other.cluster_cpu_s,
            self.wall_s + other.wall_s,
            self.idle_percent + other.idle_percent,
            self.load_average + other.load_average,
        )

    @property
    def cpu_us(self) -> float:
        """Net broker CPU per request: what the requests cost beyond idling."""
        return self.cpu_s / self.requests * 1e6

    def as_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "cpu_us": round(self.cpu_us, 1),
            "cpu_us_raw": round(self.cpu_raw_s / self.requests * 1e6, 1),
            "cluster_cpu_us": round(self.cluster_cpu_s / self.requests * 1e6, 1),
            "wall_s": round(self.wall_s, 2),
            "idle_percent_of_a_core": [round(x, 2) for x in self.idle_percent],
            "load_average_1m": [round(x, 2) for x in self.load_average],
        }


async def measure(target: Target, requests: int) -> Figure:
    """Idle for ``IDLE_S``, then the requests; both on the CPU clocks of the brokers."""
    leader = target.cluster.pid(target.broker_id)
    pids = all_brokers(target.cluster)
    start_idle = time.monotonic()
    idle_before = [cpu_seconds(p) for p in pids]
    await asyncio.sleep(IDLE_S)  # the idle window itself: what the brokers spend doing nothing
    idle_after = [cpu_seconds(p) for p in pids]
    idle_s = time.monotonic() - start_idle
    idle_rates = [(a - b) / idle_s for a, b in zip(idle_after, idle_before, strict=True)]
    per_lane = -(-requests // len(target.lanes))
    counts = [0] * len(target.lanes)

    async def lane(i: int) -> None:
        while counts[i] < per_lane:
            counts[i] += await target.lanes[i]()

    before = [cpu_seconds(p) for p in pids]
    started = time.monotonic()
    await asyncio.gather(*(lane(i) for i in range(len(target.lanes))))
    wall = time.monotonic() - started
    after = [cpu_seconds(p) for p in pids]
    spent = [a - b for a, b in zip(after, before, strict=True)]
    at = pids.index(leader)
    return Figure(
        requests=sum(counts),
        cpu_s=spent[at] - idle_rates[at] * wall,
        cpu_raw_s=spent[at],
        cluster_cpu_s=sum(spent) - sum(idle_rates) * wall,
        wall_s=wall,
        idle_percent=(100 * idle_rates[at],),
        load_average=(os.getloadavg()[0],),
    )


KINDS: dict[str, Callable[[Workloads], Awaitable[Target]]] = {
    "produce_acks_1": lambda w: w.produce(1),
    "produce_acks_all": lambda w: w.produce(-1),
    "fetch_consumer": Workloads.fetch_consumer,
    "fetch_held": Workloads.fetch_held,
    "metadata": Workloads.metadata,
    "heartbeat": Workloads.heartbeat,
    # these two speak for broker 3, stopped first (``Workloads.stop_broker_3``)
    "fetch_follower": Workloads.fetch_follower,
    "quorum_fetch": Workloads.quorum_fetch,
}
SPEAK_FOR_BROKER_3 = {"fetch_follower", "quorum_fetch"}


def run_kind(workloads: Workloads, kind: str, requests: int) -> Figure:
    """Set ``kind`` up and measure it, on one event loop (its connections belong to it)."""

    async def main() -> Figure:
        try:
            return await measure(await KINDS[kind](workloads), requests)
        finally:
            workloads.close()

    return asyncio.run(main())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.requests", description=__doc__)
    parser.add_argument("--baseline", default=BASELINE, help="the commit to compare with")
    parser.add_argument("--requests", type=int, default=REQUESTS)
    parser.add_argument("--only", action="append", choices=list(KINDS), help="these kinds only")
    args = parser.parse_args(argv)
    kinds = args.only or list(KINDS)
    commit, current = short_commit(args.baseline), current_commit()
    names = (f"baseline {commit}", f"current {current}")
    figures: dict[str, dict[str, Figure]] = {name: {} for name in names}
    with contextlib.ExitStack() as stack:
        tree = stack.enter_context(worktree(commit))
        sides = [Workloads(stack.enter_context(cluster_of(t))) for t in (tree, REPO)]
        for side in sides:
            side.prepare()
        stopped = False
        for n, kind in enumerate(kinds):
            if kind in SPEAK_FOR_BROKER_3 and not stopped:
                for side in sides:
                    side.stop_broker_3()
                stopped = True
            # two halves each, A B B A: a drift in the machine's load hits both sides
            for i in (0, 1, 1, 0) if n % 2 == 0 else (1, 0, 0, 1):
                figure = run_kind(sides[i], kind, args.requests // 2)
                done = figures[names[i]]
                done[kind] = done[kind] + figure if kind in done else figure
                print(
                    f"{kind:18} {names[i]:28} {figure.cpu_us:8.1f} us/request "
                    f"(load {figure.load_average[0]:.1f})",
                    flush=True,
                )
    print()
    print(f"{'kind':18} {names[0]:>24} {names[1]:>24}  ratio")
    for kind in kinds:
        a, b = figures[names[0]][kind], figures[names[1]][kind]
        print(f"{kind:18} {a.cpu_us:21.1f} us {b.cpu_us:21.1f} us  {b.cpu_us / a.cpu_us:5.2f}")
    record(
        "requests",
        {
            "baseline": commit,
            "current": current,
            "lanes": LANES,
            "unit": "broker CPU microseconds per request, idle cost taken off",
            "figures": {
                kind: {
                    "baseline": figures[names[0]][kind].as_dict(),
                    "current": figures[names[1]][kind].as_dict(),
                }
                for kind in kinds
            },
        },
    )


if __name__ == "__main__":
    main()
