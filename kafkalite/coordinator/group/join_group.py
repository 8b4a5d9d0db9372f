"""A JoinGroup as the coordinator takes it, and its answer: the classic protocol's first
step, handled by a classic group (``coordinator``) or, for a classic member of a consumer
group, by the consumer-group coordinator (``classic_members``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kafkalite.protocol.errors import ErrorCode


@dataclass(frozen=True, slots=True)
class JoinRequest:
    group_id: str
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    require_known_member_id: bool
    reason: str | None = None
    """Why the client (re)joins (JoinGroup v8+, KIP-800): logged when it starts a rebalance."""


@dataclass(slots=True)
class JoinResult:
    error: ErrorCode = ErrorCode.none
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    member_id: str = ""
    members: list[tuple[str, str | None, bytes]] = field(default_factory=list)
