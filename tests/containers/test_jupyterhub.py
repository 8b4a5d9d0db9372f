"""A whole class on one server: JupyterHub (DockerSpawner, configurable-http-proxy from
npm) on a real engine, two students logged in at once, each with a notebook connected to a
cluster of their own inside their own container, neither seeing the other's cluster nor
the Docker socket (lab 04 runs in two such containers in ``test_swarm.py``). Then what
running a course takes: staff see each student's cluster (brokers up, the last fault) and
reset one or all with one command; the instructor runs ``kafkalite demo`` in their own
server and opens the presenter through the hub; a student who leaves their server idle is
culled, and their next login gets their work and their cluster back.

One hub for the module, its idle culler set to ``CULL_IDLE_S``: each student keeps a
JupyterLab tab open (it polls the server, as JupyterLab does) until the test that lets one
go idle closes it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from docker.models.containers import Container

from kafkalite.cluster.healthcheck import probe
from tests.containers.engine import Engine
from tests.containers.hub import CONNECT, Hub, OpenTab
from tests.containers.stack import (
    CONTAINER_TESTS,
    docker_exec,
    processes_of,
)
from tests.support.chromium import CHROMIUM
from tests.support.ports import free_base_port
from tests.support.presenter_page import ARTIFACTS, projector, ready
from tests.support.waiting import wait_for

pytestmark = CONTAINER_TESTS

STUDENTS = ("ada", "grace")
MIB = 1024 * 1024
NOTEBOOK = "04-leader-failover.ipynb"
CULL_IDLE_S = 45
"""The test hub's idle time: short, so that a culled server is seen within a minute or
two; the tabs' polls every 5 s keep the others well inside it."""


@pytest.fixture(scope="module")
def hub(engine: Engine, base_image: str) -> Iterator[Hub]:
    course = Hub(
        engine, base_image, free_base_port(), env={"KAFKALITE_CULL_IDLE_S": str(CULL_IDLE_S)}
    )
    with course.running():
        yield course


@pytest.fixture(scope="module")
def tabs(hub: Hub) -> Iterator[dict[str, OpenTab]]:
    """Both students logged in through the form, their JupyterLab open."""
    with ThreadPoolExecutor(len(STUDENTS)) as pool:
        browsers = dict(zip(STUDENTS, pool.map(hub.client.log_in, STUDENTS), strict=True))
    opened = {}
    try:
        for user in STUDENTS:
            wait_for(
                lambda u=user: hub.client.lab_answers(browsers[u], u), 240, f"{user}'s JupyterLab"
            )
            opened[user] = hub.client.open_tab(browsers[user], user)
        yield opened
    finally:
        for tab in opened.values():
            tab.close()


def broker_processes(container: Container) -> int:
    """How many brokers run inside a student's container (each forked by the broker
    launcher keeps its command line, ``-m kafkalite.broker.launcher <data dirs>``)."""
    return sum("-m kafkalite.broker" in cmd for _, cmd in processes_of(container).values())


def memory_mib(container: Container) -> float:
    stats = container.stats(stream=False)
    return float(stats["memory_stats"]["usage"]) / MIB


def course_command(hub: Hub, *args: str) -> Any:
    """``kafkalite-course`` in the hub's container, as the instructor runs it."""
    done = docker_exec(hub.engine, hub.hub_container(), ["kafkalite-course", *args], timeout_s=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout) if "--json" in args else done.stdout


def test_two_students_get_a_container_and_a_cluster_of_their_own(
    hub: Hub, tabs: dict[str, OpenTab]
) -> None:
    """(Lab 04 itself runs in two students' containers of the same image in the swarm
    test: what it checks does not depend on the spawner.)"""
    containers = {user: hub.student_container(user) for user in STUDENTS}
    idle = {user: memory_mib(c) for user, c in containers.items()}

    for container in containers.values():
        # no student holds the Docker socket
        assert docker_exec(hub.engine, container, ["test", "-e", "/var/run/docker.sock"]).returncode
        assert "DOCKER_HOST" not in container.attrs["Config"]["Env"]

    with ThreadPoolExecutor(len(STUDENTS)) as pool:  # each one's notebook connects
        kernels = list(pool.map(lambda u: hub.client.kernel(u, NOTEBOOK), STUDENTS))
        connected = list(pool.map(lambda k: k.execute(CONNECT), kernels))
    assert [c.error for c in connected] == [None, None]
    with_cluster = {user: memory_mib(c) for user, c in containers.items()}
    for user, kernel in zip(STUDENTS, kernels, strict=True):
        kernel.close()
        # the student's cluster: three brokers as processes inside the student's container
        assert broker_processes(containers[user]) == 3, user

    # each student's brokers listen inside that student's container only
    ada, grace = (containers[u] for u in STUDENTS)
    grace_ip = hub.inspect(grace)["NetworkSettings"]["Networks"][f"{hub.prefix}-net"]["IPAddress"]
    assert probe(grace_ip, 9092, timeout_s=2) is not None
    reach = docker_exec(
        hub.engine,
        ada,
        ["python", "-c", f"import socket; socket.create_connection(('{grace_ip}', 9092), 2)"],
    )
    assert reach.returncode != 0
    print(
        "\nper student container, MiB: JupyterLab alone "
        + ", ".join(f"{u} {m:.0f}" for u, m in idle.items())
        + "; with a kernel connected to its cluster "
        + ", ".join(f"{u} {m:.0f}" for u, m in with_cluster.items())
    )


FRESH_CLUSTER_TOPICS = (
    "import json, os, kafkalite.lab; os.chdir(os.path.expanduser('~/labs'));"
    "lab = kafkalite.lab.connect(); print(json.dumps(lab.status()['partitions']))"
)


def rows(hub: Hub) -> dict[str, dict[str, Any]]:
    return {row["student"]: row for row in course_command(hub, "students", "--json")}


def test_staff_see_each_students_cluster_and_reset_one_or_all(
    hub: Hub, tabs: dict[str, OpenTab]
) -> None:
    ada, grace = (hub.student_container(u) for u in STUDENTS)
    for container in (ada, grace):  # their clusters run, whether the test before ran or not
        started = docker_exec(hub.engine, container, ["python", "-c", FRESH_CLUSTER_TOPICS])
        assert started.returncode == 0, started.stderr[-2000:]
    seen = rows(hub)["ada"]
    assert (seen["server"], seen["brokers_up"]) == ("running", 3)

    kill = ["kafkalite", "kill", "2", "--dir", "/home/kafkalite/labs/.kafkalite"]
    assert docker_exec(hub.engine, ada, kill).returncode == 0
    seen = wait_for(
        lambda: (r := rows(hub)["ada"])["last_fault"] and r["last_fault"]["broker"] == 2 and r,
        60,
        "the fence of ada's broker 2 seen",
    )
    assert seen["brokers"]["2"] == "dead" and seen["brokers_up"] == 2
    assert (seen["last_fault"]["type"], seen["last_fault"]["broker"]) == ("broker_fenced", 2)
    table = course_command(hub, "students")
    assert "ada" in table and "2/3 brokers up (2 dead)" in table, table

    # the instructor resets one student's cluster; the other's runs on
    assert "ada" in course_command(hub, "reset", "ada")
    assert broker_processes(ada) == 0
    fresh = docker_exec(hub.engine, ada, ["python", "-c", FRESH_CLUSTER_TOPICS], timeout_s=120)
    assert fresh.returncode == 0, fresh.stderr[-2000:]
    assert json.loads(fresh.stdout.splitlines()[-1]) == []  # the next connect(): empty
    if broker_processes(grace) == 0:  # the lab test did not run (-k)
        assert (
            docker_exec(hub.engine, grace, ["python", "-c", FRESH_CLUSTER_TOPICS]).returncode == 0
        )
    assert broker_processes(grace) == 3

    # ... or everyone's
    reset = course_command(hub, "reset", "--all")
    assert all(f"{u:<20} reset" in reset for u in STUDENTS), reset
    assert broker_processes(ada) == broker_processes(grace) == 0
    assert {r["student"]: r["cluster"] for r in rows(hub).values()} == dict.fromkeys(STUDENTS)


INSTRUCTOR = "turing"


def test_the_instructors_demo_runs_from_their_own_server_through_the_hub(
    hub: Hub, tabs: dict[str, OpenTab]
) -> None:
    """Issue 32 on JupyterHub: the instructor logs in, types ``kafkalite demo committed``
    in their server's terminal, opens the address it prints (the hub's public address:
    the presenter is Voilà inside their server, through the hub's proxy) in Chromium at a
    projector's size, and the scenario's first step runs on their server's cluster."""
    pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (scripts/install-system-deps.sh)")
    browser = hub.client.log_in(INSTRUCTOR)
    wait_for(lambda: hub.client.lab_answers(browser, INSTRUCTOR), 240, "the instructor's lab")
    tab = hub.client.open_tab(browser, INSTRUCTOR)  # their JupyterLab stays open meanwhile
    try:
        said = hub.client.run_in_terminal(INSTRUCTOR, "kafkalite demo committed")
        address = next(line.split()[-1] for line in said.splitlines() if "open:" in line)
        presenter = f"{hub.client.url}/user/{INSTRUCTOR}/voila/render/kafkalite-demo.ipynb"
        assert address == f"{presenter}?scenario=committed", said
        with projector() as page:
            page.goto(f"{hub.client.url}/hub/login")  # the hub's form, as the instructor
            page.fill("input[name=username]", INSTRUCTOR)
            page.fill("input[name=password]", hub.client.password)
            page.click("[type=submit]")
            page.wait_for_url(f"**/user/{INSTRUCTOR}/**")
            page.goto(address)
            ready(page, "committed", -1)
            page.keyboard.press("ArrowRight")
            seen = ready(page, "committed", 0)
            page.screenshot(path=str(ARTIFACTS / "demo-through-jupyterhub.png"))
            assert page.url.startswith(presenter)  # the hub's address: through its proxy
        assert (seen["scenario"], seen["step"]) == ("committed", "0")
        # the step ran on the instructor's own cluster: brokers inside their container
        assert broker_processes(hub.student_container(INSTRUCTOR)) == 3
    finally:  # the instructor leaves no server nor home behind (the students' stay)
        tab.close()
        hub.client.stop_server(INSTRUCTOR)
        wait_for(lambda: hub.client.server(INSTRUCTOR) is None, 120, "the instructor's stop")
        wait_for(
            lambda: (
                not hub.engine.client.containers.list(
                    all=True, filters={"name": f"{hub.prefix}-{INSTRUCTOR}"}, ignore_removed=True
                )
            ),
            60,
            "the instructor's container removed",
        )
        hub.engine.client.volumes.get(f"{hub.prefix}-{INSTRUCTOR}").remove()


BROKER_LOGS = "tail -n 20 ~/labs/.kafkalite/*/broker.log ~/labs/.kafkalite/links.log"
KEEP = """
import json
lab.reset()  # as each lab's first cell does: every broker back, whatever the tests before did
lab.create_topic("kept", partitions=1, replication_factor=3)
lab.producer(acks="all").send("kept", b"my work").get(timeout=30)
print(json.dumps([p["topic"] for p in lab.status()["partitions"]]))
"""


def test_an_idle_student_is_culled_and_gets_their_work_and_cluster_back(
    hub: Hub, tabs: dict[str, OpenTab]
) -> None:
    kernel = hub.client.kernel("ada", NOTEBOOK)
    assert kernel.execute(CONNECT).error is None
    kept = kernel.execute(KEEP)
    if kept.error:  # what the cluster looked like, and what its brokers logged
        seen = kernel.execute("print(lab.status()['brokers'])").output
        logs = docker_exec(hub.engine, hub.student_container("ada"), ["sh", "-c", BROKER_LOGS])
        raise AssertionError(f"{kept.error}\n{seen}\n{logs.stdout[-6000:]}")
    assert "kept" in json.loads(kept.output.splitlines()[-1])
    kernel.close()
    first = hub.student_container("ada").id

    tabs["ada"].close()  # ada leaves; grace's tab stays open
    left = time.monotonic()
    wait_for(lambda: hub.client.server("ada") is None, 6 * CULL_IDLE_S, "ada's server culled")
    culled_after = time.monotonic() - left
    assert culled_after >= CULL_IDLE_S - 1  # culled for being idle, not by accident
    assert hub.client.server_ready("grace"), "a student with an open tab was culled"
    assert not hub.engine.client.containers.list(filters={"id": first})

    browser = hub.client.log_in("ada")  # the next login spawns a new container
    wait_for(lambda: hub.client.lab_answers(browser, "ada"), 240, "ada's JupyterLab again")
    assert hub.student_container("ada").id != first
    kernel = hub.client.kernel("ada", NOTEBOOK)
    restarted = kernel.execute(CONNECT)
    assert restarted.error is None, restarted.error
    restart_s = float(restarted.output.split()[-1])
    topics = kernel.execute('print([p["topic"] for p in lab.status()["partitions"]])')
    assert topics.error is None and "'kept'" in topics.output  # the cluster's data came back
    again = kernel.execute(
        "c = lab.consumer(); c.subscribe(['kept']); print([m.value for m in c][:1])"
    )
    assert again.error is None and "b'my work'" in again.output, again
    kernel.close()
    assert restart_s < 60  # generous: the target is 3 s on a quiet machine (bench.course)
    print(f"\nada culled {culled_after:.0f} s after her tab closed; cluster back in {restart_s} s")


def test_stopping_the_hub_removes_the_students_containers_and_keeps_their_work(hub: Hub) -> None:
    hub.down()
    assert hub.leftovers() == {"containers": [], "networks": [], "volumes": []}
    wait_for(
        lambda: not hub.leftovers(hub.student_label())["containers"],
        60,
        "the students' containers removed",
    )
    left = hub.leftovers(hub.student_label())
    assert left["networks"] == []
    assert sorted(left["volumes"]) == sorted(f"{hub.prefix}-{u}" for u in STUDENTS)  # their work
    for name in left["volumes"]:
        hub.engine.client.volumes.get(name).remove()
    assert hub.leftovers(hub.student_label())["volumes"] == []
