"""The grading cluster, as the sandboxed run sees it: every fault verb goes to the grader.

A driver must be able to kill, pause or isolate a broker at the moment it chooses ("kill
the leader after the 50th acknowledgement"), but the sandboxed process may not signal
the brokers itself (they belong to root; see ``grader.sandbox``). So inside the sandbox
the cluster is a ``RemoteCluster``: it has the ``Cluster`` API, and each fault verb
travels as one message over a socket pair to the grader, whose ``ClusterServer``
performs it on the real ``Cluster`` and answers with the result or the error's message.
Looking needs no privilege (``status()`` asks the brokers' introspection ports and reads
``/proc``), so queries run in the sandbox itself. Its brokers' Kafka addresses are the
grader's proxy's (``grader.kafka_proxy``): a client made from it is watched.

The socket pair is a SOCK_SEQPACKET one, and each request carries an id its answer
repeats: every run of a submission is a fork sharing the one channel, and a run killed
in the middle of a request must not leave an answer for the next run to read. The
student's code could use the channel too; that is no more than the lab's own API allows
a student (``lab.kill(2)``), and it never reaches anything but the grading cluster.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import socket
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self

from kafkalite.cluster import Cluster, ClusterError
from kafkalite.lab.faults import ObservedCluster

VERBS = (
    "kill", "stop", "start", "restart", "pause", "resume", "isolate", "partial_partition",
    "heal", "slow",
)  # fmt: skip
MAX_MESSAGE = 64 << 10


def socket_pair() -> tuple[socket.socket, socket.socket]:
    """A message-preserving pair (the grader's end, the sandbox's end)."""
    return socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)


class ClusterServer(threading.Thread):
    """Serves a sandbox's fault verbs on the grader's side, one at a time, in order, on
    whichever cluster the question being graded uses (``cluster``; None: none)."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__(daemon=True)
        self.cluster: Cluster | None = None
        self._sock = sock
        self.calls: list[str] = []

    def run(self) -> None:
        with contextlib.suppress(OSError):
            while message := self._sock.recv(MAX_MESSAGE):
                self._sock.send(json.dumps(self._answer(message)).encode())

    def _answer(self, message: bytes) -> dict[str, Any]:
        try:
            request = json.loads(message)
            ident, method, args = request["id"], request["method"], list(request["args"])
        except (ValueError, KeyError, TypeError):
            return {"error": "malformed request"}
        if method not in VERBS:
            return {"id": ident, "error": f"{method} is not a cluster operation"}
        if self.cluster is None:
            return {"id": ident, "error": "this question is graded without a cluster"}
        self.calls.append(f"{method}{tuple(args)}")
        try:
            result = getattr(self.cluster, method)(*args)
        except (ClusterError, TypeError, ValueError) as exc:
            return {"id": ident, "error": str(exc)}
        return {"id": ident, "result": result}


class RemoteCluster(Cluster):
    """The ``Cluster`` API inside the sandbox; the spec is read from the grader's cluster
    directory (readable, not writable), every fault verb is done by the grader.

    Made with :meth:`over`, which works for subclasses too: the lab's ``ObservedCluster``
    placed before it in a class's bases records fault windows around the remote verbs."""

    _sock: socket.socket
    _lock: threading.Lock
    _ids: itertools.count[int]

    @classmethod
    def over(cls, root: Path, fd: int, kafka_ports: Mapping[int, int]) -> Self:
        """The cluster in ``root``, its verbs over the channel ``fd``, its clients sent to
        ``kafka_ports`` (broker id -> the grader's proxy port for it)."""
        spec = Cluster.attach(root).spec
        for broker in spec.brokers:
            broker.port = kafka_ports.get(broker.broker_id, broker.port)
        cluster = cls(spec)
        cluster._sock = socket.socket(fileno=os.dup(fd))
        cluster._lock = threading.Lock()
        cluster._ids = itertools.count(1)
        return cluster

    def _call(self, method: str, *args: Any) -> Any:
        with self._lock:
            ident = f"{os.getpid()}-{next(self._ids)}"
            self._sock.send(json.dumps({"id": ident, "method": method, "args": args}).encode())
            while True:
                message = self._sock.recv(MAX_MESSAGE)
                if not message:
                    raise ClusterError("the grader closed the cluster channel")
                answer = json.loads(message)
                if answer.get("id") == ident:
                    break
        if "error" in answer:
            raise ClusterError(answer["error"])
        return answer["result"]

    def kill(self, broker_id: int) -> None:
        self._call("kill", broker_id)

    def stop(self, broker_id: int) -> None:
        self._call("stop", broker_id)

    def start(self, broker_id: int, wait: bool = True) -> None:
        self._call("start", broker_id, wait)

    def restart(self, broker_id: int, wait: bool = True) -> None:
        self._call("restart", broker_id, wait)

    def pause(self, broker_id: int) -> None:
        self._call("pause", broker_id)

    def resume(self, broker_id: int) -> None:
        self._call("resume", broker_id)

    def isolate(self, broker_id: int) -> None:
        self._call("isolate", broker_id)

    def partial_partition(self, broker_id: int) -> None:
        self._call("partial_partition", broker_id)

    def heal(self, broker_id: int | None = None) -> None:
        self._call("heal", broker_id)

    def slow(self, broker_id: int, delay_ms: int = 500) -> None:
        self._call("slow", broker_id, delay_ms)

    def down(self) -> None:
        raise ClusterError("the grading cluster is the grader's to stop")


class GradingCluster(ObservedCluster, RemoteCluster):
    """What ``lab.cluster`` is in a sandboxed run: the lab's cluster (fault windows for
    ``lab.timeline``) whose verbs the grader carries out."""
