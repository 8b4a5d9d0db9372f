"""The background refresh: poll the cluster, update the model, hand the state to the view.

It runs on its own daemon thread so the notebook's kernel never waits for it. Every call
it makes is bounded (``timeout_s``), and brokers that cannot answer (paused, dead,
stopped) are not asked at all, so a hung broker slows no refresh. A failed refresh is
recorded in ``last_error`` and the next one is tried: the poller itself never dies of a
broken cluster.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from kafkalite.cluster import Cluster
from kafkalite.lab.dashboard.groups import GroupOffsetReader
from kafkalite.lab.dashboard.model import DashboardModel, DashboardState

REFRESH_INTERVAL_S = 0.5
REFRESH_TIMEOUT_S = 1.0


class Poller:
    def __init__(
        self,
        cluster: Cluster,
        model: DashboardModel,
        on_state: Callable[[DashboardState], None],
        interval_s: float = REFRESH_INTERVAL_S,
        timeout_s: float = REFRESH_TIMEOUT_S,
        groups: GroupOffsetReader | None = None,
    ) -> None:
        self.cluster = cluster
        self.model = model
        self.on_state = on_state
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self.groups = groups
        self.events = cluster.event_stream(timeout_s)
        self.last_error: str | None = None
        self.refreshes = 0
        """How many refreshes completed since the poller was made."""
        self.refresh_times: deque[float] = deque(maxlen=120)
        """Monotonic end times of the latest refreshes (for ``refresh_rate``)."""
        self._lock = threading.Lock()  # one refresh at a time: the model is not shared
        self._side = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kafkalite-events")
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def refresh(self) -> DashboardState:
        """One poll, on the caller's thread; every network call in it is bounded."""
        with self._lock:
            self.cluster.follow_other_shells()
            states = self.cluster.broker_states()
            # both ask every answering broker, each bounded by timeout_s: side by side, a
            # slow broker costs one timeout per refresh, not two
            events_future = self._side.submit(self.events.poll, states)
            snapshot = self.cluster.status(self.timeout_s, states)
            events = events_future.result()
            offsets = self.groups.latest() if self.groups is not None else None
            groups = self.groups.latest_groups() if self.groups is not None else ()
            state = self.model.update(snapshot, events, int(time.time() * 1000), offsets, groups)
            self.refresh_times.append(time.monotonic())
            self.refreshes += 1
        self.on_state(state)
        return state

    def start(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run, name="kafkalite-dashboard", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=self.timeout_s * 4)
            self._thread = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def refresh_rate(self, window_s: float = 10.0) -> float:
        """Refreshes per second over the last ``window_s`` seconds."""
        now = time.monotonic()
        recent = [t for t in self.refresh_times if now - t <= window_s]
        if len(recent) < 2:
            return 0.0
        return (len(recent) - 1) / (recent[-1] - recent[0])

    def _run(self) -> None:
        while not self._stopping.is_set():
            started = time.monotonic()
            try:
                self.refresh()
                self.last_error = None
            except Exception as exc:  # a broken refresh must not end the live view
                self.last_error = f"{type(exc).__name__}: {exc}"
            elapsed = time.monotonic() - started
            self._stopping.wait(max(0.0, self.interval_s - elapsed))
