"""The dashboard's live event feed: which events a student sees, and in what words (pure).

Every broker reports what it saw, so an event about cluster metadata (a broker fenced, a
topic created) arrives once from each broker that replayed it; the feed shows it once.
Events a starting broker re-emits while it replays the metadata log (``replay``) are
history, not news, and routine ones (fetch cursors, committed offsets) would drown the
rest, so neither is shown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kafkalite.events import EventType as E

REPLAYED_BY_EVERY_BROKER = frozenset(
    {E.BROKER_FENCED, E.BROKER_UNFENCED, E.TOPIC_CREATED, E.TOPIC_DELETED, E.CONFIG_CHANGED}
)
SAME_EVENT_WITHIN_MS = 5_000
"""Copies of a metadata event from different brokers arrive within this of each other."""

HIDDEN = frozenset(
    {
        E.QUORUM_FOLLOWING,
        E.METADATA_SNAPSHOT_CREATED,
        E.METADATA_SNAPSHOT_LOADED,
        E.GROUP_PARTITION_LOADED,
        E.OFFSETS_COMMITTED,
        E.TXN_PARTITION_LOADING,
        E.TXN_PARTITION_LOADED,
        E.TXN_PREPARE_COMMIT,  # the outcome (committed / aborted) follows at once
        E.TXN_PREPARE_ABORT,
    }
)


@dataclass(frozen=True)
class FeedItem:
    time_ms: int
    broker: int
    type: str
    category: str
    """What the item is about, for its colour: election, isr, truncation, duplicate,
    fenced, unclean, broker, txn, topic or other."""
    text: str


def _partition(e: dict[str, Any]) -> str:
    return f"{e.get('topic')}-{e.get('partition')}"


def _truncated(e: dict[str, Any]) -> str:
    first, end = e.get("from_offset"), e.get("to_offset")
    span = f"offsets {first}..{end - 1}" if isinstance(end, int) else f"from offset {first}"
    return (
        f"{_partition(e)}: broker {e['broker']} truncated {span} "
        f"({e.get('removed', '?')} records) to agree with leader {e.get('leader')}"
    )


def _txn(verb: str) -> Callable[[dict[str, Any]], str]:
    def text(e: dict[str, Any]) -> str:
        partitions = ", ".join(e.get("partitions") or [])
        return (
            f"transaction {e.get('transactional_id')} {verb} (producer {e.get('producer_id')}, "
            f"epoch {e.get('producer_epoch')})" + (f" on {partitions}" if partitions else "")
        )

    return text


_TEXT: dict[str, tuple[str, Callable[[dict[str, Any]], str]]] = {
    E.LEADER_ELECTED: (
        "election",
        lambda e: (
            f"{_partition(e)}: broker {e.get('leader')} is leader, epoch {e.get('leader_epoch')}"
        ),
    ),
    E.UNCLEAN_LEADER_ELECTED: (
        "unclean",
        lambda e: (
            f"{_partition(e)}: UNCLEAN election, broker {e.get('leader')} leads from "
            f"outside the ISR {e.get('previous_isr')} (epoch {e.get('leader_epoch')}): "
            "acknowledged records may be lost"
        ),
    ),
    E.ISR_SHRUNK: (
        "isr",
        lambda e: f"{_partition(e)}: ISR shrank, {e.get('removed')} out, ISR now {e.get('isr')}",
    ),
    E.ISR_EXPANDED: (
        "isr",
        lambda e: f"{_partition(e)}: ISR expanded, {e.get('added')} back, ISR now {e.get('isr')}",
    ),
    E.LOG_TRUNCATED: ("truncation", _truncated),
    E.DUPLICATE_SUPPRESSED: (
        "duplicate",
        lambda e: (
            f"{_partition(e)}: duplicate suppressed on broker {e['broker']} (a retry of "
            f"the batch at offset {e.get('original_offset')})"
        ),
    ),
    E.REQUEST_FENCED: (
        "fenced",
        lambda e: (
            f"{_partition(e)}: broker {e['broker']} fenced a stale {e.get('api')} "
            f"request" + (f" ({e['error']})" if e.get("error") else "")
        ),
    ),
    E.BROKER_FENCED: ("broker", lambda e: f"controller fenced broker {e.get('broker_id')}"),
    E.BROKER_UNFENCED: ("broker", lambda e: f"controller unfenced broker {e.get('broker_id')}"),
    E.BROKER_SESSION_EXPIRED: (
        "broker",
        lambda e: (
            f"broker {e.get('broker_id')} silent for {e.get('silent_ms')} ms, longer than "
            f"its session ({e.get('session_ms')} ms)"
        ),
    ),
    E.BROKER_CONNECTION_CLOSED: (
        "broker",
        lambda e: (
            f"broker {e.get('broker_id')}'s connection to the controller closed: its "
            "process is gone"
        ),
    ),
    E.BROKER_STARTED: ("broker", lambda e: f"broker {e['broker']} started"),
    E.QUORUM_LEADER_ELECTED: (
        "election",
        lambda e: f"broker {e['broker']} leads the metadata quorum (epoch {e.get('epoch')})",
    ),
    E.CONTROLLER_ACTIVATED: (
        "election",
        lambda e: f"broker {e['broker']} is the active controller (epoch {e.get('epoch')})",
    ),
    E.CONTROLLER_RESIGNED: ("election", lambda e: f"broker {e['broker']} resigned as controller"),
    E.TOPIC_CREATED: ("topic", lambda e: f"topic {e.get('topic')} created"),
    E.TOPIC_DELETED: ("topic", lambda e: f"topic {e.get('topic')} deleted"),
    E.CONFIG_CHANGED: (
        "topic",
        lambda e: f"{e.get('resource')}: {e.get('name')} = {e.get('value')}",
    ),
    E.PRODUCER_ID_ASSIGNED: (
        "other",
        lambda e: (
            f"producer id {e.get('producer_id')} (epoch {e.get('producer_epoch')}) "
            f"for {e.get('client_id')}"
        ),
    ),
    E.TXN_STARTED: ("txn", _txn("started")),
    E.TXN_COMMITTED: ("txn", _txn("committed")),
    E.TXN_ABORTED: ("txn", _txn("aborted")),
    E.TXN_TIMED_OUT: ("txn", _txn("timed out: the coordinator aborts it")),
    E.MARKERS_WRITTEN: (
        "txn",
        lambda e: (
            f"{e.get('result')} markers written for transaction "
            f"{e.get('transactional_id')} on {', '.join(e.get('partitions') or [])}"
        ),
    ),
    E.PRODUCER_FENCED: (
        "fenced",
        lambda e: (
            f"producer fenced: a newer instance of {e.get('transactional_id')} "
            f"took epoch {e.get('producer_epoch')}"
        ),
    ),
    E.REASSIGNMENT_STARTED: (
        "isr",
        lambda e: (
            f"{_partition(e)}: reassignment to {e.get('target')} started "
            f"(adding {e.get('adding')}, removing {e.get('removing')})"
        ),
    ),
    E.REASSIGNMENT_COMPLETED: (
        "isr",
        lambda e: (
            f"{_partition(e)}: reassignment "
            f"{'cancelled' if e.get('cancelled') else 'completed'}, replicas {e.get('replicas')}"
        ),
    ),
    E.REPLICA_DELETED: (
        "other",
        lambda e: f"{_partition(e)}: broker {e['broker']} deleted its replica",
    ),
    E.LOG_START_ADVANCED: (
        "other",
        lambda e: (
            f"{_partition(e)}: broker {e['broker']}'s log now starts at "
            f"{e.get('log_start_offset')} ({e.get('reason')})"
        ),
    ),
    E.LOG_CLEANED: (
        "other",
        lambda e: (
            f"{_partition(e)}: broker {e['broker']} compacted its log up to "
            f"{e.get('cleaned_up_to')}, {e.get('records_removed')} records removed"
        ),
    ),
    E.GROUP_REBALANCED: (
        "other",
        lambda e: f"group {e.get('group')} rebalanced (generation {e.get('generation')})",
    ),
    E.GROUP_MEMBER_REMOVED: (
        "other",
        lambda e: f"group {e.get('group')}: member {e.get('member')} left ({e.get('reason')})",
    ),
    E.CONSUMER_GROUP_ASSIGNMENT_COMPUTED: (
        "other",
        lambda e: f"group {e.get('group')}: new target assignment for epoch {e.get('epoch')}",
    ),
    E.CONSUMER_GROUP_MEMBER_RECONCILED: (
        "other",
        lambda e: (
            f"group {e.get('group')}: member {e.get('client_id') or e.get('member')} at "
            f"epoch {e.get('member_epoch')} ({e.get('state')}), holds "
            f"{', '.join(e.get('assigned') or []) or 'nothing'}"
            + (f", revoking {', '.join(e['revoking'])}" if e.get("revoking") else "")
        ),
    ),
    E.GROUP_PROTOCOL_CHANGED: (
        "other",
        lambda e: (
            f"group {e.get('group')} became a {e.get('protocol')} group at epoch "
            f"{e.get('epoch')}, its members kept"
        ),
    ),
    E.STATIC_MEMBER_REJOINED: (
        "other",
        lambda e: (
            f"group {e.get('group')}: static member {e.get('group_instance_id')} "
            "rejoined without a rebalance"
        ),
    ),
    E.GROUP_DELETED: ("other", lambda e: f"group {e.get('group')} deleted"),
    E.OFFSETS_DELETED: (
        "other",
        lambda e: f"group {e.get('group')}: committed offsets deleted",
    ),
    E.RECORDS_DELETED: (
        "other",
        lambda e: f"{_partition(e)}: records deleted, log start {e.get('log_start_offset')}",
    ),
}

_ENVELOPE = ("seq", "time_ms", "broker", "type", "replay")


def _generic(e: dict[str, Any]) -> str:
    """Event types without their own words (new ones, transactions): every field."""
    fields = ", ".join(f"{k}={v}" for k, v in e.items() if k not in _ENVELOPE)
    return f"broker {e['broker']}: {e['type']} {fields}".rstrip()


def describe(event: dict[str, Any]) -> FeedItem | None:
    """The feed item for one event, or None when the feed does not show it."""
    kind = str(event.get("type"))
    if event.get("replay") or kind in HIDDEN:
        return None
    category, text = _TEXT.get(kind, ("other", _generic))
    return FeedItem(int(event["time_ms"]), int(event["broker"]), kind, category, text(event))


class Feed:
    """The newest ``length`` items, newest first, each metadata event once."""

    def __init__(self, length: int = 60) -> None:
        self.length = length
        self.items: list[FeedItem] = []
        self._recent_metadata: dict[tuple[Any, ...], int] = {}

    def add(self, events: Iterable[dict[str, Any]]) -> None:
        for event in events:
            item = describe(event)
            if item is None or self._is_copy(event):
                continue
            self.items.insert(0, item)
        del self.items[self.length :]

    def _is_copy(self, event: dict[str, Any]) -> bool:
        if event.get("type") not in REPLAYED_BY_EVERY_BROKER:
            return False
        key = tuple(sorted((k, str(v)) for k, v in event.items() if k not in _ENVELOPE))
        time_ms = int(event["time_ms"])
        seen = self._recent_metadata.get(key)
        self._recent_metadata = {
            k: t for k, t in self._recent_metadata.items() if time_ms - t < SAME_EVENT_WITHIN_MS
        }
        self._recent_metadata[key] = time_ms
        return seen is not None and time_ms - seen < SAME_EVENT_WITHIN_MS
