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


WATCHDOG_GRACE_S = 120
"""How long past its own time bound (pytest-timeout's) a test may go on before the watchdog
ends its process: pytest-timeout raises from a signal handler, which runs only when the
test's thread is back in Python, and a client call that ignores signals (librdkafka's
``init_transactions()`` with no timeout, on a cluster that is gone) never comes back."""

STACKS_FD = pytest.StashKey[int]()
"""The standard error pytest started with (not a test's captured output, shown only when
the test ends): where a hung process writes its stacks."""


def pytest_configure(config: pytest.Config) -> None:
    """A test process sent ``SIGUSR1`` writes every thread's stack. The suite's runner
    sends it before it stops a group that ran past its time bound, so that a hang outside
    any test (a process that cannot exit for a thread it must join) says where it was."""
    config.stash[STACKS_FD] = os.dup(2)
    faulthandler.register(signal.SIGUSR1, file=config.stash[STACKS_FD], all_threads=True)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    """The watchdog: a test still running ``WATCHDOG_GRACE_S`` past its time bound has
    its process write every thread's stack and exit (xdist then names the test and
    carries on with a new worker), where it would hold its group until the runner's hour."""
    after_s = _time_bound_s(item) + WATCHDOG_GRACE_S
    faulthandler.dump_traceback_later(after_s, file=item.config.stash[STACKS_FD], exit=True)
    try:
        return (yield)
    finally:
        faulthandler.cancel_dump_traceback_later()


def _time_bound_s(item: pytest.Item) -> float:
    """The test's pytest-timeout bound: its ``timeout`` mark's, else the configured one."""
    marker = item.get_closest_marker("timeout")
    if marker is not None and (marker.args or "timeout" in marker.kwargs):
        return float(marker.kwargs.get("timeout", marker.args[0] if marker.args else 0))
    return float(item.config.getini("timeout"))


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
