"""Small helpers for driving ``RaftNode``s by hand in unit tests (no faults, no sim)."""

from __future__ import annotations

import random
from collections.abc import Iterable

from kafkalite.raft import (
    ElectionState,
    Entry,
    Envelope,
    MemoryQuorumStateStore,
    MemoryRaftLog,
    RaftConfig,
    RaftNode,
)

CONFIG = RaftConfig()


def entries(*epochs: int, start: int = 0) -> list[Entry]:
    """Entries with the given epochs at consecutive offsets from ``start``."""
    return [Entry(start + i, e, b"%d@%d" % (start + i, e)) for i, e in enumerate(epochs)]


def make_node(
    node_id: int,
    voters: Iterable[int] = (1, 2, 3),
    epochs: Iterable[int] = (),
    state: ElectionState | None = None,
    seed: int = 0,
) -> RaftNode:
    log = MemoryRaftLog(entries=entries(*epochs))
    log.flush()
    return RaftNode(
        node_id, list(voters), MemoryQuorumStateStore(state), log, random.Random(seed), CONFIG
    )


def deliver(
    nodes: dict[int, RaftNode], messages: list[Envelope], now: int, max_rounds: int = 50
) -> list[Envelope]:
    """Deliver messages (and what they cause) until quiet; returns those addressed to
    nodes not in ``nodes`` (as if they were partitioned away)."""
    lost = []
    for _ in range(max_rounds):
        if not messages:
            break
        pending, messages = messages, []
        for env in pending:
            if env.destination in nodes:
                messages += nodes[env.destination].handle(now, env)
            else:
                lost.append(env)
    return lost


def settle(nodes: dict[int, RaftNode], start: int, duration: int, step: int = 5) -> int:
    """Run a fault-free network: poll every node each ``step`` ms and deliver at once."""
    now = start
    while now < start + duration:
        out = [env for node in nodes.values() for env in node.poll(now)]
        deliver(nodes, out, now)
        now += step
    return now
