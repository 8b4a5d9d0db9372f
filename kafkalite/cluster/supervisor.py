"""The lab supervisor: the Python API notebooks, tests, the CLI and the grader share.

``Cluster.up`` starts brokers through a backend and waits until each one's introspection
endpoint answers; ``status()`` merges every broker's view into one snapshot. The fault
verbs are the backend's, recorded in ``cluster.json`` so another shell sees them.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Collection, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Self

from kafkalite.cluster.backend import BrokerState, ClusterBackend
from kafkalite.cluster.event_stream import EventStream
from kafkalite.cluster.introspection_http import HTTP_TIMEOUT_S, fetch_json
from kafkalite.cluster.local import LocalProcessBackend
from kafkalite.cluster.snapshot import merge_status
from kafkalite.cluster.spec import SPEC_FILE, BrokerSpec, ClusterError, ClusterSpec, check_port_free
from kafkalite.cluster.verb_lock import cluster_lock
from kafkalite.metadata.config_defs import InvalidConfigError, validate_broker_configs


class Cluster:
    def __init__(self, spec: ClusterSpec, backend: ClusterBackend | None = None) -> None:
        self.spec = spec
        self.backend: ClusterBackend = backend or LocalProcessBackend()
        self._spec_stamp: int | None = None

    # ---- lifecycle -----------------------------------------------------------------

    @classmethod
    def up(
        cls,
        root: Path,
        brokers: int = 1,
        base_port: int = 9092,
        configs: dict[str, str] | None = None,
        ready_timeout_s: float | None = None,
        backend: ClusterBackend | None = None,
    ) -> Self:
        root = Path(root)
        spec = ClusterSpec.build(root, brokers, base_port, configs or {})
        try:
            validate_broker_configs(spec.configs, static=True)
        except InvalidConfigError as exc:
            raise ClusterError(str(exc)) from None
        if (root / "cluster.json").exists():
            existing = cls(ClusterSpec.load(root), backend)
            running = [
                b.broker_id
                for b in existing.spec.brokers
                if existing.backend.state(b) in (BrokerState.RUNNING, BrokerState.PAUSED)
            ]
            if running:
                raise ClusterError(
                    f"{root} is owned by a running cluster (brokers {running}); "
                    f"run `kafkalite down --dir {root}` first"
                )
            spec.cluster_id = existing.spec.cluster_id  # the same cluster, started again
        for b in spec.brokers:
            for port in (b.port, b.admin_port, b.controller_port):
                check_port_free(b.host, port)
        for link in spec.links():
            check_port_free("127.0.0.1", link.listen_port)
        root.mkdir(parents=True, exist_ok=True)
        spec.format_storage()
        cluster = cls(spec, backend)
        cluster.backend.start_network(spec)
        cluster.backend.start_all([(b, spec.broker_configs(b.broker_id)) for b in spec.brokers])
        spec.save()
        try:
            for b in spec.brokers:
                cluster.wait_ready(b.broker_id, ready_timeout_s)
        except ClusterError:
            cluster.down()
            raise
        return cluster

    @classmethod
    def attach(cls, root: Path, backend: ClusterBackend | None = None) -> Self:
        return cls(ClusterSpec.load(Path(root)), backend)

    def wait_ready(self, broker_id: int, timeout_s: float | None = None) -> None:
        """Until the broker answers ``/state``, at most ``timeout_s`` (by default its
        backend's bound)."""
        broker = self.spec.broker(broker_id)
        if timeout_s is None:
            timeout_s = self.backend.ready_timeout_s
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if fetch_json(broker.host, broker.admin_port, "/state") is not None:
                return
            if self.backend.state(broker) in (BrokerState.DEAD, BrokerState.STOPPED):
                raise ClusterError(
                    f"broker {broker_id} exited during start-up; see "
                    f"{broker.data_dir}/broker.log:\n{_log_tail(broker)}"
                )
            time.sleep(0.05)
        raise ClusterError(f"broker {broker_id} did not become ready in {timeout_s:.0f} s")

    def down(self) -> None:
        """Stop every broker at once (each does a controlled shutdown; one that had to be
        killed reads as dead afterwards), including those another shell started since
        this object was made (``kafkalite start 2`` in a terminal): left out, they ran on."""
        with self._verb():
            with ThreadPoolExecutor(max_workers=len(self.spec.brokers)) as pool:
                list(pool.map(self.backend.stop, self.spec.brokers))
            self.backend.stop_network(self.spec)

    @contextlib.contextmanager
    def _verb(self) -> Iterator[None]:
        """Act on the cluster as the other shells left it, and record the result for them
        (``verb_lock``): one verb at a time, each on what the one before it wrote."""
        with cluster_lock(Path(self.spec.root)):
            self.follow_other_shells(force=True)
            yield
            self.spec.save()

    @property
    def bootstrap_servers(self) -> str:
        return self.spec.bootstrap_servers

    def pid(self, broker_id: int) -> int:
        pid = self.spec.broker(broker_id).pid
        if pid is None:
            raise ClusterError(f"broker {broker_id} has never been started")
        return pid

    # ---- faults --------------------------------------------------------------------

    def _apply(self, broker_id: int, verb: str) -> BrokerSpec:
        with self._verb():
            broker = self.spec.broker(broker_id)
            getattr(self.backend, verb)(broker)
        return broker

    def kill(self, broker_id: int) -> None:
        self._apply(broker_id, "kill")

    def stop(self, broker_id: int) -> None:
        """Controlled shutdown; a broker that had to be killed reads as dead afterwards."""
        self._apply(broker_id, "stop")

    def pause(self, broker_id: int) -> None:
        self._apply(broker_id, "pause")

    def resume(self, broker_id: int) -> None:
        self._apply(broker_id, "resume")

    def isolate(self, broker_id: int) -> None:
        """Cut the broker off from its peers and the quorum; its clients still reach it."""
        self.spec.broker(broker_id)
        self.backend.isolate(self.spec, broker_id)

    def partial_partition(self, broker_id: int) -> None:
        """Cut the broker's replication links to and from every peer, but not its links to
        the controller quorum: a leader cut off this way keeps its session, shrinks its
        ISR to itself and goes on leading (``isolate`` cuts everything)."""
        self.spec.broker(broker_id)
        self.backend.partial_partition(self.spec, broker_id)

    def heal(self, broker_id: int | None = None) -> None:
        """Undo ``isolate``, ``slow`` and ``partial_partition`` (for every broker when
        ``broker_id`` is None)."""
        if broker_id is not None:
            self.spec.broker(broker_id)
        self.backend.heal(self.spec, broker_id)

    def slow(self, broker_id: int, delay_ms: int = 500) -> None:
        """Delay the broker's follower fetching by ``delay_ms`` in each direction."""
        self.spec.broker(broker_id)
        if delay_ms < 0:
            raise ClusterError(f"delay must be at least 0 ms, got {delay_ms}")
        self.backend.slow(self.spec, broker_id, delay_ms)

    def start(self, broker_id: int, wait: bool = True) -> None:
        with self._verb():
            broker = self.spec.broker(broker_id)
            if self.backend.state(broker) in (BrokerState.RUNNING, BrokerState.PAUSED):
                raise ClusterError(f"broker {broker_id} is already running")
            self.backend.start(broker, self.spec.broker_configs(broker_id))
        if wait:
            self.wait_ready(broker_id)

    def restart(self, broker_id: int, wait: bool = True) -> None:
        with self._verb():
            broker = self.spec.broker(broker_id)
            if self.backend.state(broker) in (BrokerState.RUNNING, BrokerState.PAUSED):
                self.backend.stop(broker)
            self.backend.start(broker, self.spec.broker_configs(broker_id))
        if wait:
            self.wait_ready(broker_id)

    # ---- seeing inside -------------------------------------------------------------

    def follow_other_shells(self, force: bool = False) -> None:
        """Take the broker processes another shell recorded in ``cluster.json`` since this
        object loaded it (``kafkalite start 2`` in a terminal gives broker 2 a new pid), so
        a long-lived holder such as a notebook's dashboard does not report it dead
        (``force``: read it even if its time stamp looks unchanged, as a verb does)."""
        path = Path(self.spec.root) / SPEC_FILE
        try:
            stamp = path.stat().st_mtime_ns
        except OSError:
            return
        if stamp == self._spec_stamp and not force:
            return
        self._spec_stamp = stamp
        try:
            on_disk = ClusterSpec.load(Path(self.spec.root))
        except ClusterError:
            return
        for broker in self.spec.brokers:
            recorded = next((b for b in on_disk.brokers if b.broker_id == broker.broker_id), None)
            if recorded is not None:
                broker.pid, broker.stopped = recorded.pid, recorded.stopped

    def broker_states(self) -> dict[int, BrokerState]:
        isolated = self.backend.isolated(self.spec)
        states = {b.broker_id: self.backend.state(b) for b in self.spec.brokers}
        return {
            b: BrokerState.ISOLATED if s == BrokerState.RUNNING and b in isolated else s
            for b, s in states.items()
        }

    def introspect(
        self, broker_id: int, timeout_s: float = HTTP_TIMEOUT_S
    ) -> dict[str, Any] | None:
        broker = self.spec.broker(broker_id)
        result: dict[str, Any] | None = fetch_json(
            broker.host, broker.admin_port, "/state", timeout_s
        )
        return result

    def events(
        self, since: int = 0, brokers: Collection[int] | None = None
    ) -> list[dict[str, Any]]:
        """Every reachable broker's events after ``since`` (only those ``brokers`` record,
        if given: a paused one is never asked, it would hold the call for its timeout), in
        time order."""
        events: list[dict[str, Any]] = []
        for b in self.spec.brokers:
            if brokers is not None and b.broker_id not in brokers:
                continue
            found = fetch_json(b.host, b.admin_port, f"/events?since={since}")
            if found is not None:
                events.extend(found["events"])
        return sorted(events, key=lambda e: (e["time_ms"], e["broker"], e["seq"]))

    def event_stream(self, timeout_s: float = 1.0) -> EventStream:
        """A follower of every broker's events: each ``poll()`` returns only new ones."""
        return EventStream(self.spec, timeout_s)

    def status(
        self,
        timeout_s: float = HTTP_TIMEOUT_S,
        states: dict[int, BrokerState] | None = None,
    ) -> dict[str, Any]:
        """One merged snapshot; brokers that can answer are asked at once, so a refresh
        takes as long as the slowest broker, at most ``timeout_s``. Pass ``states`` when
        the caller already read them (``broker_states``) for the same moment; otherwise
        a broker that did not answer is looked at again once the others have, so that one
        paused, killed or isolated while it was being asked shows as it is now, not as it
        was a timeout ago (``status --watch`` showed a ``pause`` 2.5 s late)."""
        given = states
        states = given if given is not None else self.broker_states()
        asked = [
            b.broker_id
            for b in self.spec.brokers
            if states[b.broker_id] in (BrokerState.RUNNING, BrokerState.ISOLATED)
        ]
        views: dict[int, dict[str, Any] | None] = dict.fromkeys(states)
        if asked:
            with ThreadPoolExecutor(max_workers=len(asked)) as pool:
                answers = pool.map(lambda b: self.introspect(b, timeout_s), asked)
                views.update(zip(asked, answers, strict=True))
            if given is None and any(views[b] is None for b in asked):
                now = self.broker_states()
                states = {
                    b: now[b] if b in asked and views[b] is None else s for b, s in states.items()
                }
        return merge_status(
            self.spec,
            states,
            views,
            self.backend.slowed(self.spec),
            self.backend.partially_partitioned(self.spec),
        )


def _log_tail(broker: BrokerSpec, lines: int = 5) -> str:
    path = Path(broker.data_dir) / "broker.log"
    if not path.exists():
        return "(no log)"
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
