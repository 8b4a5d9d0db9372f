"""The Docker backend: the brokers are the course stack's containers (``docker-compose.yml``).

Every fault verb is a Docker operation through the Docker SDK, with the meaning it has in
a local cluster: ``kill`` is ``docker kill`` (SIGKILL: no shutdown), ``stop`` is ``docker
stop`` (SIGTERM through the container's init: the broker's controlled shutdown, then
SIGKILL after the timeout), ``pause`` is ``docker pause`` (the cgroup freezer: a hung broker
that keeps its connections). ``isolate`` and ``slow`` change the fault state of the
``links`` container, whose proxies carry every byte between brokers (``compose.py``), so an
isolated broker still serves its own clients, as locally.

Containers are found by their labels (``org.kafkalite.role``, ``org.kafkalite.broker-id``)
within one compose project, never by name, so two stacks on one engine never mix. A
broker's configuration is its container's command, fixed by compose: ``start`` starts the
container as it is.

Without the Docker socket (the lab container's default: the socket is root on the host,
so mounting it is the course's explicit choice), the backend still reports what it can
see over the network — a broker whose introspection endpoint answers is running, any other
is dead — and every fault verb is a one-line error saying how to enable them.
"""

from __future__ import annotations

import io
import json
import os
import socket
import tarfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docker
import docker.errors
from docker.models.containers import Container

from kafkalite.cluster.backend import BrokerState
from kafkalite.cluster.compose import LINKS_DIR, spec_from_environment
from kafkalite.cluster.faults import (
    APPLIED_FILE,
    APPLY_TIMEOUT_S,
    FAULTS_FILE,
    FaultState,
    applied_generation,
    await_applied,
    fault_file_text,
    generation_of,
)
from kafkalite.cluster.introspection_http import fetch_json
from kafkalite.cluster.spec import BrokerSpec, ClusterError, ClusterSpec

ROLE_LABEL = "org.kafkalite.role"
BROKER_ID_LABEL = "org.kafkalite.broker-id"
PROJECT_LABEL = "com.docker.compose.project"
NO_SOCKET = (
    "fault verbs in the course stack need the Docker socket in the lab container, which is "
    "off by default (it gives root on the host); the course enables it with "
    "`docker compose -f docker-compose.yml -f docker/docker-socket.yml up` "
    '(README: "For a course")'
)


class DockerBackend:
    """Brokers as containers of one compose project, driven through the Docker SDK."""

    # a container's start comes on top of the broker's own: the stack's healthcheck
    # allows the same (docker-compose.yml, start_period)
    ready_timeout_s = 60.0

    def __init__(self, client: docker.DockerClient | None, project: str | None) -> None:
        self.client = client
        self.project = project
        self._ids: dict[str, str] = {}

    @classmethod
    def from_environment(cls) -> DockerBackend:
        """Reach the engine the usual way (``DOCKER_HOST``, else the default socket); the
        project is ``KAFKALITE_COMPOSE_PROJECT`` or, inside a container of the stack, the
        one this container belongs to. No reachable engine: the socket-less backend."""
        project = os.environ.get("KAFKALITE_COMPOSE_PROJECT") or None
        try:
            client = docker.from_env(version="auto", timeout=30)
            client.ping()
        except docker.errors.DockerException:
            return cls(None, project)
        if project is None:
            project = _own_project(client)
        return cls(client, project)

    # ---- finding containers ---------------------------------------------------------

    def _docker(self) -> docker.DockerClient:
        if self.client is None:
            raise ClusterError(NO_SOCKET)
        return self.client

    def _find(self, **labels: str) -> Container:
        """The one container of this project with these labels. Its id is remembered (a
        container keeps it until compose recreates it), so most calls are one inspect."""
        key = ",".join(f"{name}={value}" for name, value in sorted(labels.items()))
        client = self._docker()
        known = self._ids.get(key)
        if known is not None:
            try:
                return client.containers.get(known)
            except docker.errors.NotFound:
                del self._ids[key]
        filters = [f"{name}={value}" for name, value in labels.items()]
        if self.project is not None:
            filters.append(f"{PROJECT_LABEL}={self.project}")
        found = client.containers.list(all=True, filters={"label": filters})
        if len(found) != 1:
            where = f"compose project {self.project!r}" if self.project else "this engine"
            raise ClusterError(
                f"expected one container labelled {key} in {where}, found {len(found)}"
            )
        container = found[0]
        if container.id is not None:
            self._ids[key] = container.id
        return container

    def container(self, broker: BrokerSpec) -> Container:
        return self._find(**{ROLE_LABEL: "broker", BROKER_ID_LABEL: str(broker.broker_id)})

    def _links(self) -> Container:
        return self._find(**{ROLE_LABEL: "links"})

    # ---- brokers --------------------------------------------------------------------

    def start(self, broker: BrokerSpec, configs: dict[str, str]) -> None:
        """Start the container with the command compose gave it (``configs`` are the same
        settings, computed by ``compose.py``, so nothing is lost by ignoring them)."""
        self.container(broker).start()

    def start_all(self, brokers: list[tuple[BrokerSpec, dict[str, str]]]) -> None:
        for broker, configs in brokers:
            self.start(broker, configs)

    def kill(self, broker: BrokerSpec) -> None:
        container = self.container(broker)
        if container.status == "paused":
            container.unpause()  # a paused broker must die too, as locally
        if container.status in ("running", "paused"):
            container.kill()
        _wait_not_running(container)

    def stop(self, broker: BrokerSpec, timeout_s: float = 10) -> None:
        container = self.container(broker)
        if container.status == "paused":
            container.unpause()
        container.stop(timeout=int(timeout_s))

    def pause(self, broker: BrokerSpec) -> None:
        container = self.container(broker)
        if container.status == "running":
            container.pause()

    def resume(self, broker: BrokerSpec) -> None:
        container = self.container(broker)
        if container.status == "paused":
            container.unpause()

    def state(self, broker: BrokerSpec) -> BrokerState:
        if self.client is None:
            answers = fetch_json(broker.host, broker.admin_port, "/state") is not None
            return BrokerState.RUNNING if answers else BrokerState.DEAD
        return container_state(self.container(broker).attrs["State"])

    # ---- the network: the links container's fault state ------------------------------

    def start_network(self, spec: ClusterSpec) -> None:
        """Compose starts the ``links`` container with the brokers."""

    def stop_network(self, spec: ClusterSpec) -> None:
        """Compose stops it (``docker compose down``)."""

    def _links_file(self, name: str) -> bytes | None:
        """A file of the links container's ``LINKS_DIR``, read from its file system (no
        exec: a dashboard asks for the fault state every second); None if it is missing."""
        try:
            stream, _ = self._links().get_archive(f"{LINKS_DIR}/{name}")
        except docker.errors.NotFound:
            return None
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            member = tar.extractfile(name)
            if member is None:
                raise ClusterError(f"{LINKS_DIR}/{name} in the links container is no file")
            return member.read()

    def _fault_file(self) -> dict[str, Any]:
        body = self._links_file(FAULTS_FILE)
        if body is None:
            raise ClusterError(f"the links container has no {LINKS_DIR}/{FAULTS_FILE}")
        raw: dict[str, Any] = json.loads(body)
        return raw

    def fault_state(self) -> FaultState:
        return FaultState.from_json(self._fault_file())

    def _save_faults(self, text: str) -> None:
        """Replace ``faults.json``; the proxies re-read it when it changes and keep the last
        good state if they catch it half-written."""
        body = text.encode()
        archive = io.BytesIO()
        with tarfile.open(fileobj=archive, mode="w") as tar:
            info = tarfile.TarInfo(FAULTS_FILE)
            info.size, info.mtime, info.uid, info.gid = len(body), int(time.time()), 1000, 1000
            tar.addfile(info, io.BytesIO(body))
        if not self._links().put_archive(LINKS_DIR, archive.getvalue()):
            raise ClusterError("could not write the fault state into the links container")

    def _applied(self) -> int:
        body = self._links_file(APPLIED_FILE)
        return applied_generation(body.decode() if body is not None else None)

    def _change_faults(self, spec: ClusterSpec, change: Callable[[FaultState], None]) -> None:
        """Write the changed state as the next generation and return once the proxies obey
        it (they re-read ``faults.json`` every 50 ms)."""
        if not spec.links():
            raise ClusterError("network faults need at least two brokers")
        raw = self._fault_file()
        state, generation = FaultState.from_json(raw), generation_of(raw) + 1
        change(state)
        self._save_faults(fault_file_text(state, generation))
        if not await_applied(self._applied, generation, poll_s=0.05):
            raise ClusterError(
                f"the links container did not take the fault within {APPLY_TIMEOUT_S:.0f} s"
                " (docker compose logs links)"
            )

    def isolate(self, spec: ClusterSpec, broker_id: int) -> None:
        self._change_faults(spec, lambda s: s.isolated.add(broker_id))

    def partial_partition(self, spec: ClusterSpec, broker_id: int) -> None:
        self._change_faults(spec, lambda s: s.partially_partitioned.add(broker_id))

    def heal(self, spec: ClusterSpec, broker_id: int | None) -> None:
        if spec.links():
            self._change_faults(spec, lambda s: s.heal(broker_id))

    def slow(self, spec: ClusterSpec, broker_id: int, delay_ms: int) -> None:
        self._change_faults(spec, lambda s: s.slow_ms.__setitem__(broker_id, delay_ms))

    def isolated(self, spec: ClusterSpec) -> set[int]:
        if self.client is None or not spec.links():
            return set()
        return self.fault_state().isolated

    def slowed(self, spec: ClusterSpec) -> dict[int, int]:
        if self.client is None or not spec.links():
            return {}
        return self.fault_state().slow_ms

    def partially_partitioned(self, spec: ClusterSpec) -> set[int]:
        if self.client is None or not spec.links():
            return set()
        return self.fault_state().partially_partitioned


def container_state(state: dict[str, Any]) -> BrokerState:
    """A broker's state from its container's ``State``: a container that exited 0 was
    stopped (the broker's controlled shutdown ran to its end); any other end is a death."""
    status = state.get("Status")
    if status == "running":
        return BrokerState.RUNNING
    if status == "paused":
        return BrokerState.PAUSED
    if status in ("exited", "created") and state.get("ExitCode") == 0:
        return BrokerState.STOPPED
    return BrokerState.DEAD


def _own_project(client: docker.DockerClient) -> str | None:
    """The compose project of the container this code runs in (its host name is its
    container id), or None outside a container of a compose stack."""
    try:
        labels = client.containers.get(socket.gethostname()).labels
    except docker.errors.DockerException:
        return None
    project = labels.get(PROJECT_LABEL)
    return str(project) if project else None


def _wait_not_running(container: Container, timeout_s: float = 10) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        container.reload()
        if container.status not in ("running", "paused"):
            return
        time.sleep(0.05)
    raise ClusterError(f"container {container.name} still runs {timeout_s:.0f} s after kill")


def stack_spec() -> ClusterSpec:
    """The course stack as compose configures it (``compose.py``), kept under the user's
    home: only fault verbs write it, and never into the labs folder the host shares."""
    root = Path.home() / ".kafkalite-stack"
    root.mkdir(parents=True, exist_ok=True)
    return spec_from_environment(root)
