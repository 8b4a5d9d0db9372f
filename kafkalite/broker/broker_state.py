"""Where a broker is in its life, by Kafka's own names (``org.apache.kafka.metadata.BrokerState``).

Why states and not a flag: what a committed metadata record does on this broker depends
on them. While ``STARTING`` the broker replays the metadata log into its image only: the
records are history (the events it emits then are marked ``replay``), and its local logs
are reconciled once with the caught-up image, so that a topic deleted and created again
under its name keeps its new log. From ``RECOVERY`` on, each committed record is applied
to the logs as it arrives.

Kafka's transitions, one way only::

    NOT_RUNNING -> STARTING -> RECOVERY -> RUNNING -> PENDING_CONTROLLED_SHUTDOWN -> SHUTTING_DOWN

(any state may go straight to ``SHUTTING_DOWN``: a stop asked during start-up).
"""

from __future__ import annotations

import threading
from enum import Enum


class BrokerState(Enum):
    NOT_RUNNING = "not_running"
    """Just started: nothing read yet."""
    STARTING = "starting"
    """Catching up with the metadata log: replaying it into the image."""
    RECOVERY = "recovery"
    """Caught up, logs reconciled; not yet registered and unfenced by the controller."""
    RUNNING = "running"
    """Registered and serving clients."""
    PENDING_CONTROLLED_SHUTDOWN = "pending_controlled_shutdown"
    """Handing its leaderships to other replicas before it stops."""
    SHUTTING_DOWN = "shutting_down"
    """Closing its listeners, the control plane and its logs."""


_ORDER = list(BrokerState)


class IllegalBrokerStateTransition(RuntimeError):
    """A move Kafka's broker never makes: a bug in the broker, not a fault to handle."""


class BrokerStateMachine:
    """The broker's current ``BrokerState``; it only moves forward.

    Thread-safe: the main loop moves it, the control plane's event emits read it."""

    def __init__(self) -> None:
        self._state = BrokerState.NOT_RUNNING
        self._lock = threading.Lock()

    @property
    def state(self) -> BrokerState:
        return self._state

    @property
    def replaying_metadata(self) -> bool:
        """Whether the metadata records applied now are history being replayed at start-up."""
        return self._state is BrokerState.STARTING

    def move_to(self, target: BrokerState) -> None:
        """Take the next step of Kafka's order (or stop from anywhere): never back, never
        skipping a step on the way up."""
        with self._lock:
            step_up = _ORDER.index(target) == _ORDER.index(self._state) + 1
            if not (step_up or target is BrokerState.SHUTTING_DOWN) or target is self._state:
                raise IllegalBrokerStateTransition(f"{self._state.name} -> {target.name}")
            self._state = target
