"""Shared fixtures: real Kafka-Lite brokers, started as OS processes on loopback.

``cluster`` is one broker shared by the tests of a worker (tests use their own topics);
``fresh_cluster`` is a private one for tests that kill, restart or reconfigure brokers.
``cluster3`` is a shared three-broker cluster (a Raft quorum of three, replication) for
tests that leave it as they found it; ``make_cluster3`` starts private ones for faults.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kafkalite.cluster import Cluster
from tests.support.ports import free_base_port

LAB_CONFIGS = {"group.min.session.timeout.ms": "500"}


def pytest_configure(config: pytest.Config) -> None:
    """A test process sent ``SIGUSR1`` writes every thread's stack to its standard error,
    as it was when pytest started (not to a test's captured output, which is only shown
    when the test ends). The suite's runner sends it before it stops a group that ran past
    its time bound, so that a hang says where it was: a test in a client call that no
    signal interrupts, or a process that cannot exit for a thread it must join."""
    faulthandler.register(signal.SIGUSR1, file=os.dup(2), all_threads=True)


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


@pytest.fixture(scope="session")
def cluster3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    c = _start(tmp_path_factory.mktemp("shared-cluster3"), brokers=3)
    try:
        yield c
    finally:
        c.down()


@pytest.fixture
def make_cluster3(tmp_path: Path) -> Iterator[Callable[..., Cluster]]:
    """Start a private three-broker cluster with extra settings; stopped after the test."""
    started: list[Cluster] = []

    def make(**configs: str) -> Cluster:
        c = _start(tmp_path / f"cluster-{len(started)}", brokers=3, configs=configs)
        started.append(c)
        return c

    try:
        yield make
    finally:
        for c in started:
            c.down()
