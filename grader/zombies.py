"""What a restart did to the transactions its killed instance left open on an output.

A producer killed mid-transaction leaves it open: a ``read_committed`` reader of the
partitions it wrote sees nothing past its first record (the last stable offset stays
there) until something ends it. Kafka has two ways (KIP-98): a new producer with the same
``transactional.id`` calls ``InitProducerId``, which fences the killed one (a *zombie*)
and aborts its transaction at once; or, if none ever comes, the coordinator aborts it
once it has been open for ``transaction.timeout.ms`` (60 s by default in the Java client
and librdkafka). An exactly-once restart is the first: that is what makes it safe.

Judging by what a reader sees right after the restart cannot tell the two apart: once a
restart outlasts the timeout (a Spark driver's two JVM starts on a loaded machine do),
the zombie's transaction has been aborted either way and the output is the same. The
coordinators' own record can: :func:`left_open` names the transactions on a topic that
are still open, or that only the timeout ended, with no ``InitProducerId`` of their
``transactional.id`` after it. Pure logic over ``lab.status()["transactions"]`` and the
cluster's events; the test asks them once the restarted instance has finished.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

ONGOING = "Ongoing"
DECIDED = frozenset({"PrepareCommit", "PrepareAbort"})
"""Decided, markers not yet all written: what a reader sees is about to change."""
TIMED_OUT, PREPARE_ABORT, FENCED = "txn_timed_out", "txn_prepare_abort", "producer_fenced"


@dataclass(frozen=True, slots=True)
class LeftOpen:
    """A transaction on the topic that no producer of its ``transactional.id`` ended."""

    transactional_id: str
    how: str
    """``still open`` or ``aborted by the broker's transaction timeout``."""


def left_open(
    topic: str, transactions: Iterable[Mapping[str, Any]], events: Iterable[Mapping[str, Any]]
) -> list[LeftOpen]:
    """The transactions on ``topic`` no producer ended: open now, or aborted by the
    coordinator's timeout with no ``InitProducerId`` (a ``producer_fenced`` event) of
    their ``transactional.id`` afterwards. ``events`` in time order, as the cluster
    gives them; a restart that took over the id after the timeout (a slow one) is not
    blamed for it."""
    found = [
        LeftOpen(str(t["transactional_id"]), "still open")
        for t in transactions
        if t.get("state") == ONGOING and _on(topic, t.get("partitions") or ())
    ]
    timed_out: set[str] = set()
    left: dict[str, None] = {}  # in the order they were aborted
    for event in events:
        txn_id = str(event.get("transactional_id"))
        if event.get("type") == TIMED_OUT:
            timed_out.add(txn_id)
        elif event.get("type") == PREPARE_ABORT and txn_id in timed_out:
            timed_out.discard(txn_id)
            if _on(topic, event.get("partitions") or ()):
                left[txn_id] = None
        elif event.get("type") == FENCED:  # taken over, before or after its abort
            timed_out.discard(txn_id)
            left.pop(txn_id, None)
    aborted = "aborted by the broker's transaction timeout"
    return found + [LeftOpen(txn_id, aborted) for txn_id in left]


def settled(topic: str, transactions: Iterable[Mapping[str, Any]]) -> bool:
    """Whether every decided transaction on ``topic`` has its markers written (none is
    between its decision and its markers), so a reader sees its final outcome."""
    return not any(
        t.get("state") in DECIDED and _on(topic, t.get("partitions") or ()) for t in transactions
    )


def _on(topic: str, partitions: Iterable[str]) -> bool:
    """Whether one of ``partitions`` (named ``topic-partition``) is of ``topic``."""
    return any(name.rpartition("-")[0] == topic for name in partitions)
