"""Chaos for transactions: an exactly-once consume-transform-produce pipeline under the
nemesis (kill, stop, pause, isolate, slow - the active controller included), judged by
``kafkalite.checker.check_exactly_once``. It runs with KIP-890's verification of
transactional batches (Kafka 4.0's default) and without it (the pre-KIP-890 path,
``transaction.partition.verification.enable=false``). A long run, on demand::

    CHAOS_SECONDS=600 CHAOS_SEED=1234 .venv/bin/pytest tests/chaos -k exactly_once -s
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable

import pytest

from kafkalite.cluster import Cluster
from tests.chaos import exactly_once
from tests.chaos.harness import Workload, keep_evidence
from tests.chaos.test_chaos import LAB_FAST

pytestmark = [pytest.mark.chaos, pytest.mark.slow, pytest.mark.xdist_group("heavy")]


@pytest.mark.parametrize("verification", ["true", "false"], ids=["kip890", "pre-kip890"])
def test_nemesis_pipeline_output_is_its_input_transformed_exactly_once(
    make_cluster3: Callable[..., Cluster], verification: str
) -> None:
    seed = int(os.environ.get("CHAOS_SEED", random.randrange(1 << 30)))
    seconds = float(os.environ.get("CHAOS_SECONDS", "45"))
    print(f"chaos seed={seed} seconds={seconds}")
    cluster = make_cluster3(
        **LAB_FAST, **{"transaction.partition.verification.enable": verification}
    )
    faults = os.environ.get("CHAOS_FAULTS")
    workload = Workload(seconds=seconds, seed=seed)
    if faults:
        workload = Workload(seconds=seconds, seed=seed, faults=tuple(faults.split(",")))
    report, nemesis, history = exactly_once.run(cluster, workload)
    print("\n".join(nemesis.faults))
    print(
        f"transactions committed={history.committed_txns} aborted={history.aborted_txns} "
        f"producers started={history.new_producers}"
    )
    if history.input_duplicates:  # upstream of the pipeline: reported, judged elsewhere
        print(f"input written twice by its idempotent producer: {history.input_duplicates[:5]}")
    print(report.summary())
    if not report.valid:
        notes = [f"seed {seed}", *nemesis.faults, report.summary(examples=20), "commits:"]
        notes += [f"{c.partition[1]} {c.offset}" for c in history.commits]
        kept = keep_evidence(cluster, f"exactly-once-{verification}-{seed}", "\n".join(notes))
        print(f"evidence kept in {kept}")
    assert report.acked > 1000, "the pipeline barely ran"
    assert report.read > 1000, "the readers barely read"
    assert nemesis.faults, "the nemesis never struck"
    assert report.valid, f"seed {seed}: {report.summary()}"
