"""Cluster ports: each process that starts clusters beside others draws from its own
range (``KAFKALITE_PORT_RANGE``), since a port found free can be taken before it is bound."""

from __future__ import annotations

import itertools
import random
import socket

import pytest

from kafkalite.cluster.ports import (
    HIGH,
    LOW,
    RANGE_VARIABLE,
    bindable,
    cluster_ports,
    port_range,
    range_share,
)
from kafkalite.cluster.ports import free_base_port as free_base_port_in
from tests.support.ports import free_base_port

pytestmark = pytest.mark.unit


def test_the_range_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(RANGE_VARIABLE, raising=False)
    assert port_range() == (LOW, HIGH)
    monkeypatch.setenv(RANGE_VARIABLE, "20000-21000")
    assert port_range() == (20000, 21000)
    for _ in range(20):
        base = free_base_port_in(3, rng=random.Random())
        assert all(20000 <= p < 21000 for p in cluster_ports(base, 3))


@pytest.mark.parametrize("given", ["20000", "a-b", "21000-20000", "80-2000", "20000-20100"])
def test_a_malformed_range_is_one_clear_error(monkeypatch: pytest.MonkeyPatch, given: str) -> None:
    monkeypatch.setenv(RANGE_VARIABLE, given)
    with pytest.raises(ValueError, match=RANGE_VARIABLE):
        port_range()


def test_a_test_worker_draws_from_its_share_of_its_lanes_range(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(RANGE_VARIABLE, "20000-24000")
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "2")
    for _ in range(20):
        assert all(22000 <= p < 24000 for p in cluster_ports(free_base_port(3), 3))


def test_shares_of_a_range_are_disjoint_and_inside_it() -> None:
    shares = [range_share(i, 3, LOW, HIGH) for i in range(3)]
    assert shares[0][0] == LOW and shares[-1][1] <= HIGH
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(shares))
    assert all(high - low > 2000 for low, high in shares)


def test_a_port_whose_last_connection_is_in_time_wait_is_free() -> None:
    """The brokers bind with SO_REUSEADDR, so a port in TIME_WAIT is theirs to take. A probe
    without it counted such ports as taken: a busy run of the suite, with many connections
    just closed, found no free range at all."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port))
        accepted, _ = server.accept()
        accepted.close()  # the server side closes first: its end of the pair waits in TIME_WAIT
        client.close()
    with socket.socket() as plain, pytest.raises(OSError):
        plain.bind(("127.0.0.1", port))  # the old probe's question: "in use"
    assert bindable("127.0.0.1", port)


def test_a_listening_port_is_not_free() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        assert not bindable("127.0.0.1", server.getsockname()[1])
