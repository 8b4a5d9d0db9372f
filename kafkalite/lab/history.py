"""A history: every send, acknowledgement, error, read and commit of a lab's clients.

The notebook's producers and consumers append one :class:`Op` per thing they did or were
told, stamped with the wall clock (the brokers' events use the same clock, so a timeline
can put both on one axis). A history converts itself into the inputs of
:mod:`kafkalite.checker.history` — acknowledged writes, polls, commits and each producer's
send order — so the labs judge a run with the same checker as the chaos tests.

Pure bookkeeping: no clients, no sockets; tests build histories by hand.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum

from kafkalite.checker.history import Ack, Commit, Partition, Poll, Send


class OpKind(StrEnum):
    SEND = "send"
    """A producer handed a record to its client library (not yet on any broker)."""
    ACK = "ack"
    """The client reported the record written (at ``offset``, after ``latency_ms``)."""
    ERROR = "error"
    """The client gave up on the record (``error`` names why, after ``latency_ms``)."""
    READ = "read"
    """A consumer received the record at ``offset``."""
    COMMIT = "commit"
    """A consumer group committed ``offset`` (the next offset to read) for a partition."""


@dataclass(frozen=True, slots=True)
class Op:
    time: float
    """Wall-clock seconds (``time.time()``) when it happened."""
    kind: OpKind
    client: str
    """The producer's or consumer's name (``client_id``); a commit's group id."""
    topic: str
    partition: int | None
    """None for a send whose partition the client had not chosen yet."""
    value: bytes | None = None
    offset: int | None = None
    latency_ms: float | None = None
    """For an ack or an error: how long since the send."""
    error: str | None = None
    seek: bool = False
    """For a read: the first one after a seek or an assignment, where going back is legal."""


class History:
    """The ops of one experiment, in the order they were recorded.

    Appending is thread-safe: kafka-python runs its callbacks on its I/O thread while the
    notebook's thread sends and polls.
    """

    def __init__(self, ops: Iterable[Op] = ()) -> None:
        self.ops: list[Op] = list(ops)
        self._lock = threading.Lock()

    def record(self, op: Op) -> None:
        with self._lock:
            self.ops.append(op)

    def __len__(self) -> int:
        return len(self.ops)

    def __iter__(self) -> Iterator[Op]:
        return iter(self.snapshot())

    def snapshot(self) -> list[Op]:
        with self._lock:
            return list(self.ops)

    def of(self, kind: OpKind) -> list[Op]:
        return [op for op in self.snapshot() if op.kind == kind]

    @property
    def span(self) -> tuple[float, float] | None:
        """First and last op times, or None for an empty history."""
        ops = self.snapshot()
        if not ops:
            return None
        times = [op.time for op in ops]
        return min(times), max(times)

    def partitions(self) -> set[Partition]:
        """Every partition a record of this history was acknowledged on or read from."""
        return {
            (op.topic, op.partition)
            for op in self.snapshot()
            if op.partition is not None and op.kind in (OpKind.ACK, OpKind.READ)
        }

    def summary(self) -> dict[str, int]:
        """How many ops of each kind (for a one-line report)."""
        ops = self.snapshot()
        return {kind.value: sum(op.kind == kind for op in ops) for kind in OpKind}

    # ---- the checker's inputs --------------------------------------------------------

    def acks(self) -> list[Ack]:
        return [
            Ack((op.topic, op.partition), op.value or b"", op.offset)
            for op in self.of(OpKind.ACK)
            if op.partition is not None
        ]

    def polls(self) -> list[Poll]:
        return [
            Poll(op.client, (op.topic, op.partition), ((op.offset, op.value or b""),), op.seek)
            for op in self.of(OpKind.READ)
            if op.partition is not None and op.offset is not None
        ]

    def commits(self) -> list[Commit]:
        return [
            Commit(op.client, (op.topic, op.partition), op.offset)
            for op in self.of(OpKind.COMMIT)
            if op.partition is not None and op.offset is not None
        ]

    def sends(self) -> list[Send]:
        """Each acknowledged record in the order its producer sent it, with the partition
        it landed on (a send does not know its partition until the ack says)."""
        ops = self.snapshot()
        landed = {
            (op.client, op.value): op.partition
            for op in ops
            if op.kind == OpKind.ACK and op.partition is not None
        }
        sends = []
        for op in ops:
            if op.kind != OpKind.SEND:
                continue
            partition = landed.get((op.client, op.value))
            if partition is not None:
                sends.append(Send(op.client, (op.topic, partition), op.value or b""))
        return sends


def combine(*histories: History) -> History:
    """One history holding every op of ``histories``, in time order."""
    ops = [op for history in histories for op in history.snapshot()]
    return History(sorted(ops, key=lambda op: op.time))
