"""The timers the consumer group coordinator keeps for each member of a consumer group, as
Kafka's coordinator does:

* its session (``group.consumer.session.timeout.ms``, or the group's
  ``consumer.session.timeout.ms``; a classic member's, from its JoinGroup): restarted by
  every heartbeat; when it runs out the member is fenced and its partitions go to the
  others;
* its revocation deadline (its rebalance timeout, the client's ``max.poll.interval.ms``):
  started when it is asked to give partitions up; if it is still at that epoch when the
  deadline passes, it is fenced;
* a classic member's rebalance timeout to rejoin once told to, and to send SyncGroup once
  joined (Kafka's join and sync timeouts).

Only the deadlines: ``consumer_coordinator`` asks which ran out (``expired``) and fences.
"""

from __future__ import annotations

from collections.abc import Callable

from kafkalite.coordinator.group.consumer_member import ConsumerGroupMember, MemberState

MemberKey = tuple[str, str]
"""(group, member)."""


class MemberTimers:
    def __init__(self, now_ms: Callable[[], int], session_timeout_ms: Callable[[str], int]) -> None:
        self.now_ms = now_ms
        self.session_timeout_ms = session_timeout_ms
        """Of a group: its ``consumer.session.timeout.ms``, else the broker's."""
        self.sessions: dict[MemberKey, int] = {}
        """(group, member) -> when its session runs out."""
        self.revocations: dict[MemberKey, tuple[int, int]] = {}
        """(group, member) -> (the epoch it must leave, by when)."""
        self.classic_deadlines: dict[MemberKey, tuple[int, str]] = {}
        """(group, classic member) -> by when it must send its JoinGroup (once told to
        rejoin) or its SyncGroup (once joined), and why it is fenced if it does not:
        Kafka's join and sync timeouts, both the member's rebalance timeout."""

    def session_ms(self, group_id: str, member: ConsumerGroupMember) -> int:
        """A classic member keeps the session timeout of its JoinGroup."""
        if member.classic is not None:
            return member.classic.session_timeout_ms
        return self.session_timeout_ms(group_id)

    def restart_session(self, group_id: str, member: ConsumerGroupMember) -> None:
        self.sessions[(group_id, member.member_id)] = self.now_ms() + self.session_ms(
            group_id, member
        )

    def heartbeat(self, key: MemberKey, member: ConsumerGroupMember, changed: bool) -> None:
        """Restart the member's session; start or stop its revocation deadline if its
        reconciliation moved (``changed``)."""
        group_id = key[0]
        now = self.now_ms()
        self.sessions[key] = now + self.session_ms(group_id, member)
        if changed:
            if member.state == MemberState.UNREVOKED_PARTITIONS:
                deadline = now + max(member.rebalance_timeout_ms, 0)
                self.revocations[key] = (member.member_epoch, deadline)
            else:
                self.revocations.pop(key, None)

    def await_sync(self, group_id: str, member_id: str, rebalance_timeout_ms: int) -> None:
        """A classic member joined: it has its rebalance timeout to send SyncGroup."""
        deadline = self.now_ms() + max(rebalance_timeout_ms, 0)
        self.classic_deadlines[(group_id, member_id)] = (deadline, "did not sync in time")

    def await_rejoin(self, group_id: str, member_id: str, rebalance_timeout_ms: int) -> None:
        """A classic member was told to rejoin: from the first time, its rebalance timeout."""
        deadline = self.now_ms() + max(rebalance_timeout_ms, 0)
        self.classic_deadlines.setdefault(
            (group_id, member_id), (deadline, "did not rejoin in time")
        )

    def synced(self, group_id: str, member_id: str) -> None:
        self.classic_deadlines.pop((group_id, member_id), None)

    def expired(self, group_id: str, member: ConsumerGroupMember, now: int) -> str | None:
        """Why the member is fenced now (None: it is not). A member not timed yet (its
        group was loaded since) gets a whole session, and if revoking, a whole rebalance
        timeout, from ``now``."""
        key = (group_id, member.member_id)
        session = self.sessions.setdefault(key, now + self.session_ms(group_id, member))
        if member.state == MemberState.UNREVOKED_PARTITIONS:
            self.revocations.setdefault(
                key, (member.member_epoch, now + max(member.rebalance_timeout_ms, 0))
            )
        revocation = self.revocations.get(key)
        if session <= now:
            return "session timeout"
        if revocation and revocation[1] <= now and member.member_epoch == revocation[0]:
            return "did not revoke its partitions in time"
        if (classic := self.classic_deadlines.get(key)) and classic[0] <= now:
            return classic[1]
        return None

    def forget(self, key: MemberKey) -> None:
        self.sessions.pop(key, None)
        self.revocations.pop(key, None)
        self.classic_deadlines.pop(key, None)

    def forget_group(self, group_id: str) -> None:
        for key in [k for k in self._timed() if k[0] == group_id]:
            self.forget(key)

    def forget_all_but(self, live: set[MemberKey]) -> None:
        for key in [k for k in self._timed() if k not in live]:
            self.forget(key)

    def _timed(self) -> tuple[MemberKey, ...]:
        return (*self.sessions, *self.revocations, *self.classic_deadlines)
