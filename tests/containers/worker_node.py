"""A second Docker engine on this machine, joined to the test swarm as a worker: what a class
past one server adds, a node the swarm may place a student on.

The engine is Debian's dockerd again (``scripts/install-docker-engine.sh``), with a data root,
run folder and containerd namespace of its own, started in a network namespace of its own
linked to the machine by a veth pair: to the swarm it is another machine at
``NODE_ADDRESS``. Its data root outlives the test (images loaded once stay, as the first
engine's do); its swarm membership, network namespace and process do not.

Two things make it work on one machine:

- ``nsenter --net``, not ``ip netns exec``: the latter also mounts a fresh ``/sys`` for the
  namespace, which hides the cgroup hierarchy ("failed to start daemon: Devices cgroup
  isn't mounted");
- the machine sends to the node from the swarm manager's advertised address (the route's
  ``src``): the overlay's VXLAN peers are static entries naming that address, and Linux
  drops VXLAN packets whose outer source differs from a static entry's ("Don't migrate
  static entries, drop packets" in the kernel's vxlan_snoop), which the veth's own
  address would be. Without it the swarm forms, but nothing crosses an overlay network.

Images come over by ``docker save | docker load``, as docs/course.md tells a course without
a registry (the node's own pulls fail here: no registry is reachable).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import docker
import docker.errors

from tests.containers.engine import Engine
from tests.support.waiting import wait_for

NETNS = "kafkalite-node2"
HOST_LINK, NODE_LINK = "klnode2-host", "klnode2"
NODE_ADDRESS = "10.213.77.2"
LINK_NET = "10.213.77.0/30"
RUN = Path(os.environ.get("KAFKALITE_DOCKER_NODE2_RUN", "/run/kafkalite-docker-node2"))
ROOT = Path(os.environ.get("KAFKALITE_DOCKER_NODE2_ROOT", "/var/lib/kafkalite-docker-node2"))
HOST = f"unix://{RUN}/docker.sock"


class NoWorkerNode(Exception):
    """Why no second engine can join here (the test skips with it)."""


def _ip(*args: str, check: bool = True) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise NoWorkerNode(f"ip {' '.join(args)}: {done.stderr.strip()}")


def _answers() -> docker.DockerClient | None:
    try:
        client = docker.DockerClient(base_url=HOST, version="auto", timeout=120)
        client.ping()
    except docker.errors.DockerException:
        return None
    return client


def _stop_engine() -> None:
    """The node's dockerd, if one runs (a test that died may have left it), then its links."""
    pid_file = RUN / "dockerd.pid"
    with contextlib.suppress(FileNotFoundError, ValueError, ProcessLookupError):
        pid = int(pid_file.read_text())
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            os.kill(pid, 0)  # ProcessLookupError once it is gone
            time.sleep(0.2)
        os.kill(pid, signal.SIGKILL)
    _ip("link", "del", HOST_LINK, check=False)
    _ip("netns", "del", NETNS, check=False)


def _start_engine(manager_address: str) -> docker.DockerClient:
    missing = [c for c in ("dockerd", "nsenter", "ip") if shutil.which(c) is None]
    if missing or os.geteuid() != 0:
        raise NoWorkerNode(f"needs root and {', '.join(missing) or 'dockerd, nsenter, ip'}")
    _stop_engine()
    _ip("netns", "add", NETNS)
    _ip("link", "add", HOST_LINK, "type", "veth", "peer", "name", NODE_LINK)
    _ip("link", "set", NODE_LINK, "netns", NETNS)
    _ip("addr", "add", "10.213.77.1/30", "dev", HOST_LINK)
    _ip("link", "set", HOST_LINK, "up")
    _ip("route", "replace", LINK_NET, "dev", HOST_LINK, "src", manager_address)
    for args in (
        ["addr", "add", f"{NODE_ADDRESS}/30", "dev", NODE_LINK],
        ["link", "set", NODE_LINK, "up"],
        ["link", "set", "lo", "up"],
        # the manager only, no default route: the node's pulls (its images carry no
        # registry digest) then fail at once instead of after a 20 s DNS timeout each
        ["route", "add", f"{manager_address}/32", "via", "10.213.77.1"],
    ):
        _ip("-n", NETNS, *args)
    RUN.mkdir(parents=True, exist_ok=True)
    ROOT.mkdir(parents=True, exist_ok=True)
    with (RUN / "dockerd.log").open("w") as log:
        dockerd = subprocess.Popen(
            [
                *("nsenter", f"--net=/var/run/netns/{NETNS}", "dockerd"),
                *("--data-root", str(ROOT), "--exec-root", str(RUN / "exec")),
                *("--pidfile", str(RUN / "dockerd.pid"), "-H", HOST),
                *("--containerd-namespace", "kafkalite-node2"),
                *("--containerd-plugins-namespace", "kafkalite-node2-plugins"),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )

    def answering() -> docker.DockerClient | None:
        if dockerd.poll() is not None:
            tail = (RUN / "dockerd.log").read_text().strip().splitlines()[-1:]
            raise NoWorkerNode(f"the second dockerd exited ({dockerd.returncode}): {tail}")
        return _answers()

    try:
        return wait_for(answering, 60, "the second engine's API")
    except (AssertionError, NoWorkerNode):
        _stop_engine()
        raise


def _copy_image(manager: Engine, node: docker.DockerClient, image: str) -> None:
    """``docker save | docker load`` unless the node has this very image already."""
    wanted = manager.client.images.get(image).id
    with contextlib.suppress(docker.errors.ImageNotFound):
        if node.images.get(image).id == wanted:
            return
    env = {**os.environ, "DOCKER_HOST": manager.host}
    with subprocess.Popen(["docker", "save", image], stdout=subprocess.PIPE, env=env) as save:
        loaded = subprocess.run(
            ["docker", "load", "--quiet"],
            stdin=save.stdout,
            env={**os.environ, "DOCKER_HOST": HOST},
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    assert save.returncode == 0 and loaded.returncode == 0, loaded.stderr
    node.images.prune(filters={"dangling": True})  # the tag's previous image, replaced


@dataclass
class WorkerNode:
    """The second engine, a worker of ``manager``'s swarm."""

    manager: Engine
    client: docker.DockerClient
    node_id: str

    def leave(self) -> None:
        """Out of the swarm and stopped; the manager forgets it."""
        with contextlib.suppress(docker.errors.APIError):
            self.client.swarm.leave(force=True)
        with contextlib.suppress(docker.errors.APIError):
            self.manager.client.nodes.get(self.node_id).remove(force=True)
        for network in self.client.networks.list(names=["docker_gwbridge"]):
            with contextlib.suppress(docker.errors.APIError):
                network.remove()
        self.client.close()
        _stop_engine()


def join_worker_node(manager: Engine, manager_address: str, images: list[str]) -> WorkerNode:
    """A second engine started, given ``images`` and joined to the manager's swarm as a
    worker, ready for tasks. Raises NoWorkerNode when this machine cannot run one. (One
    at a time: the caller holds the swarm's machine-wide lock, ``one_node_swarm``.)"""
    client = _start_engine(manager_address)
    try:
        for image in images:
            _copy_image(manager, client, image)
        token = manager.client.swarm.attrs["JoinTokens"]["Worker"]
        client.swarm.join(
            remote_addrs=[f"{manager_address}:2377"],
            join_token=token,
            listen_addr=f"{NODE_ADDRESS}:2377",
            advertise_addr=NODE_ADDRESS,
        )
        node_id = str(client.info()["Swarm"]["NodeID"])
        wait_for(
            lambda: manager.client.nodes.get(node_id).attrs["Status"]["State"] == "ready",
            60,
            "the worker ready in the manager's view",
        )
    except BaseException:
        WorkerNode(manager, client, "").leave()
        raise
    return WorkerNode(manager, client, node_id)
