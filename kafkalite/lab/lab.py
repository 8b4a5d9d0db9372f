"""``Lab``: the notebook's handle on a running cluster.

Everything a lab needs in one object: the fault verbs (``lab.kill(2)``, from
``fault_verbs``), who leads what (``lab.leader("orders", 0)``), the cluster as DataFrames,
topics (``lab.create_topic``, from ``topics``), kafka-python producers and consumers that
record a history, and the pictures and verdicts drawn from it. Each call that waits is
bounded (``waits``), and clients get short timeouts, so a cell written wrong raises a clear
error instead of hanging the kernel; the brokers run as their own processes, which no
notebook cell can wedge.
"""

from __future__ import annotations

import contextlib
import itertools
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from confluent_kafka.admin import AdminClient
from kafka.admin import KafkaAdminClient
from kafka.errors import KafkaError

from kafkalite.checker.history import check as check_history
from kafkalite.cluster import BrokerState
from kafkalite.events import EventType
from kafkalite.lab import tables, waits
from kafkalite.lab.anomalies import CheckResult, lost_values, output_as_log, result_of
from kafkalite.lab.fault_verbs import FaultVerbs
from kafkalite.lab.faults import ObservedCluster
from kafkalite.lab.group_members import describe_groups
from kafkalite.lab.history import History, OpKind
from kafkalite.lab.prediction import Comparison, beside
from kafkalite.lab.recording import RecordingConsumer, RecordingProducer, read_final_log
from kafkalite.lab.tables import current_incarnation
from kafkalite.lab.timeline import build_timeline, plot_timeline
from kafkalite.lab.topics import TopicAdmin
from kafkalite.lab.waits import WAIT_S, LabTimeoutError
from kafkalite.lab.watch import offsets_over_time, plot_offsets
from kafkalite.lab.workers import GroupWorker

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from kafkalite.lab.dashboard import Dashboard

__all__ = ["Lab", "LabTimeoutError", "fenced_by_all"]

PRODUCER_DEFAULTS: dict[str, Any] = {
    "request_timeout_ms": 5000,  # a request to a dead or paused broker fails in 5 s
    "max_block_ms": 10000,  # send() waits at most 10 s for metadata or buffer space
    "delivery_timeout_ms": 30000,  # retries give up after 30 s
    "retry_backoff_ms": 100,
    "reconnect_backoff_max_ms": 1000,
    "metadata_max_age_ms": 5000,
}
CONSUMER_DEFAULTS: dict[str, Any] = {
    "auto_offset_reset": "earliest",
    "enable_auto_commit": False,  # the labs commit on purpose, to show what it means
    "consumer_timeout_ms": 5000,  # iterating stops after 5 s without a record
    "request_timeout_ms": 10000,
    "session_timeout_ms": 6000,
    "heartbeat_interval_ms": 1000,
    "reconnect_backoff_max_ms": 1000,
    "metadata_max_age_ms": 5000,
}
FINAL_SAMPLE_TIMEOUT_S = 10.0
"""How long a watch's last sample waits for each broker's answer."""


def fenced_by_all(
    events: Iterable[Mapping[str, Any]], fenced: Iterable[int], by: Iterable[int]
) -> bool:
    """Whether every broker in ``by`` has applied the fencing of every broker in
    ``fenced``: its latest ``broker_fenced``/``broker_unfenced`` event about each says
    fenced. A broker lists to its clients only the brokers it has not seen fenced."""
    latest: dict[tuple[int, int], str] = {}
    for event in events:  # in time order
        if event["type"] in (EventType.BROKER_FENCED, EventType.BROKER_UNFENCED):
            latest[(event["broker"], event["broker_id"])] = event["type"]
    return all(
        latest.get((applier, broker)) == EventType.BROKER_FENCED
        for applier in by
        for broker in fenced
    )


class Lab(FaultVerbs, TopicAdmin):
    def __init__(self, cluster: ObservedCluster) -> None:
        self.cluster = cluster
        self.history = History()
        """The current history: clients made without ``history=`` record into it."""
        self._clients: list[Any] = []
        self._numbers = itertools.count(1)
        self._watches: list[Callable[[float, dict[str, Any]], None]] = []
        self._workers: list[GroupWorker] = []
        self._worker_logs: Path | None = None
        """Each running ``watch`` also keeps every snapshot the lab reads meanwhile."""

    def __repr__(self) -> str:
        states = ", ".join(f"{b}: {s.value}" for b, s in self.cluster.broker_states().items())
        return f"Lab({self.bootstrap_servers}; {states})"

    @property
    def bootstrap_servers(self) -> str:
        return self.cluster.bootstrap_servers

    def live_bootstrap_servers(self) -> str:
        """The brokers that answer now, once none of them lists a paused broker to its
        clients: a new client bootstraps from these. A paused broker accepts connections
        and never answers, so kafka-python can spend its whole bootstrap timeout on it.
        After bootstrapping, the client opens its next connection to any broker its
        Metadata answer lists, and a paused one is listed until the controller fences it
        (when its session runs out: ``broker.session.timeout.ms``, 3 s here); there it
        waits out its connection setup, 10 s, then 20 s and 30 s (lab 05's read while
        broker 3 hung stalled 10-30 s in about one run of three). In Kafka, whose
        defaults fence a silent broker (9 s) before its leaders drop it from their ISRs
        (``replica.lag.time.max.ms``, 30 s), a client rarely meets that window; here the
        ISR shrinks after 1 s, and a lab that waits for it would still be inside it."""
        states = self.cluster.broker_states()
        paused = {b for b, s in states.items() if s == BrokerState.PAUSED}
        running = {b for b, s in states.items() if s == BrokerState.RUNNING}
        if paused and running:
            self.wait_for(
                lambda: fenced_by_all(self.cluster.events(brokers=running), paused, running),
                what=f"the controller to fence paused broker(s) {sorted(paused)}",
            )
        live = [
            b.address
            for b in self.cluster.spec.brokers
            if states[b.broker_id] in (BrokerState.RUNNING, BrokerState.ISOLATED)
        ]
        return ",".join(live) or self.bootstrap_servers

    # ---- faults: the verbs are ``FaultVerbs``'; ``reset`` undoes every one -----------

    def reset(self, timeout_s: float = 60) -> None:
        """Close this lab's clients, then bring every broker back (resume, heal, start) and
        wait until each partition has a leader and its whole replica set in sync."""
        self.close_clients()
        states = self.cluster.broker_states()
        for broker, state in states.items():
            if state == BrokerState.PAUSED:
                self.cluster.resume(broker)
        self.cluster.heal()
        for broker, state in states.items():
            if state in (BrokerState.DEAD, BrokerState.STOPPED):
                self.cluster.start(broker)
        self.wait_for(self._all_in_sync, timeout_s, "every partition led and fully in sync")

    def _all_in_sync(self) -> bool:
        status = self.status()
        running = all(b["state"] == "running" for b in status["brokers"])
        return running and all(
            p["leader"] is not None and len(p["isr"]) == len(p["replicas"])
            for p in status["partitions"]
        )

    # ---- seeing inside ---------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        asked_at = time.time()
        snapshot = self.cluster.status()
        for keep in list(self._watches):
            keep(asked_at, snapshot)
        return snapshot

    def brokers(self) -> pd.DataFrame:
        return tables.brokers_frame(self.status())

    def replicas(self, topic: str | None = None) -> pd.DataFrame:
        """Every replica's log end offset, high watermark, epoch, ISR membership and lag."""
        return tables.replicas_frame(self.status(), topic)

    def partitions(self, topic: str | None = None) -> pd.DataFrame:
        return tables.partitions_frame(self.status(), topic)

    def transactions(self) -> pd.DataFrame:
        """Every ``transactional.id`` the coordinators know, with its state."""
        return tables.transactions_frame(self.status())

    def events(
        self,
        types: Iterable[str] | None = None,
        topic: str | None = None,
        last: int | None = None,
    ) -> pd.DataFrame:
        """The brokers' events in time order: only ``types`` and only about ``topic`` if
        given (about the topic as it is now: a topic deleted and created again under its
        name starts afresh), only the ``last`` few if given."""
        found = self.cluster.events()
        if topic is not None:
            found = current_incarnation([e for e in found if e.get("topic") == topic])
        frame = tables.events_frame(found, types)
        return frame if last is None else frame.tail(last).reset_index(drop=True)

    def groups(self) -> pd.DataFrame:
        """Each consumer group's committed offsets, and its lag behind the high watermark."""
        return tables.groups_frame(self._committed_offsets(), self.status())

    def committed_offsets(self, group: str, topic: str) -> dict[int, int]:
        """``group``'s committed offsets of ``topic``'s partitions, as its coordinator holds
        them: where a member that takes a partition over starts reading."""
        with self.admin() as admin:
            offsets = _group_offsets(admin, group)
        return {partition: o for (name, partition), o in offsets.items() if name == topic}

    def _committed_offsets(self) -> dict[str, dict[tuple[str, int], int]]:
        with self.admin() as admin:
            names = [g["group_id"] for g in admin.list_groups()]
            return {name: _group_offsets(admin, name) for name in names}

    def read(self, topic: str, partition: int = 0) -> list[bytes]:
        """What a consumer can read of the partition now: every value from the log start
        to the high watermark, in offset order (it waits for a leader, at most 30 s)."""
        log = read_final_log(self.live_bootstrap_servers(), [(topic, partition)])
        records = log[(topic, partition)]
        return [records[offset] for offset in sorted(records)]

    def watch(
        self,
        topic: str,
        partition: int = 0,
        seconds: float = 5.0,
        during: Callable[[], object] | None = None,
        every_s: float = 0.1,
    ) -> pd.DataFrame:
        """Sample the partition's replicas every ``every_s`` for ``seconds`` while
        ``during()`` runs (a function that writes, or breaks something); one row per
        replica per sample, ``t`` in seconds since the first. ``plot_offsets`` draws it.

        The watch lasts at least as long as ``during()`` and always ends with a sample
        taken after it returned, so what ``during()`` waited for is in the frame. The
        snapshots ``during()`` reads itself (``lab.wait_for_isr`` and the other waits)
        join the background samples: a sampler alone, at its own pace, could miss a state
        that ``during()`` saw and waited for (an ISR that held its size only briefly).
        The last sample waits for every broker's answer
        (``FINAL_SAMPLE_TIMEOUT_S``)."""
        samples: list[tuple[float, dict[str, Any]]] = []
        stop = threading.Event()
        appending = threading.Lock()

        def keep(at: float, snapshot: dict[str, Any]) -> None:
            with appending:
                if not stop.is_set():  # after the last sample: dropped, it is older
                    samples.append((at, snapshot))

        def sample() -> None:
            while not stop.is_set():
                asked_at = time.time()
                keep(asked_at, self.cluster.status(timeout_s=1.0))
                stop.wait(every_s)

        sampler = threading.Thread(target=sample, name="kafkalite-watch", daemon=True)
        self._watches.append(keep)
        sampler.start()
        started = time.monotonic()
        try:
            if during is not None:
                during()
            time.sleep(max(0.0, seconds - (time.monotonic() - started)))
        finally:
            self._watches.remove(keep)
            with appending:
                stop.set()
        last = (time.time(), self.cluster.status(timeout_s=FINAL_SAMPLE_TIMEOUT_S))
        sampler.join(5)
        samples.sort(key=lambda taken: taken[0])
        samples.append(last)
        return offsets_over_time(samples, topic, partition)

    def plot_offsets(self, frame: pd.DataFrame, title: str | None = None) -> Figure:
        """Draw a ``watch``: each replica's log end offset and the high watermark."""
        return plot_offsets(frame, title)

    def leader(self, topic: str, partition: int = 0) -> int | None:
        """The broker leading ``topic``-``partition`` now (None while it has no leader)."""
        for p in self.status()["partitions"]:
            if p["topic"] == topic and p["partition"] == partition:
                leader: int | None = p["leader"]
                return leader
        raise KeyError(f"no partition {topic}-{partition} in the cluster")

    def controller(self) -> int | None:
        """The active controller (the metadata quorum's leader)."""
        return next((b["id"] for b in self.status()["brokers"] if b["controller"]), None)

    wait_for = staticmethod(waits.wait_for)

    def wait_for_acks(
        self,
        history: History,
        count: int,
        since: float | None = None,
        timeout_s: float = WAIT_S,
    ) -> int:
        """Wait until ``history`` holds ``count`` acknowledged writes (only those after the
        wall-clock time ``since``, if given); return how many it holds. A fault step waits
        for writes to have happened this way rather than for a fixed time."""

        def acked() -> int:
            return sum(since is None or op.time >= since for op in history.of(OpKind.ACK))

        after = "" if since is None else " since the fault"
        self.wait_for(lambda: acked() >= count, timeout_s, f"{count} acknowledged writes{after}")
        return acked()

    def wait_for_leader(
        self,
        topic: str,
        partition: int = 0,
        other_than: int | None = None,
        timeout_s: float = WAIT_S,
    ) -> int:
        """Wait until the partition has a leader (other than ``other_than``); return it."""

        def elected() -> int | None:
            leader = self.leader(topic, partition)
            return leader if leader is not None and leader != other_than else None

        return self.wait_for(elected, timeout_s, f"a new leader of {topic}-{partition}")

    def wait_for_preferred_leader(
        self, topic: str, partition: int = 0, timeout_s: float = WAIT_S
    ) -> int:
        """Wait until the partition is led by its preferred replica (the first); return it.
        The controller hands leadership back to a preferred replica that is in sync at its
        next leader rebalance (``auto.leader.rebalance.enable``, every
        ``leader.imbalance.check.interval.seconds``: 5 s here, 300 s in Kafka). A step
        whose writers must find the leader where their metadata says waits for this
        first: a leader that moves between two writes answers NOT_LEADER_OR_FOLLOWER."""

        def preferred() -> int | None:
            frame = self.partitions(topic)
            rows = frame[frame["partition"] == partition]
            if rows.empty:  # none of its replicas runs now
                return None
            first: int = rows.iloc[0]["replicas"][0]
            leader = rows.iloc[0]["leader"]
            return first if not pd.isna(leader) and leader == first else None

        return self.wait_for(preferred, timeout_s, f"{topic}-{partition}'s preferred leader")

    def wait_for_isr(
        self,
        topic: str,
        partition: int = 0,
        size: int | None = None,
        timeout_s: float = WAIT_S,
    ) -> list[int]:
        """Wait until the partition's ISR has ``size`` members (default: every replica)."""

        def isr() -> list[int] | None:
            row = self.partitions(topic).set_index("partition").loc[partition]
            wanted = len(row["replicas"]) if size is None else size
            return list(row["isr"]) if len(row["isr"]) == wanted else None

        return self.wait_for(isr, timeout_s, f"{topic}-{partition}'s ISR to reach size {size}")

    # ---- clients that record ---------------------------------------------------------

    def _chosen(self, history: History | None) -> History:
        """``history``, or the current one (an empty history is a choice too)."""
        return self.history if history is None else history

    def new_history(self) -> History:
        """Start a new current history (clients made from now on record into it)."""
        self.history = History()
        return self.history

    def producer(self, history: History | None = None, **configs: Any) -> RecordingProducer:
        """A real ``kafka.KafkaProducer`` (any of its settings as keywords) that records
        every send, acknowledgement and error into ``history`` (default: the current)."""
        settings = {
            "bootstrap_servers": self.live_bootstrap_servers(),
            "client_id": f"producer-{next(self._numbers)}",
            **PRODUCER_DEFAULTS,
            **configs,
        }
        producer = RecordingProducer(self._chosen(history), **settings)
        self._clients.append(producer)
        return producer

    def consumer(
        self, *topics: str, history: History | None = None, **configs: Any
    ) -> RecordingConsumer:
        """A real ``kafka.KafkaConsumer`` (subscribed to ``topics`` if given) that records
        every record it returns and every commit into ``history`` (default: the current)."""
        settings = {
            "bootstrap_servers": self.live_bootstrap_servers(),
            "client_id": f"consumer-{next(self._numbers)}",
            **CONSUMER_DEFAULTS,
            **configs,
        }
        consumer = RecordingConsumer(self._chosen(history), *topics, **settings)
        self._clients.append(consumer)
        return consumer

    def write_while(
        self,
        producer: RecordingProducer,
        topic: str,
        seconds: float,
        during: Callable[[], object] | None = None,
        rate: float = 100,
        prefix: str = "msg",
        partition: int | None = None,
    ) -> int:
        """Send ``prefix-0``, ``prefix-1``, ... at ``rate`` records per second for ``seconds``
        from a background thread, while ``during()`` (a fault, say) runs in this one; then
        flush (at most 30 s: a record still unanswered then stays a send without an answer
        in the history). Returns how many were sent. A send that fails is in the history as
        an error; sending goes on, as an application's would."""
        sent = 0
        stop = threading.Event()

        def send_all() -> None:
            nonlocal sent
            due = time.monotonic()
            while not stop.is_set():
                with contextlib.suppress(KafkaError):  # recorded; the next one is tried
                    producer.send(topic, f"{prefix}-{sent}".encode(), partition=partition)
                sent += 1
                # a send that blocked (no leader to send to) is not made up for in a burst
                due = max(due + 1 / rate, time.monotonic() - 1 / rate)
                stop.wait(max(0.0, due - time.monotonic()))

        writer = threading.Thread(target=send_all, name="kafkalite-writer", daemon=True)
        writer.start()
        started = time.monotonic()
        try:
            if during is not None:
                during()
            time.sleep(max(0.0, seconds - (time.monotonic() - started)))
        finally:
            stop.set()
            writer.join(30)
            with contextlib.suppress(KafkaError):  # KafkaTimeoutError: some still unanswered
                producer.flush(timeout=30)
        return sent

    def group_worker(
        self,
        name: str,
        topic: str,
        group: str,
        commit: str = "after",
        per_record_ms: int = 100,
        max_poll_records: int = 5,
        instance_id: str | None = None,
        assignor: str = "range",
        session_timeout_ms: int = 6000,
        freeze_before_commit: int = 0,
        protocol: str = "classic",
    ) -> GroupWorker:
        """A member of consumer group ``group`` reading ``topic``, in a process of its own
        (``kafkalite.lab.group_worker`` says what each option does), so that it can be
        killed or frozen as a real service is; ``lab.reset()`` stops it."""
        if self._worker_logs is None:
            self._worker_logs = Path(tempfile.mkdtemp(prefix="kafkalite-workers-"))
        args = [
            *("--bootstrap", self.live_bootstrap_servers(), "--topic", topic, "--group", group),
            *("--commit", commit, "--per-record-ms", str(per_record_ms)),
            *("--max-poll-records", str(max_poll_records), "--assignor", assignor),
            *("--session-timeout-ms", str(session_timeout_ms)),
            *("--freeze-before-commit", str(freeze_before_commit)),
            *(("--instance-id", instance_id) if instance_id else ()),
            *("--protocol", protocol),
        ]
        worker = GroupWorker.start(name, self._worker_logs, args)
        self._workers.append(worker)
        return worker

    def members(self, group: str) -> pd.DataFrame:
        """The group's members now, as its coordinator describes them (DescribeGroups): each
        one's client id, ``group.instance.id`` (static members) and partitions."""
        admin = AdminClient({"bootstrap.servers": self.live_bootstrap_servers(), "log_level": 0})
        views = describe_groups(admin, [group], timeout_s=10)
        return tables.members_frame(views[0] if views else None)

    def group_state(self, group: str) -> pd.DataFrame:
        """The group as its coordinator holds it now: each member's protocol and epoch
        beside the group's, its reconciliation state and partitions (held, being given up,
        waited for); what the dashboard's consumer groups tab shows."""
        return tables.group_state_frame(self.status(), group)

    def close_clients(self) -> None:
        """Close every producer and consumer this lab made (a stuck one is abandoned), and
        stop its group workers."""
        for worker in self._workers:
            worker.stop()
        self._workers.clear()
        for client in self._clients:
            try:
                client.close(timeout_ms=2000)
            except Exception:  # a broken client must not keep the others open
                continue
        self._clients.clear()

    # ---- pictures and verdicts -------------------------------------------------------

    def timeline(self, history: History | None = None, title: str | None = None) -> Figure:
        """Plot a run: writes per second and errors, latency, faults shaded, leader changes."""
        data = build_timeline(
            self._chosen(history), self.cluster.faults.windows, self.cluster.events()
        )
        return plot_timeline(data, title)

    def check(
        self, history: History | None = None, output: Iterable[bytes] | None = None
    ) -> CheckResult:
        """Judge a run with the history checker. Without ``output``: every acknowledged
        write against the log the cluster kept (heal faults first). With ``output`` (the
        values a consumer processed, in order): every acknowledged write against that."""
        h = self._chosen(history)
        if output is None:
            acks, log = h.acks(), read_final_log(self.live_bootstrap_servers(), h.partitions())
        else:
            acks, log = output_as_log(h.acks(), output)
        report = check_history(
            acks, h.polls() if output is None else [], h.commits(), log, h.sends()
        )
        return result_of(report, of_output=output is not None, lost=lost_values(acks, log))

    def beside(self, **questions: tuple[Any, Any]) -> Comparison:
        """Predict, then observe: ``lab.beside(new_leader=(predicted_leader, observed))``
        shows each prediction beside what the cluster did (``...``: not predicted yet)."""
        return beside(**questions)

    def dashboard(self) -> Dashboard:
        """The live dashboard of this cluster (ipywidgets)."""
        from kafkalite.lab.dashboard import Dashboard  # noqa: PLC0415  (widgets on demand)

        return Dashboard(self.cluster)

    def close(self) -> None:
        self.close_clients()


def _group_offsets(admin: KafkaAdminClient, group: str) -> dict[tuple[str, int], int]:
    """A group's committed offsets by (topic, partition); partitions without one left out."""
    offsets = admin.list_group_offsets(group).get(group, {})
    return {(tp.topic, tp.partition): m.offset for tp, m in offsets.items() if m.offset >= 0}
