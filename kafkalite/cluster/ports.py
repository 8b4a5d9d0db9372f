"""Free loopback ports for a cluster: each broker's Kafka port P, introspection P+100 and
controller listener P+200, plus P+300.. for the fault layer's link proxies. Tests, the
grader and anyone starting several clusters on one machine draw base ports from here.

A port found free may be taken by another process before the cluster binds it (or while a
killed broker waits to be started again on its ports). Processes that start clusters side
by side (the test suite's lanes, several graders on one course server) therefore each draw
from their own range, given as ``KAFKALITE_PORT_RANGE=low-high``."""

from __future__ import annotations

import os
import random
import socket

# Below Linux's ephemeral range (32768-60999), so a client's own source port never takes a
# broker's port between this check and the broker's start.
LOW, HIGH = 10000, 32000


def bindable(host: str, port: int) -> bool:
    """Whether a server could bind ``host:port`` now. The probe asks what the brokers' and
    link proxies' own binds ask (``SO_REUSEADDR``, asyncio's default for servers): a port
    whose last connection is still in TIME_WAIT is free for them, and must be free here
    too, or a busy test run that has just closed many connections runs out of ranges."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def cluster_ports(base: int, brokers: int) -> list[int]:
    listeners = [base + offset + i for offset in (0, 100, 200) for i in range(brokers)]
    links = [base + 300 + k for k in range(2 * brokers * max(brokers - 1, 0))]
    return listeners + links


RANGE_VARIABLE = "KAFKALITE_PORT_RANGE"
SPAN = 400
"""Ports from a cluster's base port to the last one it may use (``cluster_ports``)."""


def port_range() -> tuple[int, int]:
    """``[low, high)`` from ``KAFKALITE_PORT_RANGE`` (``low-high``), else the default."""
    given = os.environ.get(RANGE_VARIABLE)
    if not given:
        return LOW, HIGH
    low_text, _, high_text = given.partition("-")
    try:
        low, high = int(low_text), int(high_text)
    except ValueError:
        low = high = 0
    if not 1024 <= low < high - SPAN <= 65535 - SPAN:
        raise ValueError(f"{RANGE_VARIABLE}={given!r}: expected low-high, e.g. 10000-17000")
    return low, high


def range_share(index: int, count: int, low: int, high: int) -> tuple[int, int]:
    """The ``index``-th of ``count`` equal, disjoint slices of ``[low, high)``."""
    width = (high - low) // max(count, 1)
    return low + index * width, low + (index + 1) * width


def free_base_port(
    brokers: int = 1,
    low: int | None = None,
    high: int | None = None,
    rng: random.Random | None = None,
) -> int:
    """A base port in ``[low, high)`` (``port_range()`` by default) such that every port a
    cluster of ``brokers`` uses is free (at the moment of the check: start the cluster
    right away)."""
    if low is None or high is None:
        low, high = port_range()
    rng = rng or random.Random()
    for _ in range(200):
        base = rng.randrange(low, high - SPAN)
        if all(bindable("127.0.0.1", p) for p in cluster_ports(base, brokers)):
            return base
    raise RuntimeError(f"no free port range for {brokers} broker(s) in {low}-{high}")
