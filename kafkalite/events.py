"""The catalog of event types the cluster emits, each with what it means.

Every broker keeps an event stream (``/events``) that the dashboard, the CLI, the labs and
the tests read. An event is a JSON object ``{"seq", "time_ms", "broker", "type", ...}``;
``type`` is one of the values below. Because :class:`EventType` is a ``StrEnum``, a member
compares equal to its string and serialises as it, so readers may use either.

This module imports nothing from the cluster, so the notebook side (``kafkalite.lab``) can
import it without importing a broker. Add new event types here, with their one line.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Protocol


class EventType(StrEnum):
    """Every kind of event a broker emits (the ``type`` field of ``/events``)."""

    # The broker's own life
    BROKER_STARTED = "broker_started"
    """This broker registered with the controller and serves clients (``broker_epoch``)."""

    # The metadata quorum (KRaft) and the controller on it
    QUORUM_LEADER_ELECTED = "quorum_leader_elected"
    """This broker won a metadata-quorum election and leads it in ``epoch``."""
    QUORUM_FOLLOWING = "quorum_following"
    """This broker follows metadata-quorum ``leader`` in ``epoch``."""
    CONTROLLER_ACTIVATED = "controller_activated"
    """This broker's controller became active: it replayed its own epoch's first record."""
    CONTROLLER_RESIGNED = "controller_resigned"
    """This broker's controller stopped being the active one (it lost quorum leadership)."""
    METADATA_SNAPSHOT_CREATED = "metadata_snapshot_created"
    """This broker wrote a metadata snapshot up to ``end_offset`` (``records`` in it)."""
    METADATA_SNAPSHOT_LOADED = "metadata_snapshot_loaded"
    """This broker replaced its metadata image by a snapshot up to ``offset``."""

    # Cluster metadata as replayed by every broker
    BROKER_FENCED = "broker_fenced"
    """The controller fenced ``broker_id`` (missed heartbeats or shutdown): it leads nothing."""
    BROKER_UNFENCED = "broker_unfenced"
    """The controller unfenced ``broker_id``: it may lead and join ISRs again."""
    BROKER_SESSION_EXPIRED = "broker_session_expired"
    """The active controller heard nothing from ``broker_id`` for ``silent_ms``, longer than
    its session (``session_ms``: ``broker.session.timeout.ms``), and fenced it (paused, cut
    off or hung: nothing closed its connections); ``others_silent_ms`` are the other live
    brokers' silences then."""
    BROKER_CONNECTION_CLOSED = "broker_connection_closed"
    """The active controller saw ``broker_id``'s connection to it close (``peer``; "quorum":
    its voter's connection was found refused or reset when this controller was elected):
    its process is gone, since the operating system closes a killed process's sockets. The
    broker is fenced at once, without waiting out its session (the one place Kafka-Lite
    departs from KRaft)."""
    TOPIC_CREATED = "topic_created"
    """A topic was created (``topic``, ``topic_id``)."""
    TOPIC_DELETED = "topic_deleted"
    """A topic was deleted; this broker removed its replicas."""
    CONFIG_CHANGED = "config_changed"
    """A topic or broker setting changed (``resource``, ``name``, ``value``)."""

    # Replication
    LEADER_ELECTED = "leader_elected"
    """This broker became the leader of a partition in ``leader_epoch``."""
    UNCLEAN_LEADER_ELECTED = "unclean_leader_elected"
    """This broker became leader from outside the ISR: acknowledged records may be lost."""
    ISR_SHRUNK = "isr_shrunk"
    """The leader removed lagging or dead replicas (``removed``) from the ISR."""
    ISR_EXPANDED = "isr_expanded"
    """The leader added caught-up replicas (``added``) back to the ISR."""
    REASSIGNMENT_STARTED = "reassignment_started"
    """The leader's partition is moving to ``target`` replicas: ``adding`` ones will fetch
    the whole log, ``removing`` ones leave once every target replica is in sync."""
    REASSIGNMENT_COMPLETED = "reassignment_completed"
    """A partition's move ended: it now lives on ``replicas`` (``cancelled`` if undone)."""
    REPLICA_DELETED = "replica_deleted"
    """This broker is no longer a replica of a partition (moved away) and deleted its copy."""
    LOG_TRUNCATED = "log_truncated"
    """A follower cut its log back to agree with the leader (uncommitted records are gone)."""
    LOG_START_ADVANCED = "log_start_advanced"
    """A replica's log start moved up (``reason``): retention deleted old segments, or a
    follower followed its leader's log start (so deleted records stay deleted)."""
    REQUEST_FENCED = "request_fenced"
    """A request carried a stale leader or broker epoch and was refused (``api``)."""

    # Records and log housekeeping
    RECORDS_DELETED = "records_deleted"
    """DeleteRecords moved a partition's log start to ``log_start_offset``."""
    LOG_CLEANED = "log_cleaned"
    """The log cleaner compacted a partition's replica up to ``cleaned_up_to``: the records,
    tombstones, aborted records and transaction markers it removed, bytes before/after."""
    DUPLICATE_SUPPRESSED = "duplicate_suppressed"
    """An idempotent producer's retry was recognised and answered with its first offsets."""
    PRODUCER_ID_ASSIGNED = "producer_id_assigned"
    """InitProducerId gave a producer its ``producer_id`` and ``producer_epoch``."""

    # Consumer groups
    GROUP_PARTITION_LOADED = "group_partition_loaded"
    """This broker loaded a ``__consumer_offsets`` partition: it coordinates its groups."""
    GROUP_REBALANCED = "group_rebalanced"
    """A group completed a rebalance into a new ``generation``."""
    GROUP_MEMBER_REMOVED = "group_member_removed"
    """A member left a group or its session expired (``reason``)."""
    CONSUMER_GROUP_ASSIGNMENT_COMPUTED = "consumer_group_assignment_computed"
    """A consumer group (KIP-848) has a new target ``assignment`` (member -> partitions)
    for group ``epoch``; each member moves to it at its own pace."""
    CONSUMER_GROUP_MEMBER_RECONCILED = "consumer_group_member_reconciled"
    """A consumer group's member (``client_id``, ``member``) took a step towards its
    target: now at ``member_epoch`` in ``state``, holding ``assigned``, still giving up
    ``revoking``."""
    GROUP_PROTOCOL_CHANGED = "group_protocol_changed"
    """A group with members changed protocols online (KIP-848's migration): a classic group
    became a consumer group when a consumer-protocol member joined (``protocol``
    ``consumer``), or back when its last one left (``classic``), at ``epoch``."""
    OFFSETS_COMMITTED = "offsets_committed"
    """A group committed consumer offsets."""
    OFFSETS_DELETED = "offsets_deleted"
    """OffsetDelete removed a group's committed offsets for ``partitions``."""
    GROUP_DELETED = "group_deleted"
    """DeleteGroups removed an empty ``group`` and its committed offsets."""
    STATIC_MEMBER_REJOINED = "static_member_rejoined"
    """A static member (``group_instance_id``) came back as ``member`` and got its old
    assignment without a rebalance; ``replaced`` is the member id it had."""

    # Transactions (the coordinator of a transactional id reports them)
    TXN_PARTITION_LOADING = "txn_partition_loading"
    """This broker is loading a big ``__transaction_state`` partition in steps: until it is
    loaded, its ids get COORDINATOR_LOAD_IN_PROGRESS."""
    TXN_PARTITION_LOADED = "txn_partition_loaded"
    """This broker loaded a ``__transaction_state`` partition: it coordinates its ids."""
    TXN_STARTED = "txn_started"
    """A transaction began: its first partitions were added (``transactional_id``)."""
    TXN_PREPARE_COMMIT = "txn_prepare_commit"
    """The decision to commit is in the transaction log; markers follow (``partitions``)."""
    TXN_PREPARE_ABORT = "txn_prepare_abort"
    """The decision to abort is in the transaction log; markers follow (``partitions``)."""
    MARKERS_WRITTEN = "markers_written"
    """Every partition of the transaction has its commit or abort marker (``result``)."""
    TXN_COMMITTED = "txn_committed"
    """The transaction is complete: committed on every partition (CompleteCommit)."""
    TXN_ABORTED = "txn_aborted"
    """The transaction is complete: aborted on every partition (CompleteAbort)."""
    TXN_TIMED_OUT = "txn_timed_out"
    """An open transaction outlived ``transaction.timeout.ms``; the coordinator aborts it."""
    PRODUCER_FENCED = "producer_fenced"
    """A new instance of a ``transactional.id`` bumped its epoch: the old one is fenced."""


class EventSink(Protocol):
    """Where a component reports events: ``EventLog.emit`` on a broker, a list in tests."""

    def __call__(self, event_type: EventType, /, **fields: Any) -> None: ...
