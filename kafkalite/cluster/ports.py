"""Free loopback ports for a cluster: each broker's Kafka port P, introspection P+100 and
controller listener P+200, plus P+300.. for the fault layer's link proxies. Tests, the
grader and anyone starting several clusters on one machine draw base ports from here."""

from __future__ import annotations

import random
import socket

# Below Linux's ephemeral range (32768-60999), so a client's own source port never takes a
# broker's port between this check and the broker's start.
LOW, HIGH = 10000, 32000


def _free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def cluster_ports(base: int, brokers: int) -> list[int]:
    listeners = [base + offset + i for offset in (0, 100, 200) for i in range(brokers)]
    links = [base + 300 + k for k in range(2 * brokers * max(brokers - 1, 0))]
    return listeners + links


def free_base_port(
    brokers: int = 1, low: int = LOW, high: int = HIGH, rng: random.Random | None = None
) -> int:
    """A base port in ``[low, high)`` such that every port a cluster of ``brokers`` uses is
    free (at the moment of the check: start the cluster right away)."""
    rng = rng or random.Random()
    for _ in range(200):
        base = rng.randrange(low, high - 400)
        if all(_free(p) for p in cluster_ports(base, brokers)):
            return base
    raise RuntimeError(f"no free port range for {brokers} broker(s) in {low}-{high}")
