"""Shared fixtures: real Kafka-Lite brokers, started as OS processes on loopback.

``cluster`` is one broker shared by the tests of a worker (tests use their own topics);
``fresh_cluster`` is a private one for tests that kill, restart or reconfigure brokers.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkalite.cluster import Cluster
from tests.support.ports import free_base_port

LAB_CONFIGS = {"group.min.session.timeout.ms": "500"}


def _start(root: Path, brokers: int = 1, configs: dict[str, str] | None = None) -> Cluster:
    return Cluster.up(
        root,
        brokers=brokers,
        base_port=free_base_port(brokers),
        configs={**LAB_CONFIGS, **(configs or {})},
    )


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    root = tmp_path_factory.mktemp("shared-cluster")
    c = _start(root)
    try:
        yield c
    finally:
        c.down()  # the data stays under pytest's basetemp, to read broker.log after a failure


@pytest.fixture
def fresh_cluster(tmp_path: Path) -> Iterator[Cluster]:
    c = _start(tmp_path / "cluster")
    try:
        yield c
    finally:
        c.down()


@pytest.fixture
def topic() -> str:
    """A topic name no other test uses (auto-created on first use or created by the test)."""
    return f"t-{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="session")
def bootstrap(cluster: Cluster) -> str:
    return cluster.bootstrap_servers
