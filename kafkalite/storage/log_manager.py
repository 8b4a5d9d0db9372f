"""All partition logs of one broker's data directory, and the lock that makes it ours.

Partition directories are named ``<topic>-<partition>``; topic names may contain '-', so
the partition is the part after the last '-'. A deleted partition's directory is first
renamed ``<topic>-<partition>.<uuid>-delete`` (atomic), then removed.

A topic deleted and created again has the same name and a new topic id, so each partition
directory records the id of the topic it belongs to in ``partition.metadata`` (Kafka's
file, ``version: 0`` / ``topic_id: <id>``): a directory left by an older topic of the same
name is never taken for the new topic's log.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kafkalite.storage.config import LogConfig
from kafkalite.storage.errors import LogDirLockedError
from kafkalite.storage.log import Log

log = logging.getLogger(__name__)

PARTITION_METADATA = "partition.metadata"


def read_topic_id(directory: Path) -> str | None:
    """The topic id ``partition.metadata`` records (None for a directory without one)."""
    try:
        lines = (directory / PARTITION_METADATA).read_text().splitlines()
    except FileNotFoundError:
        return None
    fields = dict(line.split(": ", 1) for line in lines if ": " in line)
    return fields.get("topic_id")


def write_topic_id(directory: Path, topic_id: str) -> None:
    path = directory / PARTITION_METADATA
    temporary = path.with_suffix(".tmp")
    temporary.write_text(f"version: 0\ntopic_id: {topic_id}\n")
    os.replace(temporary, path)


def parse_partition_dir(name: str) -> tuple[str, int] | None:
    topic, sep, partition = name.rpartition("-")
    if not sep or not topic or not partition.isdigit():
        return None
    return topic, int(partition)


class LogManager:
    def __init__(
        self, data_dir: Path, default_config: LogConfig, now_ms: Callable[[], int]
    ) -> None:
        self.data_dir = data_dir
        self.default_config = default_config
        self.now_ms = now_ms
        data_dir.mkdir(parents=True, exist_ok=True)
        self._lock_fd = _lock(data_dir)
        self.flusher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="log-flusher")
        """fsyncs closed segments off the event loop (each takes milliseconds)."""
        self.logs: dict[tuple[str, int], Log] = {}
        self.topic_ids: dict[tuple[str, int], str] = {}
        started = time.monotonic()
        for path in sorted(data_dir.iterdir()):
            if path.name.endswith("-delete"):
                shutil.rmtree(path, ignore_errors=True)
                continue
            parsed = parse_partition_dir(path.name) if path.is_dir() else None
            if parsed is not None:
                self.logs[parsed] = Log.open(path, default_config, now_ms, self.flusher)
                topic_id = read_topic_id(path)
                if topic_id is not None:
                    self.topic_ids[parsed] = topic_id
        log.info(
            "loaded %d logs (%.1f MiB) in %.3f s",
            len(self.logs),
            sum(plog.size_in_bytes for plog in self.logs.values()) / 2**20,
            time.monotonic() - started,
        )

    def get(self, topic: str, partition: int) -> Log | None:
        return self.logs.get((topic, partition))

    def get_or_create(
        self, topic: str, partition: int, config: LogConfig, topic_id: str | None = None
    ) -> Log:
        """The partition's log, created if there is none. With ``topic_id``, a log that
        belonged to another topic of the same name (deleted since) is deleted first."""
        key = (topic, partition)
        existing = self.logs.get(key)
        recorded = self.topic_ids.get(key)
        stale = topic_id is not None and recorded is not None and recorded != topic_id
        if existing is not None and stale:
            log.info("%s-%d belonged to topic id %s: deleted", topic, partition, recorded)
            self.delete(topic, partition)
            existing = None
        if existing is None:
            existing = Log.open(
                self.data_dir / f"{topic}-{partition}", config, self.now_ms, self.flusher
            )
            self.logs[key] = existing
        else:
            existing.update_config(config)
        if topic_id is not None and recorded != topic_id:
            write_topic_id(existing.dir, topic_id)
            self.topic_ids[key] = topic_id
        return existing

    def delete(self, topic: str, partition: int) -> None:
        plog = self.logs.pop((topic, partition), None)
        self.topic_ids.pop((topic, partition), None)
        if plog is None:
            return
        for segment in plog.segments:
            segment.close()
        doomed = plog.dir.with_name(f"{plog.dir.name}.{uuid.uuid4().hex}-delete")
        os.replace(plog.dir, doomed)
        shutil.rmtree(doomed, ignore_errors=True)

    def checkpoint_recovery_points(self) -> None:
        """Every log's recovery point past its finished background fsyncs (Kafka's
        ``log.flush.offset.checkpoint.interval.ms`` task)."""
        for plog in self.logs.values():
            plog.checkpoint_recovery_point()

    def close_all(self) -> None:
        for plog in self.logs.values():
            plog.close()
        self.flusher.shutdown(wait=True)
        os.close(self._lock_fd)


def _lock(data_dir: Path) -> int:
    path = data_dir / ".lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = path.read_text().strip() or "another process"
        os.close(fd)
        raise LogDirLockedError(f"{data_dir} is in use by pid {holder}") from None
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    return fd
