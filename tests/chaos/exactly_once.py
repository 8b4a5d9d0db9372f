"""The exactly-once workload: a consume-transform-produce pipeline under the nemesis.

An idempotent producer writes unique values to an input topic. Pipeline instances (a
consumer group, read_committed, and a transactional producer each) read it and write
``transform(value)`` to an output topic, committing the consumed offsets in the same
transaction (``send_offsets_to_transaction`` with the group's metadata, KIP-447): a batch
either commits with its offsets, or is aborted and read again from the committed offsets.
read_committed readers follow the output and record every record they see. The nemesis of
``harness`` kills, stops, pauses, isolates and slows brokers meanwhile, the active
controller included. At the end, faults healed, the pipeline drains the input, and
``kafkalite.checker.check_exactly_once`` compares input, committed output, everything
written and what the readers saw.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)

from kafkalite.checker import Commit, Poll, Report, check_exactly_once
from kafkalite.cluster import Cluster
from kafkalite.spark.send_offsets import send_offsets_to_transaction
from tests.chaos.harness import History, Nemesis, Workload, wait_converged
from tests.support.topics import create_topic
from tests.support.transactions import SENTINEL, write_sentinels
from tests.support.waiting import wait_for

Log = dict[tuple[str, int], dict[int, bytes]]
RETRY_BACKOFF_S = 0.1
"""Between asks for the committed offsets, as a Kafka client's ``retry.backoff.ms``."""
CLIENT = {"bootstrap.servers": "", "topic.metadata.refresh.interval.ms": 1000}


def transform(value: bytes) -> bytes:
    return b"T:" + value


@dataclass
class PipelineHistory:
    commits: list[Commit] = field(default_factory=list)  # each committed transaction's offsets
    reads: list[Poll] = field(default_factory=list)  # read_committed readers of the output
    committed_txns: int = 0
    aborted_txns: int = 0
    new_producers: int = 0
    input_duplicates: list[bytes] = field(default_factory=list)
    """Values the input topic holds twice: the idempotent input producer's anomaly, not
    the pipeline's (whose output must then hold their transform twice)."""
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass(frozen=True)
class Pipeline:
    cluster: Cluster
    source: str
    sink: str
    group: str
    partitions: int

    def config(self, **more: object) -> dict[str, object]:
        return {**CLIENT, "bootstrap.servers": self.cluster.bootstrap_servers, **more}


def run_input(pipeline: Pipeline, rate: int, stop: threading.Event) -> None:
    producer = Producer(pipeline.config(acks="all", **{"enable.idempotence": True}))
    seq, started = 0, time.monotonic()
    while not stop.is_set():
        while seq < int((time.monotonic() - started) * rate):
            try:
                producer.produce(
                    pipeline.source, b"in-%d" % seq, partition=seq % pipeline.partitions
                )
            except BufferError:
                break
            seq += 1
        producer.poll(0.01)
    assert producer.flush(60) == 0, "input records left unsent"


class Transformer:
    """One pipeline instance: consume a batch, produce its transforms and commit the
    batch's offsets in one transaction; on any failure abort (or, fenced or in doubt,
    start a new producer) and read again from the group's committed offsets."""

    def __init__(self, pipeline: Pipeline, index: int, history: PipelineHistory) -> None:
        self.pipeline = pipeline
        self.transactional_id = f"{pipeline.group}-{index}"
        self.history = history
        self.consumer = Consumer(
            pipeline.config(
                **{
                    "group.id": pipeline.group,
                    "isolation.level": "read_committed",
                    "enable.auto.commit": False,
                    "auto.offset.reset": "earliest",
                    "session.timeout.ms": 6000,
                }
            )
        )
        self.producer: Producer | None = None

    def new_producer(self, stop: threading.Event) -> None:
        while not stop.is_set():
            producer = Producer(
                self.pipeline.config(
                    **{
                        "transactional.id": self.transactional_id,
                        "transaction.timeout.ms": 30000,
                        "message.timeout.ms": 30000,
                        "linger.ms": 5,
                    }
                )
            )
            try:
                producer.init_transactions(30)
            except KafkaException:
                continue
            self.producer = producer
            with self.history.lock:
                self.history.new_producers += 1
            return

    def run(self, stop: threading.Event) -> None:
        self.consumer.subscribe([self.pipeline.source])
        self.new_producer(stop)
        at_committed = True
        while not stop.is_set():
            if not at_committed:  # a failed batch is read again before anything else
                at_committed = self.rewind()
                if not at_committed:  # an answer that failed at once: not a busy loop
                    stop.wait(RETRY_BACKOFF_S)
                continue
            batch = [m for m in self.consumer.consume(200, 0.3) if not m.error()]
            if batch and not self.process(batch, stop):
                at_committed = self.rewind()
        self.consumer.close()

    def process(self, batch: list[Message], stop: threading.Event) -> bool:
        producer = self.producer
        assert producer is not None
        offsets: dict[int, int] = {}
        try:
            producer.begin_transaction()
            for m in batch:
                if m.value() != SENTINEL:  # the end of the input: consumed, not transformed
                    producer.produce(
                        self.pipeline.sink, transform(m.value()), partition=m.partition()
                    )
                offsets[m.partition()] = m.offset() + 1
            tps = [TopicPartition(self.pipeline.source, p, o) for p, o in sorted(offsets.items())]
            metadata = self.consumer.consumer_group_metadata()
            send_offsets_to_transaction(producer, tps, metadata, 30)  # librdkafka#5456
            self.commit(producer)
        except KafkaException as exc:
            self.recover(producer, exc, stop)
            return False
        with self.history.lock:
            self.history.committed_txns += 1
            self.history.commits.extend(
                Commit(self.pipeline.group, (self.pipeline.source, p), o)
                for p, o in sorted(offsets.items())
            )
        return True

    @staticmethod
    def commit(producer: Producer) -> None:
        """commit_transaction, retried while librdkafka says a retry may still commit."""
        for _ in range(5):
            try:
                producer.commit_transaction(30)
                return
            except KafkaException as exc:
                if not exc.args[0].retriable():
                    raise
        producer.commit_transaction(30)

    def recover(self, producer: Producer, exc: KafkaException, stop: threading.Event) -> None:
        error = exc.args[0]
        if error.txn_requires_abort():
            try:
                producer.abort_transaction(30)
                with self.history.lock:
                    self.history.aborted_txns += 1
                return
            except KafkaException:
                pass
        self.new_producer(stop)  # fenced, fatal, or unsure how it ended: start over

    def rewind(self) -> bool:
        """Back to the group's committed offsets (stable ones: a commit still completing
        is waited for), so an aborted batch is read again; whether it got there. When the
        coordinator cannot answer (killed, cut off), the consumer still stands past the
        failed batch, and the next batch's commit would skip it: the caller asks again
        before it consumes anything (two CI runs lost exactly one batch's records, 200 and
        1, when this gave up after one try)."""
        try:
            assignment = self.consumer.assignment()
            for tp in self.consumer.committed(assignment, 30):
                tp.offset = tp.offset if tp.offset >= 0 else OFFSET_BEGINNING
                self.consumer.seek(tp)
        except KafkaException:
            return False
        return True


def run_reader(
    pipeline: Pipeline, name: str, stop: threading.Event, history: PipelineHistory
) -> None:
    """A read_committed reader of the output; it stops after the sentinels, or when told."""
    consumer = Consumer(
        pipeline.config(
            **{
                "group.id": name,
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
            }
        )
    )
    consumer.assign(
        [TopicPartition(pipeline.sink, p, OFFSET_BEGINNING) for p in range(pipeline.partitions)]
    )
    ended: set[int] = set()
    while len(ended) < pipeline.partitions and not stop.is_set():
        for m in consumer.consume(200, 0.3):
            if m.error():
                continue
            if m.value() == SENTINEL:
                ended.add(m.partition())
                continue
            with history.lock:
                history.reads.append(
                    Poll(name, (pipeline.sink, m.partition()), ((m.offset(), m.value()),))
                )
    consumer.close()


def read_log(pipeline: Pipeline, topic: str, isolation: str) -> Log:
    """The topic up to the sentinel on each partition, with offsets."""
    consumer = Consumer(
        pipeline.config(
            **{"group.id": f"final-{uuid.uuid4().hex[:6]}", "isolation.level": isolation}
        )
    )
    consumer.assign(
        [TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(pipeline.partitions)]
    )
    log: Log = {(topic, p): {} for p in range(pipeline.partitions)}
    ended: set[int] = set()
    deadline = time.monotonic() + 120
    while len(ended) < pipeline.partitions:
        assert time.monotonic() < deadline, f"{topic}: no sentinel on {set(range(3)) - ended}"
        for m in consumer.consume(1000, 0.5):
            if m.error():
                continue
            if m.value() == SENTINEL:
                ended.add(m.partition())
            else:
                log[(topic, m.partition())][m.offset()] = m.value()
    consumer.close()
    return log


def run(
    cluster: Cluster, workload: Workload, instances: int = 2, rate: int = 150
) -> tuple[Report, History, PipelineHistory]:
    suffix = uuid.uuid4().hex[:8]
    pipeline = Pipeline(cluster, f"in-{suffix}", f"out-{suffix}", f"pipeline-{suffix}", 3)
    for topic in (pipeline.source, pipeline.sink):
        create_topic(cluster.bootstrap_servers, topic, 3, 3, {"min.insync.replicas": "2"})
    faults, history = History(), PipelineHistory()
    input_stop, pipeline_stop, readers_stop, nemesis_stop = (threading.Event() for _ in range(4))
    source = threading.Thread(target=run_input, args=(pipeline, rate, input_stop), daemon=True)
    transformers = [Transformer(pipeline, i, history) for i in range(instances)]
    workers = [
        threading.Thread(target=t.run, args=(pipeline_stop,), daemon=True) for t in transformers
    ]
    readers = [
        threading.Thread(
            target=run_reader, args=(pipeline, f"reader-{i}", readers_stop, history), daemon=True
        )
        for i in range(2)
    ]
    nemesis = threading.Thread(
        target=Nemesis(cluster, workload, faults, pipeline.sink).run,
        args=(nemesis_stop,),
        daemon=True,
    )
    for thread in (source, *workers, *readers, nemesis):
        thread.start()
    try:
        time.sleep(workload.seconds)
        nemesis_stop.set()
        nemesis.join(120)
        _heal(cluster)
        input_stop.set()
        source.join(90)
        for topic in (pipeline.source, pipeline.sink):
            wait_converged(cluster, topic, 3, 90, idle=False)
        write_sentinels(cluster.bootstrap_servers, pipeline.source, 3)
        inputs = read_log(pipeline, pipeline.source, "read_uncommitted")
        ends = {p: max(records, default=-1) + 1 for (_, p), records in inputs.items()}
        try:
            drained = wait_for(
                lambda: _drained(history, pipeline, ends), 180, "the pipeline to consume all input"
            )
        except AssertionError as exc:  # the transactions as they are now, not when it began
            transactions = cluster.status()["transactions"]
            raise AssertionError(f"{exc}; transactions: {transactions}") from exc
        pipeline_stop.set()
        for thread in workers:
            thread.join(90)
        write_sentinels(cluster.bootstrap_servers, pipeline.sink, 3)
        for thread in readers:
            thread.join(120)
    finally:  # on any failure too: no thread outlives the test
        for event in (nemesis_stop, input_stop, pipeline_stop, readers_stop):
            event.set()
    values = [v for records in inputs.values() for v in records.values()]
    history.input_duplicates = sorted(v for v, n in Counter(values).items() if n > 1)
    consumed = {
        tp: {o: v for o, v in records.items() if o < drained[tp[1]]}
        for tp, records in inputs.items()
    }
    report = check_exactly_once(
        consumed,
        read_log(pipeline, pipeline.sink, "read_committed"),
        read_log(pipeline, pipeline.sink, "read_uncommitted"),
        history.reads,
        history.commits,
        transform,
    )
    return report, faults, history


def _heal(cluster: Cluster) -> None:
    """Undo every fault the nemesis may have left: links healed, brokers started."""
    for b in cluster.spec.brokers:
        cluster.heal(b.broker_id)
        if cluster.broker_states()[b.broker_id].value in ("dead", "stopped"):
            cluster.start(b.broker_id)


def _drained(
    history: PipelineHistory, pipeline: Pipeline, ends: dict[int, int]
) -> dict[int, int] | None:
    """The group's committed offset per partition, once it has passed every input record
    (the sentinel is consumed and committed too, and is not transformed into anything
    the checker counts: it stands past every input's offset)."""
    with history.lock:
        latest: dict[int, int] = {}
        for commit in history.commits:
            latest[commit.partition[1]] = max(latest.get(commit.partition[1], 0), commit.offset)
    if all(latest.get(p, 0) >= end for p, end in ends.items()):
        return latest
    return None
