"""Committed metadata crosses from the control plane to the main loop and is applied there,
in commit order, under supervision.

The quorum commits records on the control plane's thread; the broker's image, logs,
fetchers and coordinators live on the main loop. Each committed record, each snapshot and
each "replayed up to here" mark crosses with ``ControlPlane.to_main`` (which keeps their
order) and is applied by this publisher (Kafka's metadata loader hands its publishers the
same three things).

Why supervised: a bare callback on the main loop cannot fail loudly. asyncio logs its
exception and runs the next callback, so after a record that could not be applied (a disk
error creating a partition's log) the "replayed up to here" mark still came, the broker's
heartbeats reported the record applied, and the broker served on with local state that no
longer matched the metadata: no copy of a partition the controller counted it a replica,
maybe the leader, of. Here the first failure ends publishing, so nothing after it is
applied or reported applied, and ``on_fault`` halts the broker; the controller then fences
it and moves its leaderships, and its log says which record failed.

Kafka halts in the same position when loading metadata fails on a combined broker and
controller (every Kafka-Lite broker is one) and when a broker's only log directory fails;
a fault in its later publishing step is only counted (``metadataApplyErrorCount``), which
leaves the mismatch this module exists to prevent.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from kafkalite.supervision import DeathHandler

log = logging.getLogger(__name__)

FAULT_NAME = "metadata publisher"
"""The name ``on_fault`` is given, as a supervised task's would be."""


class MetadataPublisher:
    """Applies the control plane's hand-offs on the main loop; the first that fails stops
    the rest and goes to ``on_fault``. ``publish`` may be called from any thread; the
    work runs on the main loop only."""

    def __init__(
        self, to_main: Callable[..., None], on_fault: DeathHandler, name: str = FAULT_NAME
    ) -> None:
        """``to_main(callback, *args)`` runs a callback on the main loop, in order
        (``ControlPlane.to_main``); ``on_fault`` halts the broker."""
        self._to_main = to_main
        self._on_fault = on_fault
        self._name = name
        self.failed = False
        """Set on the main loop at the first failed apply; nothing is applied after it."""

    def publish(self, apply: Callable[..., None], *args: Any) -> None:
        """Have ``apply(*args)`` run on the main loop, after everything published before."""
        self._to_main(self._apply, apply, args)

    def _apply(self, apply: Callable[..., None], args: tuple[Any, ...]) -> None:
        if self.failed:
            return
        try:
            apply(*args)
        except Exception as exc:
            self.failed = True
            call = f"{getattr(apply, '__name__', apply)}({', '.join(map(_describe, args))})"
            log.critical("%s: %s failed", self._name, call, exc_info=exc)
            self._on_fault(self._name, exc)


def _describe(arg: Any) -> str:
    """An argument as the log shows it: a record by its type and fields, a list by its
    length (a snapshot's records)."""
    if isinstance(arg, list):
        return f"{len(arg)} records"
    return repr(arg)
