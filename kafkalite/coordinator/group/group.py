"""One consumer group under the classic rebalance protocol, as pure state and transitions.

States and the moves between them are Kafka's (``GroupMetadata``)::

    Empty --join--> PreparingRebalance --all joined / timeout--> CompletingRebalance
      ^                   ^    |                                     |
      |                   |    +--no members left--> Empty           | leader's SyncGroup
      |                   +---- join / leave / session expiry ---- Stable <-+
      +------------------ last member leaves -------------------------------+

A rebalance bumps the generation; requests from an older generation are fenced
(ILLEGAL_GENERATION) and unknown members are rejected (UNKNOWN_MEMBER_ID), which is what
keeps a zombie consumer from committing offsets for partitions it no longer owns.

Static members (KIP-345) carry a ``group.instance.id``: when one restarts, it takes its old
place under a new member id and keeps its assignment, and the others are not rebalanced;
its old member id is fenced (FENCED_INSTANCE_ID). One that misses a rebalance (restarting,
or slow to rejoin) keeps its place in the new generation until its session runs out (Kafka
also removes, one rebalance timeout later, members that have not sent SyncGroup:
``expirePendingSync``, not done here). The first rebalance of an empty group
waits ``group.initial.rebalance.delay.ms`` (extended by each new member, up to the
rebalance timeout) so that consumers starting together are assigned together.

No asyncio here: the coordinator drives time and waiting; tests drive this directly.
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, field


class GroupState(enum.Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


_ALLOWED: dict[GroupState, set[GroupState]] = {
    GroupState.EMPTY: {GroupState.PREPARING_REBALANCE, GroupState.DEAD},
    GroupState.PREPARING_REBALANCE: {
        GroupState.COMPLETING_REBALANCE,
        GroupState.EMPTY,
        GroupState.DEAD,
    },
    GroupState.COMPLETING_REBALANCE: {
        GroupState.PREPARING_REBALANCE,
        GroupState.STABLE,
        GroupState.DEAD,
    },
    GroupState.STABLE: {GroupState.PREPARING_REBALANCE, GroupState.DEAD},
    GroupState.DEAD: set(),
}


class IllegalTransitionError(RuntimeError):
    pass


@dataclass(slots=True)
class Member:
    member_id: str
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocols: list[tuple[str, bytes]]
    group_instance_id: str | None = None
    assignment: bytes = b""
    last_heartbeat_ms: int = 0
    """When its session last started over: a heartbeat, or the coordinator answering it."""
    joined: bool = False  # has (re)joined during the current rebalance
    awaiting_sync: bool = False  # its SyncGroup is held until the leader's assignment

    def metadata_for(self, protocol: str) -> bytes:
        return next(meta for name, meta in self.protocols if name == protocol)


@dataclass(slots=True)
class Group:
    group_id: str
    state: GroupState = GroupState.EMPTY
    generation_id: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    rebalance_deadline_ms: int = 0
    initial_delay_until_ms: int = 0  # the first join of an empty group completes no sooner
    static_members: dict[str, str] = field(default_factory=dict)  # instance id -> member id

    def transition(self, target: GroupState) -> None:
        if target not in _ALLOWED[self.state]:
            raise IllegalTransitionError(f"{self.group_id}: {self.state.value} -> {target.value}")
        self.state = target

    @staticmethod
    def new_member_id(client_id: str) -> str:
        return f"{client_id}-{uuid.uuid4()}"

    def supports(self, protocol_type: str, protocols: list[tuple[str, bytes]]) -> bool:
        """A joiner must share the group's protocol type and one protocol with everyone."""
        if not protocols:
            return False
        if not self.members:
            return True
        if protocol_type != self.protocol_type:
            return False
        names = {name for name, _ in protocols}
        return bool(names & self.candidate_protocols())

    def candidate_protocols(self) -> set[str]:
        sets = [{name for name, _ in m.protocols} for m in self.members.values()]
        return set.intersection(*sets) if sets else set()

    def select_protocol(self) -> str:
        """Each member votes for its most preferred candidate; most votes wins (Kafka)."""
        candidates = self.candidate_protocols()
        votes: dict[str, int] = {}
        for m in self.members.values():
            choice = next(name for name, _ in m.protocols if name in candidates)
            votes[choice] = votes.get(choice, 0) + 1
        return max(sorted(votes), key=lambda name: votes[name])

    # ---- transitions driven by requests and timers -----------------------------------

    def add_member(self, member: Member, protocol_type: str) -> None:
        if not self.members:
            self.protocol_type = protocol_type
        self.members[member.member_id] = member
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        if self.leader_id is None:
            self.leader_id = member.member_id

    def remove_member(self, member_id: str) -> None:
        member = self.members.pop(member_id, None)
        if member is not None and member.group_instance_id is not None:
            self.static_members.pop(member.group_instance_id, None)
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)

    def static_member(self, group_instance_id: str | None) -> str | None:
        """The member id a static member holds now, if it is in the group."""
        return None if group_instance_id is None else self.static_members.get(group_instance_id)

    def is_fenced_instance(self, member_id: str, group_instance_id: str | None) -> bool:
        """A request naming a static member's instance id under an id it no longer holds
        comes from the instance's older incarnation: FENCED_INSTANCE_ID."""
        holder = self.static_member(group_instance_id)
        return holder is not None and holder != member_id

    def replace_static_member(self, group_instance_id: str, new_member_id: str) -> str:
        """A static member rejoined without its member id: it takes its old place (its
        assignment, its leadership) under ``new_member_id``. Returns the old member id."""
        old_member_id = self.static_members[group_instance_id]
        member = self.members.pop(old_member_id)
        member.member_id = new_member_id
        self.members[new_member_id] = member
        self.static_members[group_instance_id] = new_member_id
        if self.leader_id == old_member_id:
            self.leader_id = new_member_id
        return old_member_id

    def prepare_rebalance(self, now_ms: int, initial_delay_ms: int = 0) -> None:
        """Everyone must rejoin; the deadline is the longest rebalance timeout. The first
        rebalance of an empty group completes no sooner than ``initial_delay_ms``."""
        if self.state == GroupState.PREPARING_REBALANCE:
            return
        first = self.state == GroupState.EMPTY
        self.transition(GroupState.PREPARING_REBALANCE)
        for m in self.members.values():
            m.joined = False
        self.rebalance_deadline_ms = now_ms + self.rebalance_timeout_ms()
        self.initial_delay_until_ms = min(now_ms + initial_delay_ms, self.rebalance_deadline_ms)
        if not first:
            self.initial_delay_until_ms = 0

    def extend_initial_delay(self, now_ms: int, initial_delay_ms: int) -> None:
        """Another member joined during the initial delay: wait one more delay for the next
        (Kafka's ``InitialDelayedJoin``), never past the rebalance deadline."""
        if now_ms < self.initial_delay_until_ms:
            self.initial_delay_until_ms = min(now_ms + initial_delay_ms, self.rebalance_deadline_ms)

    def ready_to_complete_join(self, now_ms: int) -> bool:
        """Everyone has rejoined, and the initial delay (if any) is over."""
        return now_ms >= self.initial_delay_until_ms and all(
            m.joined for m in self.members.values()
        )

    def complete_join(self, now_ms: int) -> list[str]:
        """End the join phase: drop the dynamic members that did not rejoin, bump the
        generation. Returns the member ids removed.

        A static member that did not rejoin stays, with its place in the assignment, until
        its session runs out: it may be restarting, and comes back without a rebalance
        (Kafka's ``completeClassicGroupJoin`` removes only ``notYetRejoinedMembers`` that
        are not static). If no member rejoined at all, the phase waits another rebalance
        timeout instead (Kafka's ``maybeElectNewJoinedLeader`` is false): the group stays
        PreparingRebalance while the absent members' sessions run out. Every remaining
        member's session starts over now, with its JoinGroup answer (Kafka's
        ``rescheduleClassicGroupMemberHeartbeat`` there): a member waited in JoinGroup
        without heartbeating, however long the others took to rejoin, and must get a whole
        session to send SyncGroup. With nobody left the group becomes Empty.
        """
        removed = [
            mid for mid, m in self.members.items() if not m.joined and m.group_instance_id is None
        ]
        for mid in removed:
            self.remove_member(mid)
        if self.members and not self.maybe_elect_new_joined_leader():
            self.rebalance_deadline_ms = now_ms + self.rebalance_timeout_ms()
            return removed
        for m in self.members.values():
            m.last_heartbeat_ms = now_ms
        self.generation_id += 1
        if not self.members:
            self.protocol_name = None
            self.leader_id = None
            self.transition(GroupState.EMPTY)
            return removed
        self.protocol_name = self.select_protocol()
        self.transition(GroupState.COMPLETING_REBALANCE)
        return removed

    def maybe_elect_new_joined_leader(self) -> bool:
        """The leader must be a member that rejoined: if it did not, the first that did
        leads. False when nobody rejoined (Kafka's ``maybeElectNewJoinedLeader``)."""
        leader = self.members.get(self.leader_id or "")
        if leader is not None and leader.joined:
            return True
        joined = next((mid for mid, m in self.members.items() if m.joined), None)
        if joined is None:
            return False
        self.leader_id = joined
        return True

    def current_classic_group_members(self) -> list[tuple[str, str | None, bytes]]:
        """The members as the leader's JoinGroup answer lists them (member id, instance id,
        metadata for the selected protocol), the static members first.

        Kafka lists them in its ``HashMap``'s order, which promises none. kafka-python
        3.0.12's range and round-robin assignors split the list into static and dynamic
        members with ``itertools.groupby``, which groups only neighbours: a static member
        cut off from the others by a dynamic one is left out of the assignment, with no
        partition, generation after generation (against Kafka too, when its hash order
        falls that way). Kafka's own assignors sort the static members first as well."""
        protocol = self.protocol_name or ""
        members = sorted(self.members.values(), key=lambda m: m.group_instance_id is None)
        return [(m.member_id, m.group_instance_id, m.metadata_for(protocol)) for m in members]

    def rebalance_timeout_ms(self) -> int:
        """How long a rebalance waits for members to rejoin: the longest of theirs."""
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def complete_sync(self, assignments: dict[str, bytes], now_ms: int) -> None:
        """The leader's assignment: the group is Stable, and the session of each member
        that waited for it in SyncGroup starts over as it gets its answer (Kafka's
        ``propagateAssignment``)."""
        for mid, member in self.members.items():
            member.assignment = assignments.get(mid, b"")
            if member.awaiting_sync:
                member.awaiting_sync = False
                member.last_heartbeat_ms = now_ms
        self.transition(GroupState.STABLE)

    def expired_members(self, now_ms: int) -> list[str]:
        """Members silent for longer than their session timeout. A member whose JoinGroup
        or SyncGroup the coordinator is holding is waiting on the group, not silent
        (Kafka's ``shouldKeepAlive``): it cannot heartbeat meanwhile."""
        return [
            mid
            for mid, m in self.members.items()
            if not (self.state == GroupState.PREPARING_REBALANCE and m.joined)
            and not m.awaiting_sync
            and now_ms - m.last_heartbeat_ms > m.session_timeout_ms
        ]
