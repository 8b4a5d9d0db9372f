"""One consumer group under the classic rebalance protocol, as pure state and transitions.

States and the moves between them are Kafka's (``GroupMetadata``)::

    Empty --join--> PreparingRebalance --all joined / timeout--> CompletingRebalance
      ^                   ^    |                                     |
      |                   |    +--no members left--> Empty           | leader's SyncGroup
      |                   +---- join / leave / session expiry ---- Stable <-+
      +------------------ last member leaves -------------------------------+

A rebalance bumps the generation; requests from an older generation are fenced
(ILLEGAL_GENERATION) and unknown members are rejected (UNKNOWN_MEMBER_ID), which is what
keeps a zombie consumer from committing offsets for partitions it no longer owns. No
asyncio here: the coordinator drives time and waiting; tests drive this directly.
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
    joined: bool = False  # has (re)joined during the current rebalance

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
        if self.leader_id is None:
            self.leader_id = member.member_id

    def remove_member(self, member_id: str) -> None:
        self.members.pop(member_id, None)
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)

    def prepare_rebalance(self, now_ms: int) -> None:
        """Everyone must rejoin; the deadline is the longest rebalance timeout."""
        if self.state == GroupState.PREPARING_REBALANCE:
            return
        self.transition(GroupState.PREPARING_REBALANCE)
        for m in self.members.values():
            m.joined = False
        timeout = max((m.rebalance_timeout_ms for m in self.members.values()), default=0)
        self.rebalance_deadline_ms = now_ms + timeout

    def all_joined(self) -> bool:
        return all(m.joined for m in self.members.values())

    def complete_join(self) -> list[str]:
        """End the join phase: drop who did not rejoin, bump the generation.

        Returns the member ids removed. With nobody left the group becomes Empty.
        """
        removed = [mid for mid, m in self.members.items() if not m.joined]
        for mid in removed:
            self.remove_member(mid)
        self.generation_id += 1
        if not self.members:
            self.protocol_name = None
            self.leader_id = None
            self.transition(GroupState.EMPTY)
            return removed
        if self.leader_id not in self.members:
            self.leader_id = next(iter(self.members))
        self.protocol_name = self.select_protocol()
        self.transition(GroupState.COMPLETING_REBALANCE)
        return removed

    def complete_sync(self, assignments: dict[str, bytes]) -> None:
        for mid, member in self.members.items():
            member.assignment = assignments.get(mid, b"")
        self.transition(GroupState.STABLE)

    def expired_members(self, now_ms: int) -> list[str]:
        """Members silent for longer than their session timeout (joiners are waiting, not
        silent, so they do not expire while a rebalance is collecting joins)."""
        return [
            mid
            for mid, m in self.members.items()
            if not (self.state == GroupState.PREPARING_REBALANCE and m.joined)
            and now_ms - m.last_heartbeat_ms > m.session_timeout_ms
        ]
