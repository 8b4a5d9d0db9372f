"""A class larger than one server: the hub as a Docker swarm stack (``docker stack deploy``
of ``docker/jupyterhub/swarm-stack.yml``), each student a swarm service (SwarmSpawner) with
their home on a named volume, on a real one-node swarm made of the engine the tests use.
Two students log in through the hub, each runs lab 04 in their own service's container,
their servers stop cleanly (services gone, homes kept), and so does the stack. Before them,
a second engine of this machine (``worker_node.py``: its own network namespace) joins as a
worker, and a student is placed on it."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.containers.engine import Engine
from tests.containers.hub import CONNECT, Hub
from tests.containers.stack import (
    CONTAINER_TESTS,
    LAB_BUDGET_S,
    processes_of,
    run_lab_04_at_once,
)
from tests.containers.swarm import SwarmHub, advertise_address, one_node_swarm
from tests.containers.worker_node import NoWorkerNode, join_worker_node
from tests.support.ports import free_base_port
from tests.support.waiting import wait_for

pytestmark = CONTAINER_TESTS

STUDENTS = ("ada", "grace")
NOTEBOOK = "04-leader-failover.ipynb"


@pytest.fixture(scope="module")
def swarm_hub(engine: Engine, base_image: str) -> Iterator[SwarmHub]:
    images = Hub(engine, base_image, free_base_port())  # the same images as the hub tests
    images.build_images()
    with one_node_swarm(engine):
        hub = SwarmHub(engine, images.tag, free_base_port(), env={"KAFKALITE_CULL_IDLE_S": "0"})
        try:
            hub.deploy()
            wait_for(hub.client.answers, 240, "the hub's API on the swarm")
            yield hub
        finally:
            hub.remove_leftovers()
            wait_for(lambda: not hub.stack_services(), 120, "the stack's services removed")


PLACED = "hopper"


def node_availability(engine: Engine, node_id: str, availability: str) -> None:
    node = engine.client.nodes.get(node_id)
    node.update({**node.attrs["Spec"], "Availability": availability})


def test_a_second_engine_joins_as_a_worker_and_a_student_is_placed_on_it(
    swarm_hub: SwarmHub,
) -> None:
    """Past one server: a second engine in a network namespace of its own joins the swarm
    as a worker; with the first node paused (it keeps the hub, takes no new task), a
    student's server is placed on the worker, reached through the hub's proxy across the
    overlay network, and its kernel's cluster runs there. The worker leaves afterwards."""
    hub = swarm_hub
    try:
        worker = join_worker_node(
            hub.engine, advertise_address(), [f"kafkalite/lab:{hub.env['KAFKALITE_TAG']}-spark0"]
        )
    except NoWorkerNode as exc:
        pytest.skip(f"no second engine can join here: {exc}")
    manager_id = hub.engine.client.info()["Swarm"]["NodeID"]
    node_availability(hub.engine, manager_id, "pause")
    try:
        browser = hub.client.log_in(PLACED)
        wait_for(lambda: hub.client.lab_answers(browser, PLACED), 300, f"{PLACED}'s JupyterLab")
        (task,) = hub.engine.client.services.get(f"{hub.prefix}-{PLACED}").tasks(
            filters={"desired-state": "running"}
        )
        assert task["NodeID"] == worker.node_id  # on the worker, not beside the hub
        kernel = hub.client.kernel(PLACED, NOTEBOOK)  # through the hub's proxy, over the overlay
        connected = kernel.execute(CONNECT)
        assert connected.error is None, connected.error
        kernel.close()
        (container,) = worker.client.containers.list(
            filters={"label": f"com.docker.swarm.service.name={hub.prefix}-{PLACED}"}
        )
        brokers = [c for _, c in processes_of(container).values() if "-m kafkalite.broker" in c]
        assert len(brokers) == 3  # the student's cluster runs on the worker
        hub.client.stop_server(PLACED)
        wait_for(lambda: PLACED not in str(hub.services()), 120, f"{PLACED}'s service removed")
        wait_for(
            lambda: not worker.client.containers.list(all=True, ignore_removed=True),
            120,
            "the worker emptied",
        )
        for volume in worker.client.volumes.list(filters={"label": hub.student_label()}):
            volume.remove()
    finally:
        node_availability(hub.engine, manager_id, "active")
        worker.leave()
    assert [n.id for n in hub.engine.client.nodes.list()] == [manager_id]


def test_two_students_on_a_swarm_each_run_lab_04_and_stop_cleanly(swarm_hub: SwarmHub) -> None:
    hub = swarm_hub
    with ThreadPoolExecutor(len(STUDENTS)) as pool:
        browsers = dict(zip(STUDENTS, pool.map(hub.client.log_in, STUDENTS), strict=True))
    for user in STUDENTS:
        wait_for(lambda u=user: hub.client.lab_answers(browsers[u], u), 300, f"{user}'s JupyterLab")
    assert sorted(hub.services()) == [f"{hub.prefix}-{u}" for u in STUDENTS]
    for name in hub.services():
        spec = hub.engine.client.services.get(name).attrs["Spec"]
        assert spec["EndpointSpec"]["Mode"] == "dnsrr"  # no virtual IP: no IPVS needed
    containers = {u: hub.student_container(u) for u in STUDENTS}
    reports = run_lab_04_at_once(hub.engine, containers)
    for user, report in reports.items():
        assert report["errors"] == [], user
        assert report["seconds"] < LAB_BUDGET_S, user
    assert hub.volumes() == [f"{hub.prefix}-{u}" for u in STUDENTS]  # homes: named volumes

    for user in STUDENTS:
        hub.client.stop_server(user)
    wait_for(lambda: not hub.services(), 120, "the students' services removed")
    assert all(hub.client.server(u) is None for u in STUDENTS)
    assert hub.volumes() == [f"{hub.prefix}-{u}" for u in STUDENTS]  # their work stays

    hub.remove()
    wait_for(lambda: not hub.stack_services(), 120, "the stack's services removed")
    stack = {"label": f"com.docker.stack.namespace={hub.name}"}
    wait_for(
        lambda: not hub.engine.client.api.containers(all=True, filters=stack),
        120,
        "the hub's container removed",
    )
