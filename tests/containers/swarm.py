"""A Docker swarm for the container tests: the engine the tests use, made a one-node swarm
(``docker swarm init``) for as long as a test needs it, and the class's hub deployed on it
as a stack (``docker/jupyterhub/swarm-stack.yml``).

Swarm mode is the engine's own state, which every session using the engine would see: one
session at a time holds it (a machine-wide lock), and an engine that was not in a swarm
leaves it again afterwards, removing what the swarm made (its ingress network).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import subprocess
from collections.abc import Iterator

import docker.errors
from docker.models.containers import Container

from tests.containers.engine import REPO, Engine, machine_lock
from tests.containers.hub import HubClient
from tests.containers.stack import checked, extra_ca_certs
from tests.support.waiting import wait_for

STACK_FILE = REPO / "docker" / "jupyterhub" / "swarm-stack.yml"


def advertise_address() -> str:
    """The address other nodes would reach this one at: the source address of the
    machine's default route (swarm refuses to guess when there are several)."""
    done = subprocess.run(
        ["ip", "-o", "route", "get", "192.0.2.250"], capture_output=True, text=True, check=True
    )
    words = done.stdout.split()
    return words[words.index("src") + 1]


@contextlib.contextmanager
def one_node_swarm(engine: Engine) -> Iterator[None]:
    """The engine as a one-node swarm's manager while the block runs."""
    with machine_lock("swarm"):
        state = engine.client.info()["Swarm"]["LocalNodeState"]
        joined_here = state != "active"
        networks = {n.name for n in engine.client.networks.list()}
        if joined_here:
            engine.client.swarm.init(advertise_addr=advertise_address())
        try:
            yield
        finally:
            if joined_here:
                engine.client.swarm.leave(force=True)
                for network in engine.client.networks.list(names=["docker_gwbridge"]):
                    if network.name not in networks:  # the swarm's bridge to the host
                        with contextlib.suppress(docker.errors.APIError):
                            network.remove()


class SwarmHub:
    """The class's hub deployed as a stack, under a name and student prefix of its own."""

    def __init__(self, engine: Engine, tag: str, port: int, env: dict[str, str]) -> None:
        self.engine = engine
        self.name = f"klswarm{secrets.token_hex(3)}"
        self.prefix = f"{self.name}-student"
        self.client = HubClient(
            f"http://127.0.0.1:{port}", secrets.token_hex(24), secrets.token_urlsafe(12)
        )
        self.env = {
            **os.environ,
            "DOCKER_HOST": engine.host,
            "KAFKALITE_TAG": tag,
            "KAFKALITE_EXTRA_CA_CERTS": extra_ca_certs(),
            "DOCKER_SOCKET": engine.socket_path,
            "DOCKER_GID": str(os.stat(engine.socket_path).st_gid),
            "KAFKALITE_HUB_PASSWORD": self.client.password,
            "KAFKALITE_HUB_ADMIN_TOKEN": self.client.admin_token,
            "KAFKALITE_HUB_PORT": str(port),
            "KAFKALITE_HUB_NETWORK": f"{self.name}-net",
            "KAFKALITE_HUB_PREFIX": self.prefix,
            **env,
        }

    def docker(self, *args: str, timeout_s: float = 300) -> str:
        return checked(["docker", *args], self.env, timeout_s)

    def deploy(self) -> None:
        self.docker("stack", "deploy", "--compose-file", str(STACK_FILE), self.name)

    def remove(self) -> None:
        """``docker stack rm``, its services first: the command removes a stack's services
        and its network at once, and the network's removal fails ("in use by task ...",
        a CI run) while a container of the hub or of a student is still on it. So the
        stack's services are removed, every container on the network is awaited, and then
        ``stack rm`` removes the network (it returns before what it removed is gone)."""
        for service in self.stack_services():
            self.docker("service", "rm", service)
        wait_for(lambda: not self.containers_on_network(), 120, "the stack's containers gone")
        self.docker("stack", "rm", self.name)

    def containers_on_network(self) -> list[str]:
        """The stack's and the students' containers, running or not."""
        listed = self.engine.client.api.containers(
            all=True, filters={"label": "com.docker.swarm.service.name"}
        )
        ours = (self.prefix, f"{self.name}_")
        return [
            str(c["Id"])
            for c in listed
            if str(c["Labels"]["com.docker.swarm.service.name"]).startswith(ours)
        ]

    def services(self) -> list[str]:
        found = self.engine.client.services.list(filters={"label": self.student_label()})
        return [str(s.name) for s in found]

    def stack_services(self) -> list[str]:
        found = self.engine.client.services.list(
            filters={"label": f"com.docker.stack.namespace={self.name}"}
        )
        return [str(s.name) for s in found]

    def student_label(self) -> str:
        return f"org.kafkalite.hub={self.prefix}"

    def student_container(self, name: str) -> Container:
        """The running container of the student's service (its one task)."""
        (found,) = self.engine.client.containers.list(
            filters={"label": f"com.docker.swarm.service.name={self.prefix}-{name}"}
        )
        return found

    def hub_container(self) -> Container:
        (found,) = self.engine.client.containers.list(
            filters={"label": f"com.docker.swarm.service.name={self.name}_hub"}
        )
        return found

    def volumes(self) -> list[str]:
        found = self.engine.client.volumes.list(filters={"label": self.student_label()})
        return sorted(str(v.name) for v in found)

    def remove_leftovers(self) -> None:
        """What a failed test may leave: students' services and volumes, the stack."""
        client = self.engine.client
        for service in client.services.list(filters={"label": self.student_label()}):
            with contextlib.suppress(docker.errors.APIError):
                service.remove()
        with contextlib.suppress(AssertionError):
            self.remove()
        for label in (self.student_label(), f"com.docker.stack.namespace={self.name}"):
            for volume in client.volumes.list(filters={"label": label}):
                with contextlib.suppress(docker.errors.APIError):
                    volume.remove(force=True)

    def hub_logs(self) -> str:
        return self.docker("service", "logs", "--timestamps", f"{self.name}_hub")
