"""A broker that loses a long-lived task stops, instead of lingering as a zombie.

The follower's partition directory is removed under it (a failed disk, as a student's
``rm -rf`` would do): its replica fetcher fails on the next segment roll. Before, the
fetcher task died in silence and the broker went on serving without replicating; now the
broker halts, the cluster shows it dead, its log names the task, and the others carry on.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from kafkalite.cluster import Cluster
from kafkalite.cluster.backend import BrokerState
from tests.integration.test_log_start import offsets_from_earliest, produce
from tests.integration.test_replication import create_topic, fully_replicated
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.interop, pytest.mark.slow]


def test_a_broker_whose_replica_fetcher_dies_halts_and_the_cluster_carries_on(
    make_cluster3: Callable[..., Cluster],
) -> None:
    cluster = make_cluster3()
    topic = create_topic(cluster, **{"min.insync.replicas": "1", "segment.bytes": "1000"})
    produce(cluster, topic, 5)
    p = wait_for(lambda: fully_replicated(cluster, topic), what="replicated")
    victim = next(r["broker"] for r in p["replicas"] if r["broker"] != p["leader"])
    shutil.rmtree(Path(cluster.spec.broker(victim).data_dir) / "logs" / f"{topic}-0")
    produce(cluster, topic, 45, size=100)  # the victim's next segment roll fails
    wait_for(
        lambda: cluster.broker_states()[victim] == BrokerState.DEAD,
        what=f"broker {victim} to halt",
    )
    log = (Path(cluster.spec.broker(victim).data_dir) / "broker.log").read_text()
    assert "task 'replica-fetcher-" in log and "died" in log
    assert offsets_from_earliest(cluster, topic, 50) == list(range(50))
