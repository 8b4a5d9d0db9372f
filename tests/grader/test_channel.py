"""The sandbox's cluster channel: each fault verb a driver may call is carried out by the
grader, with its arguments, and none falls through to a local attempt (which the sandbox's
user is not allowed to make: the brokers are the grader's)."""

from __future__ import annotations

import itertools
import threading
from typing import Any

from grader import channel


class _Verbs:
    """The grader's side of the channel, standing for its cluster: what arrived."""

    def __init__(self) -> None:
        self.done: list[tuple[str, tuple[Any, ...]]] = []

    def __getattr__(self, verb: str) -> Any:
        return lambda *args: self.done.append((verb, args))


def test_every_fault_verb_travels_to_the_grader_with_its_arguments() -> None:
    grader_end, sandbox_end = channel.socket_pair()
    server = channel.ClusterServer(grader_end)
    server.cluster = verbs = _Verbs()
    server.start()
    remote = channel.RemoteCluster.__new__(channel.RemoteCluster)  # no cluster directory
    remote._sock, remote._lock, remote._ids = sandbox_end, threading.Lock(), itertools.count(1)
    remote.partial_partition(2)
    remote.kill(3)
    remote.heal()
    sandbox_end.close()
    assert verbs.done == [("partial_partition", (2,)), ("kill", (3,)), ("heal", (None,))]
    local = [v for v in channel.VERBS if v not in vars(channel.RemoteCluster)]
    assert not local, f"verbs the sandbox would try itself: {local}"
