"""Chaos: faults under load, judged by the history checker (``kafkalite.checker``).

The bounded run is part of the suite; a long one runs on demand::

    CHAOS_SECONDS=600 CHAOS_SEED=1234 .venv/bin/pytest tests/chaos -k nemesis -s
    CHAOS_FAULTS=isolate,kill ...   # only these faults

The seed picks the faults and their targets; it is printed, so a failing run can be
replayed with the same schedule (the timing of a real cluster still varies).
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable

import pytest

from kafkalite.cluster import Cluster
from tests.chaos.harness import Workload, keep_evidence, run

# One worker runs the heavy tests one after another (see tests/integration/test_groups.py).
pytestmark = [pytest.mark.chaos, pytest.mark.slow, pytest.mark.xdist_group("heavy")]

LAB_FAST = {"broker.session.timeout.ms": "800", "replica.lag.time.max.ms": "1000"}


def test_nemesis_loses_nothing_with_acks_all_and_idempotence(
    make_cluster3: Callable[..., Cluster],
) -> None:
    seed = int(os.environ.get("CHAOS_SEED", random.randrange(1 << 30)))
    seconds = float(os.environ.get("CHAOS_SECONDS", "45"))
    print(f"chaos seed={seed} seconds={seconds}")
    cluster = make_cluster3(**LAB_FAST)
    faults = os.environ.get("CHAOS_FAULTS")  # e.g. CHAOS_FAULTS=isolate,kill
    workload = Workload(seconds=seconds, seed=seed)
    if faults:
        workload = Workload(seconds=seconds, seed=seed, faults=tuple(faults.split(",")))
    report, history = run(cluster, workload)
    print("\n".join(history.faults))
    print(report.summary())
    if not report.valid:
        notes = "\n".join([f"seed {seed}", *history.faults, report.summary(examples=20)])
        print(f"evidence kept in {keep_evidence(cluster, f'nemesis-{seed}', notes)}")
    assert report.acked > 1000, "the workload barely ran"
    assert report.read > 1000
    assert history.faults, "the nemesis never struck"
    assert report.valid, f"seed {seed}: {report.summary()}"


def test_acks_1_with_an_isolated_leader_reports_lost_writes(
    make_cluster3: Callable[..., Cluster],
) -> None:
    """The split-brain lesson: an isolated leader keeps acknowledging acks=1 writes that
    the rest of the cluster never sees; when it heals, it truncates them."""
    cluster = make_cluster3(**LAB_FAST)
    report, history = run(
        cluster,
        Workload(
            seconds=12,
            seed=7,
            acks="1",
            idempotent=False,
            partitions=1,
            faults=("isolate-leader",),
            fault_every_s=4.0,
        ),
    )
    print("\n".join(history.faults))
    print(report.summary())
    assert report.counts["lost"] > 0, report.summary()
