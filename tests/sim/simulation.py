"""A deterministic simulation of a Raft quorum: virtual clock, seeded faults, checkers.

Everything random comes from one ``random.Random(seed)``, and events at the same virtual
time run in insertion order, so a seed replays exactly (``RAFT_SIM_SEED=123``).

What it simulates (like 6.5840's labrpc, plus crashes):
- a network that drops, delays (1..max_delay ms, hence reorders) and duplicates messages
  and partitions the voters into groups that cannot talk;
- crashes: a node vanishes with its in-flight messages and restarts later from what it had
  synced (``MemoryQuorumStateStore.crash``, ``MemoryRaftLog.crash``), with an empty state
  machine that is rebuilt from the snapshot and the committed log; the nodes that can
  reach it see its connections reset (``RaftNode.voter_unreachable``), as peers of a
  killed process do, and so does a node whose message reaches a crashed one;
- clients appending random payloads, mostly to whoever says it is leader;
- state machines that snapshot now and then, so lagging followers need FetchSnapshot.

After ``fault_ms`` the network heals and every node is up; within ``liveness_ms`` a leader
must be elected and an entry appended after the heal must be applied on every node.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kafkalite.raft import (
    Envelope,
    LogInvariantError,
    MemoryQuorumStateStore,
    MemoryRaftLog,
    RaftConfig,
    RaftNode,
    Role,
)
from tests.sim.checkers import Applied, Checker, Violation, encode_state

NodeFactory = Callable[..., RaftNode]


@dataclass
class SimConfig:
    nodes: int = 3
    fault_ms: int = 2000
    liveness_ms: int = 5000
    drop: float = 0.05
    duplicate: float = 0.02
    max_delay_ms: int = 20
    crashes: int = 2
    partitions: int = 2
    client_every_ms: int = 25
    snapshot_every: int = 40
    fsync: bool = True
    resets: bool = True
    """Peers of a crashed node see its connections reset (else only timeouts find it)."""
    max_events: int = 200_000

    @classmethod
    def randomised(cls, rng: random.Random, nodes: int) -> SimConfig:
        """A fault mix drawn from the seed: each seed stresses something different."""
        return cls(
            nodes=nodes,
            fault_ms=rng.randint(2000, 6000),
            drop=rng.choice([0.0, 0.01, 0.05, 0.2]),
            duplicate=rng.choice([0.0, 0.02, 0.1]),
            max_delay_ms=rng.choice([2, 20, 60]),
            crashes=rng.randint(0, 5),
            partitions=rng.randint(0, 5),
            client_every_ms=rng.choice([5, 25, 100]),
            snapshot_every=rng.choice([10, 40, 1000]),
        )


@dataclass
class SimNode:
    node_id: int
    store: MemoryQuorumStateStore
    log: MemoryRaftLog
    raft: RaftNode | None
    state: list[Applied] = field(default_factory=list)
    wake_at: int = -1
    was_leader_epoch: int = -1
    incarnation: int = 0


@dataclass
class SimResult:
    seed: int
    leaders: int
    committed: int
    healed_leader_ms: int
    events: int


class Simulation:
    """One seeded run; ``run()`` returns stats or raises ``Violation`` naming the seed."""

    def __init__(
        self,
        seed: int,
        config: SimConfig | None = None,
        node_factory: NodeFactory = RaftNode,
        raft: RaftConfig | None = None,
    ) -> None:
        self.seed = seed
        self.cfg = config or SimConfig()
        self.rng = random.Random(seed)
        self.raft_config = raft or RaftConfig()
        self.node_factory = node_factory
        self.voters = list(range(1, self.cfg.nodes + 1))
        self.now = 0
        self.checker = Checker()
        self.group: dict[int, int] = dict.fromkeys(self.voters, 0)
        self.drop = self.cfg.drop
        self.duplicate = self.cfg.duplicate
        self.healed = False
        self.heal_end = 0
        self.healed_leader_ms = -1
        self._events: list[tuple[int, int, str, Any]] = []
        self._seq = 0
        self._appends = 0
        self.events = 0
        self.nodes = {
            n: SimNode(n, MemoryQuorumStateStore(fsync=self.cfg.fsync), MemoryRaftLog(), None)
            for n in self.voters
        }
        for n in self.voters:
            self._start(self.nodes[n])

    # ---- events ----------------------------------------------------------------------------
    def _at(self, time: int, kind: str, data: Any = None) -> None:
        self._seq += 1
        heapq.heappush(self._events, (time, self._seq, kind, data))

    def _start(self, node: SimNode) -> None:
        node.raft = self.node_factory(
            node.node_id,
            self.voters,
            node.store,
            node.log,
            random.Random(self.rng.random()),
            self.raft_config,
        )
        node.state = []
        node.incarnation += 1
        node.was_leader_epoch = -1
        node.wake_at = -1
        self._after(node, node.raft.poll(self.now))

    def _crash(self, node: SimNode) -> None:
        node.raft = None
        node.store = node.store.crash()
        node.log = node.log.crash()
        for peer in self.nodes.values():
            if peer.raft is not None and self.group[peer.node_id] == self.group[node.node_id]:
                self._reset(peer, node.node_id)

    def _reset(self, peer: SimNode, gone: int) -> None:
        """``peer``'s connection to ``gone`` is reset, a little later (like TCP's RST)."""
        if not self.cfg.resets:
            return
        delay = self.rng.randint(1, self.cfg.max_delay_ms)
        self._at(self.now + delay, "reset", (peer.node_id, peer.incarnation, gone))

    def _send(self, env: Envelope) -> None:
        if self.group[env.source] != self.group[env.destination] or self.rng.random() < self.drop:
            return
        copies = 2 if self.rng.random() < self.duplicate else 1
        for _ in range(copies):
            link = (self.nodes[env.source].incarnation, self.nodes[env.destination].incarnation)
            self._at(self.now + self.rng.randint(1, self.cfg.max_delay_ms), "deliver", (env, link))

    def _after(self, node: SimNode, out: list[Envelope]) -> None:
        """Send what a node produced, apply what it committed, run the per-step checks."""
        raft = node.raft
        assert raft is not None
        for env in out:
            self._send(env)
        if self.checker.check_election_safety(raft) and node.was_leader_epoch != raft.epoch:
            node.was_leader_epoch = raft.epoch
            self.checker.check_leader_completeness(raft)
        self.checker.apply(node.node_id, node.state, raft.take_committed())
        applied = len(node.state)
        if applied - raft.log.log_start_offset >= self.cfg.snapshot_every and (
            self.rng.random() < 0.5
        ):
            raft.create_snapshot(applied, encode_state(node.state))
        deadline = max(raft.next_deadline_ms(), self.now + 1)
        if node.wake_at <= self.now or deadline < node.wake_at:
            node.wake_at = deadline
            self._at(deadline, "wake", node.node_id)

    def _schedule_faults(self) -> None:
        for _ in range(self.cfg.crashes):
            at = self.rng.randrange(self.cfg.fault_ms)
            self._at(at, "crash", self.rng.choice([*self.voters, 0]))  # 0: the leader
        for _ in range(self.cfg.partitions):
            at = self.rng.randrange(self.cfg.fault_ms)
            self._at(at, "partition", None)
        self._at(self.cfg.fault_ms, "heal", None)
        self._at(self.cfg.fault_ms + self.cfg.liveness_ms, "deadline", None)
        self._at(1, "client", None)

    # ---- run -------------------------------------------------------------------------------
    def run(self) -> SimResult:
        try:
            return self._run()
        except (Violation, LogInvariantError) as e:
            raise Violation(
                f"seed {self.seed} at {self.now} ms: {e} (replay: RAFT_SIM_SEED={self.seed})"
            ) from None

    def _run(self) -> SimResult:
        self._schedule_faults()
        while self._events:
            self.step()
            if self.events % 64 == 0:
                self._check_logs()
            if self.healed and self._live():
                self._check_logs()
                break
        return SimResult(
            self.seed,
            len(self.checker.leaders),
            len(self.checker.committed),
            self.healed_leader_ms,
            self.events,
        )

    def step(self) -> None:
        """Process the next event (with its per-step checks)."""
        self.now, _, kind, data = heapq.heappop(self._events)
        self.events += 1
        if self.events > self.cfg.max_events:
            raise Violation(f"livelock: more than {self.cfg.max_events} events")
        if kind == "deadline":
            raise Violation(
                "liveness: no leader committed a new entry on every node "
                f"within {self.cfg.liveness_ms} ms of healing"
            )
        getattr(self, "_on_" + kind)(data)

    def run_until(self, done: Callable[[], bool], limit_ms: int) -> int:
        """Step a fault-free run (clients only) until ``done()``; returns the time."""
        if not any(kind == "client" for _, _, kind, _ in self._events):
            self._at(self.now + 1, "client", None)
        while not done():
            if self._events[0][0] > limit_ms:
                raise Violation(f"seed {self.seed}: condition not met by {limit_ms} ms")
            self.step()
        return self.now

    def crash(self, node_id: int) -> None:
        """Crash a node now; it stays down (tests call this directly)."""
        self._crash(self.nodes[node_id])

    def isolate(self, node_id: int) -> None:
        """Cut a node off from all others now (no connection is reset); it stays cut off."""
        self.group = {n: int(n == node_id) for n in self.voters}

    def leader(self) -> SimNode | None:
        return self._leader()

    def _live(self) -> bool:
        """Every node applied an entry at an offset no log had when the network healed."""
        if all(n.raft is not None and len(n.state) > self.heal_end for n in self.nodes.values()):
            self.healed_leader_ms = self.now - self.cfg.fault_ms
            return True
        return False

    def _check_logs(self) -> None:
        self.checker.check_logs(
            {n.node_id: n.log for n in self.nodes.values() if n.raft is not None}
        )

    def _on_deliver(self, data: tuple[Envelope, tuple[int, int]]) -> None:
        """Deliver unless partitioned or either end restarted since the send (like TCP, a
        restart breaks the connection and what was in flight on it)."""
        env, link = data
        node = self.nodes[env.destination]
        alive = (self.nodes[env.source].incarnation, node.incarnation) == link
        if not alive or self.group[env.source] != self.group[env.destination]:
            return
        if node.raft is not None:
            self._after(node, node.raft.handle(self.now, env))
        else:  # nothing listens there: refused
            self._reset(self.nodes[env.source], env.destination)

    def _on_reset(self, data: tuple[int, int, int]) -> None:
        node_id, incarnation, gone = data
        node = self.nodes[node_id]
        if node.raft is not None and node.incarnation == incarnation:
            node.raft.voter_unreachable(self.now, gone)
            self._after(node, [])

    def _on_wake(self, node_id: int) -> None:
        node = self.nodes[node_id]
        if node.raft is not None and node.wake_at == self.now:
            self._after(node, node.raft.poll(self.now))

    def _leader(self) -> SimNode | None:
        leaders = [n for n in self.nodes.values() if n.raft and n.raft.role is Role.LEADER]
        return max(leaders, key=lambda n: n.raft.epoch if n.raft else -1, default=None)

    def _on_client(self, _: None) -> None:
        up = [n for n in self.nodes.values() if n.raft is not None]
        leader = self._leader()
        target = (
            leader if leader and self.rng.random() < 0.9 else (self.rng.choice(up) if up else None)
        )
        if target is not None and target.raft is not None:
            self._appends += 1
            payload = self.rng.randbytes(self.rng.randint(1, 12)) + b"%d" % self._appends
            if isinstance(target.raft.append(self.now, [payload]), int):
                self._after(target, [])
        self._at(self.now + self.rng.randint(1, 2 * self.cfg.client_every_ms), "client", None)

    def _on_crash(self, node_id: int) -> None:
        leader = self._leader()
        node = self.nodes[node_id] if node_id else leader
        if node is None or node.raft is None or self.healed:
            return
        self._crash(node)
        self._at(self.now + self.rng.randint(50, 1000), "restart", node.node_id)

    def _on_restart(self, node_id: int) -> None:
        node = self.nodes[node_id]
        if node.raft is None:
            self._start(node)

    def _on_partition(self, _: None) -> None:
        if self.healed:
            return
        self.group = {n: self.rng.randrange(2) for n in self.voters}
        self._at(self.now + self.rng.randint(100, 1500), "heal_partition", None)

    def _on_heal_partition(self, _: None) -> None:
        self.group = dict.fromkeys(self.voters, 0)

    def _on_heal(self, _: None) -> None:
        self.healed = True
        self.drop = 0.0
        self.group = dict.fromkeys(self.voters, 0)
        self.heal_end = max(n.log.end_offset for n in self.nodes.values())
        for node in self.nodes.values():
            if node.raft is None:
                self._start(node)
