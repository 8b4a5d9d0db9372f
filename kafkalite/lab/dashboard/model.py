"""The dashboard's state: what to draw, from one ``Cluster.status()`` snapshot plus the
events since the previous poll (pure: no sockets, threads or widgets, time passed in).

``DashboardModel.update`` is called once per refresh. It remembers only what a single
snapshot cannot show: recent truncations (a snapshot shows a log's end, not the records
it lost) and the event feed. Everything else is recomputed from the snapshot, so a
refresh that misses a poll loses nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from kafkalite.events import EventType
from kafkalite.lab.dashboard.feed import Feed, FeedItem
from kafkalite.lab.dashboard.strips import (
    Cell,
    OffsetRange,
    ReplicaLog,
    offset_window,
    replica_cells,
)
from kafkalite.lab.group_members import GroupView

TRUNCATION_VISIBLE_MS = 60_000
"""How long truncated cells stay visible (struck through) after the truncation."""
WINDOW_CELLS = 32
"""How many offsets each partition draws: the newest ones."""

HIDDEN_TOPIC_PREFIX = "__"
"""Topics whose names start with it are not drawn: Kafka's internal topics
(``__consumer_offsets``, ``__transaction_state``) and the topics graders and hidden tests
make (``__grader-...``), which a student's dashboard must not show."""

VERBS_BY_STATE: dict[str, tuple[str, ...]] = {
    "running": ("kill", "stop", "pause", "isolate", "partial_partition"),
    "isolated": ("kill", "stop", "pause", "heal"),
    "paused": ("resume", "kill"),
    "dead": ("start",),
    "stopped": ("start",),
}
"""The fault verbs that make sense for a broker in each state (the card's live buttons)."""


@dataclass(frozen=True)
class BrokerCard:
    id: int
    address: str
    state: str
    """running, paused, dead, stopped or isolated."""
    controller: bool
    slow_ms: int | None
    leads: int
    """How many partitions this broker leads."""
    verbs: tuple[str, ...]
    silent_ms: int | None = None
    """How long the active controller has not heard from this broker (None: no active
    controller, or it has not heard of this broker)."""
    session_ms: int | None = None
    """``broker.session.timeout.ms``: a broker silent this long is fenced."""
    partial_partition: bool = False
    """Cut from its replication peers, still in touch with the controller quorum."""

    @property
    def answering(self) -> bool:
        return self.state in ("running", "isolated")


@dataclass(frozen=True)
class GroupOffset:
    group: str
    offset: int


@dataclass(frozen=True)
class ReplicaRow:
    broker: int
    state: str | None
    is_leader: bool
    in_isr: bool
    leader_epoch: int | None
    """The leader epoch this replica knows: an isolated or returning one may lag."""
    log_start_offset: int | None
    log_end_offset: int | None
    high_watermark: int | None
    cells: tuple[Cell, ...]
    last_seen: bool = False
    """The broker does not answer (paused, dead, stopped): the offsets are the last ones it
    reported, drawn greyed, so a killed leader's log stays in view."""


@dataclass(frozen=True)
class PartitionView:
    topic: str
    partition: int
    leader: int | None
    leader_epoch: int
    isr: tuple[int, ...]
    high_watermark: int | None
    last_stable_offset: int | None
    log_start_offset: int
    window_start: int
    window_end: int
    replicas: tuple[ReplicaRow, ...]
    groups: tuple[GroupOffset, ...]
    open_transactions: tuple[dict[str, Any], ...]
    owners: tuple[tuple[str, str], ...] = ()
    """(group, client id) of each group member that reads this partition now."""
    leaderless: str = ""
    """Why there is no leader, in words, while there is none."""

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True)
class DashboardState:
    time_ms: int
    brokers: tuple[BrokerCard, ...]
    partitions: tuple[PartitionView, ...]
    feed: tuple[FeedItem, ...]
    controller: int | None
    quorum_epoch: int | None
    transactions: tuple[dict[str, Any], ...] = ()
    """The coordinators' transactions (``transactional_id``, ``state``, ``partitions``)."""
    groups: tuple[GroupView, ...] = ()
    """The consumer groups with members, and what each member reads."""
    coordinated_groups: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Each group as its coordinator sees it (``/state``): its protocol, epoch, and each
    member's epoch and what it is giving up or waiting for (KIP-848), by group id."""

    def coordinated(self, group: str, member_id: str) -> Mapping[str, Any]:
        """A member as its group's coordinator sees it (empty if it does not know it)."""
        members = self.coordinated_groups.get(group, {}).get("members", ())
        return next((m for m in members if m["member_id"] == member_id), {})

    def to_json(self) -> dict[str, Any]:
        """Plain JSON for the browser view (cells as ``[offset, kind, replaced]``)."""
        data = asdict(self)
        for p in data["partitions"]:
            for r in p["replicas"]:
                r["cells"] = [[c["offset"], str(c["kind"]), c["replaced"]] for c in r["cells"]]
        return data

    def partition(self, topic: str, index: int) -> PartitionView:
        return next(p for p in self.partitions if (p.topic, p.partition) == (topic, index))

    def broker(self, broker_id: int) -> BrokerCard:
        return next(b for b in self.brokers if b.id == broker_id)


@dataclass(frozen=True)
class Truncation:
    topic: str
    topic_id: str | None
    """Which topic of that name: a truncation of one deleted since (a demo's reset deletes
    and creates its topics again) is not the new one's."""
    partition: int
    broker: int
    removed: OffsetRange
    time_ms: int


@dataclass
class DashboardModel:
    """Turns snapshots into ``DashboardState``; remembers truncations and the feed."""

    truncation_visible_ms: int = TRUNCATION_VISIBLE_MS
    window_cells: int = WINDOW_CELLS
    shown_topics: frozenset[str] | None = None
    """Only these topics' partitions, and the events about them, are drawn (None: every
    topic): a presenter shows the partitions of the scenario on screen, nothing else."""
    feed: Feed = field(default_factory=Feed)
    truncations: list[Truncation] = field(default_factory=list)
    last_rows: dict[tuple[str, int, int], Mapping[str, Any]] = field(default_factory=dict)
    """Each replica's latest answered row, for when its broker stops answering."""

    def update(
        self,
        snapshot: Mapping[str, Any],
        events: Iterable[dict[str, Any]],
        now_ms: int,
        group_offsets: Mapping[tuple[str, int], Iterable[GroupOffset]] | None = None,
        groups: Iterable[GroupView] = (),
    ) -> DashboardState:
        events = [e for e in events if self._shown(e.get("topic")) and not hidden(e.get("topic"))]
        self.feed.add(events)
        self._remember_truncations(events, now_ms)
        states = {b["id"]: b.get("state") for b in snapshot.get("brokers", [])}
        shown_groups = tuple(g for g in groups if _visible_members(g))
        partitions = tuple(
            self._partition(
                p,
                (group_offsets or {}).get((p["topic"], p["partition"]), ()),
                _owners(shown_groups, p["topic"], p["partition"]),
                states,
            )
            for p in snapshot.get("partitions", [])
            if not hidden(p["topic"]) and self._shown(p["topic"])
        )
        quorum = snapshot.get("quorum") or {}
        return DashboardState(
            time_ms=now_ms,
            brokers=tuple(_card(b, partitions) for b in snapshot.get("brokers", [])),
            partitions=partitions,
            feed=tuple(self.feed.items),
            controller=quorum.get("leader"),
            quorum_epoch=quorum.get("epoch"),
            transactions=tuple(
                t for t in snapshot.get("transactions") or () if self._shown_transaction(t)
            ),
            groups=shown_groups,
            coordinated_groups={g["group"]: g for g in snapshot.get("groups") or ()},
        )

    def _shown(self, topic: str | None) -> bool:
        """An event about no topic (a broker fenced, a new controller) is always shown."""
        return self.shown_topics is None or topic is None or topic in self.shown_topics

    def _shown_transaction(self, txn: Mapping[str, Any]) -> bool:
        """A transaction is shown if it wrote to a shown topic (partitions ``topic-N``)."""
        if self.shown_topics is None:
            return True
        written = {str(p).rpartition("-")[0] for p in txn.get("partitions") or ()}
        return bool(written & self.shown_topics)

    def _remember_truncations(self, events: list[dict[str, Any]], now_ms: int) -> None:
        for e in events:
            if e.get("type") == EventType.LOG_TRUNCATED and not e.get("replay"):
                first, end = int(e["from_offset"]), int(e["to_offset"])
                if end > first:
                    removed = OffsetRange(first, end - 1)
                    self.truncations.append(
                        Truncation(
                            e["topic"],
                            e.get("topic_id"),
                            e["partition"],
                            e["broker"],
                            removed,
                            e["time_ms"],
                        )
                    )
        self.truncations = [
            t for t in self.truncations if now_ms - t.time_ms < self.truncation_visible_ms
        ]

    def _partition(
        self,
        p: Mapping[str, Any],
        groups: Iterable[GroupOffset],
        owners: tuple[tuple[str, str], ...],
        states: Mapping[int, Any],
    ) -> PartitionView:
        key = (p["topic"], p["partition"])
        replicas = [self._with_last_seen(key, r) for r in p["replicas"]]
        topic_id = p.get("topic_id")
        truncated: dict[int, list[OffsetRange]] = {r["broker"]: [] for r in replicas}
        for t in self.truncations:
            if (t.topic, t.partition) == key and t.broker in truncated and t.topic_id == topic_id:
                truncated[t.broker].append(t.removed)
        ends = [r["log_end_offset"] or 0 for r in replicas]
        ends += [t.last + 1 for ranges in truncated.values() for t in ranges]
        starts = [r.get("log_start_offset") for r in replicas]
        log_start = min([s for s in starts if s is not None] or [p.get("log_start_offset") or 0])
        window = offset_window(log_start, ends, self.window_cells)
        aborted = [
            OffsetRange(a["first_offset"], a["last_offset"])
            for a in p.get("aborted_transactions") or []
        ]
        open_txns = tuple(p.get("open_transactions") or [])
        rows = tuple(
            self._replica(p, r, window, truncated[r["broker"]], aborted, open_txns)
            for r in replicas
        )
        return PartitionView(
            topic=p["topic"],
            partition=p["partition"],
            leader=p.get("leader"),
            leader_epoch=p.get("leader_epoch", -1),
            isr=tuple(p.get("isr") or ()),
            high_watermark=p.get("high_watermark"),
            last_stable_offset=p.get("last_stable_offset"),
            log_start_offset=log_start,
            window_start=window.start,
            window_end=window.stop,
            replicas=rows,
            groups=tuple(sorted(groups, key=lambda g: g.group)),
            open_transactions=open_txns,
            owners=owners,
            leaderless="" if p.get("leader") is not None else _leaderless(p, states),
        )

    def _with_last_seen(
        self, partition: tuple[str, int], row: Mapping[str, Any]
    ) -> Mapping[str, Any]:
        key = (*partition, row["broker"])
        if row.get("log_end_offset") is not None:
            self.last_rows[key] = row
            return row
        seen = self.last_rows.get(key)
        if seen is None:
            return row
        offsets = ("log_start_offset", "log_end_offset", "high_watermark", "leader_epoch")
        return {**row, **{f: seen.get(f) for f in offsets}, "last_seen": True}

    @staticmethod
    def _replica(
        p: Mapping[str, Any],
        r: Mapping[str, Any],
        window: range,
        truncated: list[OffsetRange],
        aborted: list[OffsetRange],
        open_txns: tuple[dict[str, Any], ...],
    ) -> ReplicaRow:
        leo, hw = r.get("log_end_offset"), r.get("high_watermark")
        is_leader = p.get("leader") == r["broker"]
        cells: tuple[Cell, ...] = ()
        in_isr = bool(r["in_isr"]) if "in_isr" in r else r["broker"] in (p.get("isr") or ())
        if leo is not None:
            log = ReplicaLog(
                log_start_offset=r.get("log_start_offset") or 0,
                log_end_offset=leo,
                committed_end=_committed_end(p, leo, hw, in_isr and not r.get("last_seen")),
            )
            # open transactions are the leader's view; a follower has the same records
            starts = [t["first_offset"] for t in open_txns]
            cells = replica_cells(log, window, truncated, aborted, starts)
        elif truncated:
            cells = replica_cells(ReplicaLog(0, 0, 0), window, truncated)
        return ReplicaRow(
            broker=r["broker"],
            state=r.get("state"),
            is_leader=is_leader,
            in_isr=in_isr,
            leader_epoch=r.get("leader_epoch"),
            log_start_offset=r.get("log_start_offset"),
            log_end_offset=leo,
            high_watermark=hw,
            cells=cells,
            last_seen=bool(r.get("last_seen")),
        )


def _committed_end(p: Mapping[str, Any], leo: int, own_hw: int | None, in_isr: bool) -> int:
    """Where this replica's committed cells end. An in-sync replica holds the leader's
    records, so the partition's high watermark applies. One outside the ISR may hold
    records no one else has (an isolated old leader's ``acks=1`` writes, soon truncated),
    so only what its own high watermark vouches for counts as committed."""
    partition_hw = p.get("high_watermark")
    bound = partition_hw if in_isr and partition_hw is not None else own_hw
    if partition_hw is not None and bound is not None:
        bound = min(bound, partition_hw)
    return min(leo, bound or 0)


def hidden(topic: object) -> bool:
    """Not drawn: internal topics, and the ones graders and hidden tests make."""
    return isinstance(topic, str) and topic.startswith(HIDDEN_TOPIC_PREFIX)


def _visible_members(group: GroupView) -> bool:
    """A group worth showing: one with a member, none of whose partitions is hidden."""
    parts = [tp for m in group.members for tp in m.partitions]
    return bool(group.members) and not any(hidden(topic) for topic, _ in parts)


def _owners(groups: Iterable[GroupView], topic: str, partition: int) -> tuple[tuple[str, str], ...]:
    found = ((g.group, g.owner(topic, partition)) for g in groups)
    return tuple((group, m.client_id) for group, m in found if m is not None)


def _leaderless(p: Mapping[str, Any], states: Mapping[int, Any]) -> str:
    """Why a partition has no leader: an election is on its way while an in-sync replica
    is alive; when every one is down, a clean election waits for one to come back."""
    isr = p.get("isr") or ()
    if isr and all(states.get(b) in ("dead", "stopped", "paused") for b in isr):
        down = ", ".join(map(str, isr))
        return f"no leader — waiting for an in-sync replica ({down}) to come back"
    return "no leader — election in progress"


def _card(b: Mapping[str, Any], partitions: tuple[PartitionView, ...]) -> BrokerCard:
    state = str(b.get("state"))
    partial = bool(b.get("partial_partition"))
    return BrokerCard(
        id=b["id"],
        address=b.get("address", ""),
        state=state,
        controller=bool(b.get("controller")),
        slow_ms=b.get("slow_ms"),
        leads=sum(1 for p in partitions if p.leader == b["id"]),
        verbs=_verbs(state, b.get("slow_ms") is not None or partial),
        silent_ms=b.get("silent_ms"),
        session_ms=b.get("session_ms"),
        partial_partition=partial,
    )


def _verbs(state: str, healable: bool) -> tuple[str, ...]:
    """A slowed or partially partitioned broker still runs: it can also be healed (and is
    not partitioned twice)."""
    verbs = VERBS_BY_STATE.get(state, ())
    if healable and state == "running":
        verbs = (*(v for v in verbs if v != "partial_partition"), "heal")
    return verbs
