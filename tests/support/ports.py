"""Free loopback ports for brokers (Kafka port P and introspection port P+100)."""

from __future__ import annotations

import random
import socket


def _free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_base_port(brokers: int = 1, rng: random.Random | None = None) -> int:
    """A base port such that base..base+brokers-1 and the same +100 are all free."""
    rng = rng or random.Random()
    for _ in range(200):
        base = rng.randrange(20000, 60000)
        ports = [base + i for i in range(brokers)] + [base + 100 + i for i in range(brokers)]
        if all(_free(p) for p in ports):
            return base
    raise RuntimeError("no free port range found")
