"""A class larger than one server: the hub as a Docker swarm stack (``docker stack deploy``
of ``docker/jupyterhub/swarm-stack.yml``), each student a swarm service (SwarmSpawner) with
their home on a named volume, on a real one-node swarm made of the engine the tests use.
Two students log in through the hub, each runs lab 04 in their own service's container,
their servers stop cleanly (services gone, homes kept), and so does the stack."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.containers.engine import Engine
from tests.containers.hub import Hub
from tests.containers.stack import CONTAINER_TESTS, LAB_BUDGET_S, run_lab_04_at_once
from tests.containers.swarm import SwarmHub, one_node_swarm
from tests.support.ports import free_base_port
from tests.support.waiting import wait_for

pytestmark = CONTAINER_TESTS

STUDENTS = ("ada", "grace")


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
