"""The card buttons' fault verbs, run off the kernel's main thread.

``Cluster.stop`` waits for a controlled shutdown and ``start`` for the broker to answer:
seconds, during which the notebook must stay usable. Each verb runs on a small thread
pool; while one is pending for a broker, that broker's buttons stay disabled, and the
outcome (or the error, in one line) is reported back through ``on_done``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from kafkalite.cluster import Cluster

VERBS = ("kill", "stop", "start", "pause", "resume", "isolate", "partial_partition", "heal")


class ActionRunner:
    def __init__(self, cluster: Cluster, on_done: Callable[[str], None]) -> None:
        self.cluster = cluster
        self.on_done = on_done
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="kafkalite-action")
        self._pending: dict[int | None, str] = {}
        self._lock = threading.Lock()

    def pending(self, broker_id: int | None) -> str | None:
        """The verb still running for this broker (None: the whole cluster), if any."""
        with self._lock:
            return self._pending.get(broker_id)

    def run(self, verb: str, broker_id: int | None = None) -> bool:
        """Start ``verb`` on ``broker_id``; False if one is already running for it."""
        if verb not in VERBS:
            raise ValueError(f"unknown verb {verb!r}; one of {', '.join(VERBS)}")
        with self._lock:
            if broker_id in self._pending:
                return False
            self._pending[broker_id] = verb
        self._pool.submit(self._do, verb, broker_id)
        return True

    def _do(self, verb: str, broker_id: int | None) -> None:
        target = "every broker" if broker_id is None else f"broker {broker_id}"
        try:
            if broker_id is None:
                if verb != "heal":
                    raise ValueError(f"{verb} needs a broker")
                self.cluster.heal()
            else:
                getattr(self.cluster, verb)(broker_id)
            message = f"{verb} {target}: done"
        except Exception as exc:  # reported on the dashboard, never raised in a thread
            message = f"{verb} {target} failed: {exc}"
        finally:
            with self._lock:
                self._pending.pop(broker_id, None)
        self.on_done(message)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
