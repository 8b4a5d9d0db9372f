"""The fault verbs of a :class:`~kafkalite.lab.lab.Lab`: ``lab.kill(2)``, ``lab.heal()``.

Each breaks or mends one broker through the lab's cluster, which writes the fault window
the timeline shades (``faults``). ``lab.reset()`` undoes them all at once.
"""

from __future__ import annotations

from kafkalite.lab.faults import ObservedCluster


class FaultVerbs:
    """The cluster's verbs, as methods of the ``Lab`` that inherits them."""

    cluster: ObservedCluster

    def kill(self, broker: int) -> None:
        """SIGKILL the broker: a crash, no controlled shutdown (``start`` brings it back)."""
        self.cluster.kill(broker)

    def stop(self, broker: int) -> None:
        """Controlled shutdown: its leaderships move away first (``start`` brings it back)."""
        self.cluster.stop(broker)

    def start(self, broker: int) -> None:
        self.cluster.start(broker)

    def restart(self, broker: int) -> None:
        self.cluster.restart(broker)

    def pause(self, broker: int) -> None:
        """SIGSTOP: a hung broker that keeps its connections and answers nothing."""
        self.cluster.pause(broker)

    def resume(self, broker: int) -> None:
        self.cluster.resume(broker)

    def isolate(self, broker: int) -> None:
        """Cut the broker off from its peers; its own clients still reach it."""
        self.cluster.isolate(broker)

    def slow(self, broker: int, delay_ms: int = 500) -> None:
        """Deliver the broker's replication traffic ``delay_ms`` late."""
        self.cluster.slow(broker, delay_ms)

    def partial_partition(self, broker: int) -> None:
        """Cut the broker from its replication peers, both ways, while it still reaches the
        controller quorum: a leader cut off this way is not fenced, and shrinks its ISR."""
        self.cluster.partial_partition(broker)

    def heal(self, broker: int | None = None) -> None:
        """Undo ``isolate``, ``slow`` and ``partial_partition`` (for every broker when
        ``broker`` is None)."""
        self.cluster.heal(broker)
