"""Seeded simulations of the metadata quorum (see ``simulation.py`` for the fault model).

Default: 2000 seeds in 20 chunks (parallel under xdist). More: ``RAFT_SIM_SEEDS=20000``.
Replay one: ``RAFT_SIM_SEED=123 pytest tests/sim -k replay``. A failure names its seed.
Seeds divisible by 4 run five voters, the others three; each seed draws its own fault mix.
"""

from __future__ import annotations

import os
import random
import statistics
from collections.abc import Callable

import pytest

from kafkalite.raft import MemoryQuorumStateStore, MemoryRaftLog, RaftConfig, RaftNode, Role
from kafkalite.raft.messages import VoteRequest
from kafkalite.raft.roles import LeaderState
from tests.sim.checkers import Checker, Violation
from tests.sim.simulation import SimConfig, SimResult, Simulation

pytestmark = pytest.mark.sim

CHUNKS = 20
SEEDS = int(os.environ.get("RAFT_SIM_SEEDS", "2000"))


def run_seed(
    seed: int,
    node_factory: type[RaftNode] = RaftNode,
    *,
    fsync: bool = True,
    raft: RaftConfig | None = None,
    resets: bool = True,
) -> SimResult:
    config = SimConfig.randomised(random.Random(seed), 5 if seed % 4 == 0 else 3)
    config.fsync = fsync
    config.resets = resets
    return Simulation(seed, config, node_factory, raft).run()


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_safety_and_liveness_under_faults(chunk: int) -> None:
    """Drops, delays, duplicates, partitions and crashes, then a healed network: no
    checker may fire, and a leader must commit on every node within the liveness bound."""
    for seed in range(chunk, SEEDS, CHUNKS):
        run_seed(seed)


@pytest.mark.skipif("RAFT_SIM_SEED" not in os.environ, reason="set RAFT_SIM_SEED to replay")
def test_replay_one_seed() -> None:
    result = run_seed(int(os.environ["RAFT_SIM_SEED"]))
    print(result)


def test_same_seed_same_run() -> None:
    """Determinism: the replay of a seed is the same run, event for event."""
    first, second = run_seed(7), run_seed(7)
    assert first == second


def failover_delays(fault: Callable[[Simulation, int], None]) -> list[int]:
    """``fault`` the leader of a healthy 3-voter quorum, 100 seeds: how long until a new
    one leads, sorted."""
    delays = []
    for seed in range(100):
        sim = Simulation(seed, SimConfig(drop=0.0, duplicate=0.0, max_delay_ms=2))
        sim.run_until(
            lambda s=sim: s.leader() is not None and s.leader().raft.high_watermark > 5, 5000
        )
        old = sim.leader()
        assert old is not None and old.raft is not None
        old_epoch, faulted_at = old.raft.epoch, sim.now
        fault(sim, old.node_id)
        sim.run_until(
            lambda s=sim, e=old_epoch: any(
                n.raft is not None and n.raft.role is Role.LEADER and n.raft.epoch > e
                for n in s.nodes.values()
            ),
            faulted_at + 5000,
        )
        delays.append(sim.now - faulted_at)
    return sorted(delays)


def test_a_killed_leader_is_replaced_within_a_few_hundred_milliseconds() -> None:
    """Its peers see its connections reset and stand without waiting out the fetch timeout."""
    delays = failover_delays(Simulation.crash)
    assert statistics.median(delays) < 300, delays
    assert delays[94] < 500, delays  # p95


def test_a_cut_off_leader_is_replaced_within_the_fetch_timeout() -> None:
    """Nothing is reset: its followers find it by ``fetch.timeout.ms`` (plus their jitter,
    up to half an election timeout) alone, here counted from their last Fetch answer just
    before the cut; a split vote adds an election timeout."""
    delays = failover_delays(Simulation.isolate)
    config = RaftConfig()
    found_by = config.fetch_timeout_ms + config.election_timeout_ms // 2
    assert statistics.median(delays) < found_by, delays
    assert delays[94] < found_by + config.election_timeout_ms, delays  # p95


# ---- the checkers must be able to fail ------------------------------------------------------
class GrantsEveryVote(RaftNode):
    """Broken on purpose: votes for every candidate, even twice in one epoch."""

    def _can_grant_vote(self, req: VoteRequest) -> bool:
        return True


def first_violation(
    node_factory: type[RaftNode] = RaftNode, *, fsync: bool = True, seeds: int = 300
) -> str:
    for seed in range(seeds):
        try:
            run_seed(seed, node_factory, fsync=fsync)
        except Violation as e:
            return str(e)
    return ""


def test_checker_catches_a_node_that_grants_every_vote() -> None:
    """Voting for stale candidates elects leaders that lack committed entries."""
    message = first_violation(GrantsEveryVote)
    assert "leader completeness" in message or "election safety" in message, message
    assert "RAFT_SIM_SEED=" in message


def test_checker_catches_a_disk_that_does_not_sync_the_vote() -> None:
    """A store that loses its writes on a crash lets a voter vote twice in one epoch."""
    message = first_violation(fsync=False, seeds=2000)
    assert message, "no seed caught the lost vote"


def test_log_matching_checker_fails_on_divergent_prefixes() -> None:
    a, b = MemoryRaftLog(), MemoryRaftLog()
    a.append_as_leader([b"x", b"y"], 1)
    b.append_as_leader([b"x", b"z"], 1)
    b.append_as_leader([b"w"], 2)
    a.append_as_leader([b"w"], 2)
    with pytest.raises(Violation, match="log matching"):
        Checker().check_logs({1: a, 2: b})


def test_state_machine_checker_fails_on_a_gap() -> None:
    log = MemoryRaftLog()
    entries = log.append_as_leader([b"a", b"b"], 1)
    with pytest.raises(Violation, match="gap or repeat"):
        Checker().apply(1, [], [entries[1]])


def test_leader_completeness_checker_fails_on_a_missing_entry() -> None:
    checker = Checker()
    log = MemoryRaftLog()
    checker.apply(1, [], log.append_as_leader([b"a"], 1))
    node = RaftNode(
        2, [2], MemoryQuorumStateStore(), MemoryRaftLog(), random.Random(0), RaftConfig()
    )
    node.poll(0)
    assert node.role is Role.LEADER
    with pytest.raises(Violation, match="leader completeness"):
        checker.check_leader_completeness(node)


class CountsPriorEpochs(RaftNode):
    """Broken on purpose: commits entries of earlier epochs by counting replicas (the
    Raft paper's Figure 8 mistake) instead of waiting for an entry of its own epoch.

    It also stands without pre-votes: pre-vote makes the Figure 8 history much rarer (no
    seed below 10000 shows it), and the seeds below were found without it."""

    def _transition_to_prospective(self, now_ms: int) -> None:
        self._transition_to_candidate(now_ms)

    def _maybe_update_high_watermark(self, s: LeaderState, now_ms: int) -> None:
        new = s.majority_end_offset()
        if new > self._high_watermark:
            self._high_watermark = new
            self._complete_parked_fetches(s, now_ms, force=True)


def test_checker_catches_commit_by_counting_prior_epochs() -> None:
    """The Figure 8 history is rare (about 1 seed in 4000); these seeds were found by a
    20000-seed search, with the timers below and before the simulation reset connections
    to crashed nodes (the defaults then: longer timers or resets change every history). If
    a change to the node alters the histories, search again:
    ``first_violation(CountsPriorEpochs, seeds=20000)``."""
    timers = RaftConfig(request_timeout_ms=250, fetch_max_wait_ms=100, fetch_timeout_ms=500)
    messages = []
    for seed in (8944, 12171, 12828):
        try:
            run_seed(seed, CountsPriorEpochs, raft=timers, resets=False)
        except Violation as e:
            messages.append(str(e))
    assert messages, "no known seed exposes commit-by-counting any more: search again"
    assert all("leader completeness" in m or "state machine" in m for m in messages), messages
