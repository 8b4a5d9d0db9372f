"""The grading cluster, as the sandboxed test sees it: every fault verb goes to the grader.

A test must be able to kill, pause or isolate a broker at the moment it chooses ("kill
the leader after the 50th acknowledgement"), but the sandboxed process may not signal
the brokers itself (they belong to root; see ``grader.sandbox``). So inside the sandbox
the cluster is a ``RemoteCluster``: it has the ``Cluster`` API, and each fault verb
travels as one JSON line over a socket pair to the grader, whose ``ClusterServer``
performs it on the real ``Cluster`` and answers with the result or the error's message.
Looking needs no privilege (``status()`` asks the brokers' introspection ports and reads
``/proc``), so queries run in the sandbox itself.

The student's code runs in the same process as the test and could use the channel too;
that is no more than the lab's own API allows a student (``lab.kill(2)``), and it never
reaches anything but the grading cluster of that one test.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from io import BufferedRWPair
from pathlib import Path
from typing import Any, Self

from kafkalite.cluster import Cluster, ClusterError

READY = "ready"  # the child's first line on its verdict pipe: it has loaded what it needs
VERBS = ("kill", "stop", "start", "restart", "pause", "resume", "isolate", "heal", "slow")


class ClusterServer(threading.Thread):
    """Serves one sandboxed test's calls on the grader's side, one at a time, in order."""

    def __init__(self, cluster: Cluster, sock: socket.socket) -> None:
        super().__init__(daemon=True)
        self.cluster = cluster
        self._file = sock.makefile("rwb")
        self.calls: list[str] = []

    def run(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            for line in self._file:
                self._file.write(json.dumps(self._answer(line)).encode() + b"\n")
                self._file.flush()

    def _answer(self, line: bytes) -> dict[str, Any]:
        try:
            request = json.loads(line)
            method, args = request["method"], list(request.get("args", []))
        except (ValueError, KeyError, TypeError):
            return {"error": "malformed request"}
        if method not in VERBS:
            return {"error": f"{method} is not a cluster operation"}
        self.calls.append(f"{method}{tuple(args)}")
        try:
            result = getattr(self.cluster, method)(*args)
        except (ClusterError, TypeError, ValueError) as exc:
            return {"error": str(exc)}
        return {"result": result}


class RemoteCluster(Cluster):
    """The ``Cluster`` API inside the sandbox; the spec is read from the grader's cluster
    directory (readable, not writable), every fault verb is done by the grader.

    Made with :meth:`over`, which works for subclasses too: the lab's ``ObservedCluster``
    placed before it in a class's bases records fault windows around the remote verbs."""

    _file: BufferedRWPair
    _lock: threading.Lock

    @classmethod
    def over(cls, root: Path, sock: socket.socket) -> Self:
        cluster = cls(Cluster.attach(root).spec)
        cluster._file = sock.makefile("rwb")
        cluster._lock = threading.Lock()
        return cluster

    def _call(self, method: str, *args: Any) -> Any:
        with self._lock:
            self._file.write(json.dumps({"method": method, "args": list(args)}).encode() + b"\n")
            self._file.flush()
            line = self._file.readline()
        if not line:
            raise ClusterError("the grader closed the cluster channel")
        answer = json.loads(line)
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

    def heal(self, broker_id: int | None = None) -> None:
        self._call("heal", broker_id)

    def slow(self, broker_id: int, delay_ms: int = 500) -> None:
        self._call("slow", broker_id, delay_ms)

    def down(self) -> None:
        raise ClusterError("the grading cluster is the grader's to stop")
