"""How fast one broker serves warm partitions to confluent-kafka consumers, and whose CPU
that rate is made of (issue 29, item 2: ≥ 1 GB/s on this machine, page cache warm).

``bench.throughput``'s consume figure is one read of 200,000 records of 1 KiB (195 MB)
timed from the first ``consume()``: a 0.2-0.4 s measurement with the consumer's first
fetch round trips inside it. Here every read is 1 GiB per consumer (except ``short``,
which repeats that read to show what its start costs), the data just written (so in the
page cache), and each is taken ``REPEATS`` times with the load average:

- ``short``: ``bench.throughput``'s read (200,000 records from offset 0, one consumer,
  ``consume(10000)``) with the settings below;
- ``one``: one consumer reading one partition;
- ``two``: two consumer processes at once, each reading its own partition: the broker
  serves their sum;
- ``kcat``: the same partition read by ``kcat -C -o beginning -e`` (librdkafka in C with
  no Python per record; librdkafka 2.0.2 as Debian packages it), if kcat is installed;
- ``raw``: the same partition read by a client that decodes no record (:func:`raw`): the
  broker's own rate to one connection.

Each reports MB/s from before the ``Consumer`` is made to the last record (``mb_s``; for
``two``, all bytes over the span from the first start to the last end), the time to the
first ``consume()`` that returns records (``first_record_s``) and the rate after it
(``steady_mb_s``), CPU seconds per GB served (2**30 bytes) of the broker process and of
the client processes (all their threads; ``client_python_cpu_s_per_gb`` is the thread
that runs Python, which makes a ``Message`` per record, the rest is librdkafka fetching
and parsing), and the share of the machine's CPU left idle meanwhile
(``machine_idle_pct``): near 0, the rate was what the CPU left by other work allowed.
``kcat``'s MB/s run from its start. The broker's CPU includes its idle work, well under
1 % of a core (``bench.idle``: 1.7 % for three brokers).

The consumer is set up as a user after throughput would: 10 MiB per partition per fetch
(``max.partition.fetch.bytes``, as ``bench.throughput``; 1 MiB cost the broker twice
the CPU per GB, 50 MiB the client 35-45 % more), ``consume()`` of ``BATCH_BYTES`` (the
last call asks only for what is left: one that asks for more waits its whole timeout),
and ``fetch.queue.backoff.ms`` 10. librdkafka (since 2.1) stops
fetching a partition for ``fetch.queue.backoff.ms`` (1000 by default) whenever its
queue holds ``queued.min.messages`` (100,000) or ``queued.max.messages.kbytes`` (64 MiB):
an application slower than the fetcher, as every Python one here is, then drains the
queue and waits. With the default, a 1 GiB read stalled 1-3 times for 0.95-0.99 s each.

Both record sizes are measured. 1 KiB is ``bench.throughput``'s record, the one behind
the issue's "today 483 MB/s", and its figures are the ones the target is read against.
16 KiB records show the same broker when the client's cost per record matters less: at
1 KiB a consumer process spends 1.2-1.3 CPU-s per GB and the broker 0.3-0.6, so two
consumers fill 2 cores and the rate is the clients'. ``raw`` shows what the broker
serves when no client decodes.

Run: ``.venv/bin/python -m bench.consume``.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import resource
import shutil
import socket
import statistics
import struct
import subprocess
import time
from dataclasses import dataclass
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from typing import Any

import psutil
from confluent_kafka import Consumer, Producer, TopicPartition

from bench.common import (
    bench_cluster,
    cpu_seconds,
    describe_or_run,
    load_average,
    produce_all,
    record,
)
from bench.requests import fetch_frame, frame_of, log_end, metadata_of
from bench.throughput import PRODUCER
from kafkalite.cluster import Cluster
from kafkalite.protocol.codec import decode_response
from tests.support.topics import create_topic

GB = 2**30
MB = 2**20
CORES = int(psutil.cpu_count())
RECORD_SIZES = (1024, 16384)
PARTITIONS = 2
REPEATS = 3
SHORT_RECORDS = 200_000
"""``bench.throughput``'s read."""
BATCH_BYTES = 1000 * 1024
"""What one ``consume()`` asks for: 1,000 records of 1 KiB, 62 of 16 KiB. Over 1 GiB of
1 KiB records, ``consume(10000)`` (``bench.throughput``'s) cost the client 1.29-1.35
CPU-s per GB against 1.02-1.16 for ``consume(1000)`` and 0.88-0.95 for ``consume(300)``:
ten thousand ``Message`` objects, 10 MB, are made and freed per call, out of the cache.
``short`` keeps ``bench.throughput``'s 10,000."""
THROUGHPUT_BATCH = 10_000
PARTITION_FETCH_BYTES = 10 * MB
CONSUMER = {
    "group.id": "bench-consume",
    "enable.auto.commit": False,
    "fetch.max.bytes": 50 * MB,
    "max.partition.fetch.bytes": PARTITION_FETCH_BYTES,
    "fetch.queue.backoff.ms": 10,
}


@dataclass(frozen=True)
class Reading:
    """One consumer's read: ``records`` records of ``partition`` from offset 0."""

    bootstrap: str
    topic: str
    partition: int
    records: int
    record_bytes: int
    batch: int
    """Records per ``consume()``."""


@dataclass(frozen=True)
class Read:
    """What one consumer process measured (``time.monotonic``, the same clock in every
    process of the machine)."""

    start: float
    first_record: float
    end: float
    bytes_after_first: int
    cpu_s: float
    python_cpu_s: float


def _main_thread_cpu() -> float:
    """CPU time of the thread that runs Python (its id is the process id)."""
    pid = os.getpid()
    return float(
        next(t.user_time + t.system_time for t in psutil.Process().threads() if t.id == pid)
    )


def _consume(reading: Reading, barrier: Barrier, out: Queue[Read]) -> None:
    """Read ``reading`` once every consumer is ready to start; put what it measured.
    Fails unless the last record read is the partition's last: an error would be
    counted as a record otherwise."""
    barrier.wait()
    start, cpu, python_cpu = time.monotonic(), time.process_time(), _main_thread_cpu()
    consumer = Consumer({"bootstrap.servers": reading.bootstrap, **CONSUMER})
    consumer.assign([TopicPartition(reading.topic, reading.partition, 0)])
    seen, first, first_count, last = 0, 0.0, 0, None
    while seen < reading.records:
        messages = consumer.consume(min(reading.batch, reading.records - seen), timeout=1)
        if messages:
            if not seen:
                first, first_count = time.monotonic(), len(messages)
            seen += len(messages)
            last = messages[-1]
    end = time.monotonic()
    read = Read(
        start,
        first,
        end,
        (seen - first_count) * reading.record_bytes,
        time.process_time() - cpu,
        _main_thread_cpu() - python_cpu,
    )
    consumer.close()
    if last is None or last.error() is not None or last.offset() != reading.records - 1:
        raise RuntimeError(f"{reading}: the last record read was {last and last.offset()}")
    out.put(read)


def idle_mark() -> tuple[float, float]:
    """Now, and the CPU time the machine (every core) has spent idle since it started."""
    times = psutil.cpu_times()
    return time.monotonic(), float(times.idle + times.iowait)


def idle_pct_since(mark: tuple[float, float]) -> int:
    """The share of the machine's CPU left idle since ``mark``, in percent (counted in
    ticks of 10 ms: rough over a fraction of a second)."""
    now, idle = idle_mark()
    return round(100 * (idle - mark[1]) / ((now - mark[0]) * CORES))


def consumers(cluster: Cluster, readings: list[Reading]) -> dict[str, Any]:
    """The readings at once, each in a process of its own (started, then released
    together), the broker's CPU over them, and the machine's idle share meanwhile: near
    0 %, the rate was as high as the CPU left by other work allowed."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(len(readings) + 1)
    out: Queue[Read] = context.Queue()
    processes = [context.Process(target=_consume, args=(r, barrier, out)) for r in readings]
    for process in processes:
        process.start()
    load = load_average()
    broker, idle = cpu_seconds(cluster.pid(1)), idle_mark()
    barrier.wait()
    reads: list[Read] = []
    while len(reads) < len(processes):
        try:
            reads.append(out.get(timeout=1))
        except queue.Empty:
            if any(p.exitcode for p in processes):
                raise RuntimeError("a consumer failed (its traceback is above)") from None
    broker, idle_pct = cpu_seconds(cluster.pid(1)) - broker, idle_pct_since(idle)
    for process in processes:
        process.join()
    served = sum(r.records * r.record_bytes for r in readings)
    span = max(r.end for r in reads) - min(r.start for r in reads)
    steady = sum(r.bytes_after_first / (r.end - r.first_record) for r in reads)
    return {
        "mb_s": round(served / MB / span),
        "steady_mb_s": round(steady / MB),
        "first_record_s": round(max(r.first_record - r.start for r in reads), 3),
        "client_cpu_s_per_gb": round(sum(r.cpu_s for r in reads) / (served / GB), 2),
        "client_python_cpu_s_per_gb": round(sum(r.python_cpu_s for r in reads) / (served / GB), 2),
        "broker_cpu_s_per_gb": round(broker / (served / GB), 2),
        "machine_idle_pct": idle_pct,
        "load": [load, load_average()],
    }


def kcat(cluster: Cluster, reading: Reading) -> dict[str, Any]:
    """``kcat`` reading ``reading`` to /dev/null, with the consumer's fetch sizes."""
    command = ["kcat", "-C", "-b", reading.bootstrap, "-t", reading.topic]
    command += ["-p", str(reading.partition), "-o", "beginning", "-e", "-q"]
    command += ["-c", str(reading.records), "-f", "%s"]
    for name in ("fetch.max.bytes", "max.partition.fetch.bytes"):
        command += ["-X", f"{name}={CONSUMER[name]}"]
    load = load_average()
    broker, idle = cpu_seconds(cluster.pid(1)), idle_mark()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run(command, stdout=subprocess.DEVNULL, check=True)
    elapsed = time.monotonic() - start
    broker, idle_pct = cpu_seconds(cluster.pid(1)) - broker, idle_pct_since(idle)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    client = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
    return _figures(reading, elapsed, client, broker, idle_pct, load)


def _receive(sock: socket.socket, buffer: bytearray) -> memoryview:
    """One response frame, without its size prefix, read into ``buffer``. It is made
    once: a new 10 MiB buffer per answer, or a copy of it, cost the reader more CPU (its
    pages faulted in anew) than the broker spent serving it."""
    view = memoryview(buffer)
    _recv_into(sock, view[:4])
    size = struct.unpack_from(">i", buffer)[0]
    _recv_into(sock, view[:size])
    return view[:size].toreadonly()  # as kio takes it


def _recv_into(sock: socket.socket, view: memoryview) -> None:
    got = 0
    while got < len(view):
        read = sock.recv_into(view[got:])
        if not read:
            raise ConnectionError("the broker closed the connection")
        got += read


def raw(cluster: Cluster, reading: Reading) -> dict[str, Any]:
    """The broker's rate to one connection whose client decodes no record: librdkafka's
    Fetch (v16, ``max.partition.fetch.bytes`` of the partition), the next one sent when
    the answer is in memory and its batch headers walked for the next offset. What the
    broker and the kernel serve, against which the clients' figures above are read."""
    host, port = reading.bootstrap.split(",")[0].rsplit(":", 1)
    load = load_average()
    buffer = bytearray(PARTITION_FETCH_BYTES + MB)  # the records and the framing
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(frame_of(metadata_of(reading.topic)))
        topic_id = decode_response(3, 13, _receive(sock, buffer)).topics[0].topic_id
        broker, idle = cpu_seconds(cluster.pid(1)), idle_mark()
        start, cpu, offset = time.monotonic(), time.process_time(), 0
        while offset < reading.records:
            request = fetch_frame(
                topic_id,
                reading.partition,
                offset,
                partition_max_bytes=PARTITION_FETCH_BYTES,
            )
            sock.sendall(request)
            offset = log_end(_receive(sock, buffer))
        elapsed, cpu = time.monotonic() - start, time.process_time() - cpu
        broker, idle_pct = cpu_seconds(cluster.pid(1)) - broker, idle_pct_since(idle)
    return _figures(reading, elapsed, cpu, broker, idle_pct, load)


def fill(bootstrap: str, topic: str, record_bytes: int, records: int) -> None:
    """``PARTITIONS`` partitions of ``records`` records each, written as ``bench.throughput``
    writes them."""
    create_topic(bootstrap, topic, PARTITIONS, 1)
    producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER})
    for partition in range(PARTITIONS):
        produce_all(producer, topic, b"x" * record_bytes, records, partition)
    if producer.flush(300):
        raise RuntimeError(f"{topic}: records left unwritten")


def median_of(runs: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(run[key] for run in runs))


def _figures(
    reading: Reading, elapsed: float, client: float, broker: float, idle_pct: int, load: list[float]
) -> dict[str, Any]:
    """One read's figures: MB/s, each side's CPU-s per GB served, the machine's idle share."""
    served = reading.records * reading.record_bytes
    return {
        "mb_s": round(served / MB / elapsed),
        "client_cpu_s_per_gb": round(client / (served / GB), 2),
        "broker_cpu_s_per_gb": round(broker / (served / GB), 2),
        "machine_idle_pct": idle_pct,
        "load": [load, load_average()],
    }


def main() -> None:
    describe_or_run("bench.consume", __doc__)
    figures: dict[str, Any] = {}
    with bench_cluster(configs={"log.segment.bytes": "268435456"}) as cluster:
        bootstrap = cluster.bootstrap_servers
        for record_bytes in RECORD_SIZES:
            topic, records = f"consume-{record_bytes}", GB // record_bytes
            fill(bootstrap, topic, record_bytes, records)
            batch = BATCH_BYTES // record_bytes
            cases = {
                "one": [Reading(bootstrap, topic, 0, records, record_bytes, batch)],
                "two": [
                    Reading(bootstrap, topic, p, records, record_bytes, batch)
                    for p in range(PARTITIONS)
                ],
            }
            if record_bytes == 1024:
                short = Reading(bootstrap, topic, 0, SHORT_RECORDS, 1024, THROUGHPUT_BATCH)
                cases = {"short": [short], **cases}
            runs: dict[str, list[dict[str, Any]]] = {name: [] for name in cases}
            if shutil.which("kcat"):
                runs["kcat"] = []
            runs["raw"] = []
            for _ in range(REPEATS):  # case after case, so that a busy minute hits them all
                for name, readings in cases.items():
                    runs[name].append(consumers(cluster, readings))
                if "kcat" in runs:
                    runs["kcat"].append(kcat(cluster, cases["one"][0]))
                runs["raw"].append(raw(cluster, cases["one"][0]))
            figures[f"{record_bytes}_bytes"] = {
                name: {
                    "median_mb_s": median_of(case_runs, "mb_s"),
                    "runs": case_runs,
                }
                for name, case_runs in runs.items()
            }
    record(
        "consume",
        {
            "consumer": CONSUMER,
            "batch_bytes": BATCH_BYTES,
            "gb_per_consumer": 1,
            **figures,
        },
    )


if __name__ == "__main__":
    main()
