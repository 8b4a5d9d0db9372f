"""A whole class on one server: JupyterHub (DockerSpawner, configurable-http-proxy from
npm) on a real engine, two students logged in at once, each running lab 04 against a
cluster of their own inside their own container, neither seeing the other's cluster nor
the Docker socket. Prints what one student's container costs (idle, and with its
cluster busy), the measure behind the README's students-per-machine figure.
"""

from __future__ import annotations

import http.cookiejar
import json
import secrets
import urllib.parse
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from docker.models.containers import Container

from kafkalite.cluster.healthcheck import probe
from tests.containers.engine import Engine
from tests.containers.stack import (
    HUB_FILES,
    LAB_BUDGET_S,
    ComposeProject,
    docker_exec,
    http_status,
    processes_of,
    run_lab_04,
)
from tests.support.ports import free_base_port
from tests.support.waiting import wait_for

pytestmark = [
    pytest.mark.containers,
    pytest.mark.slow,
    pytest.mark.xdist_group("containers"),
    pytest.mark.timeout(1800),
]

STUDENTS = ("ada", "grace")
MIB = 1024 * 1024


class Hub(ComposeProject):
    def __init__(self, engine: Engine, base_image: str, port: int) -> None:
        self.password = secrets.token_urlsafe(12)
        self.port = port
        self.prefix = f"klstudent{secrets.token_hex(3)}"
        super().__init__(
            engine,
            HUB_FILES,
            {
                "BASE_IMAGE": base_image,
                "KAFKALITE_HUB_PASSWORD": self.password,
                "KAFKALITE_HUB_PORT": str(port),
                "KAFKALITE_HUB_NETWORK": f"{self.prefix}-net",
                "KAFKALITE_HUB_PREFIX": self.prefix,
            },
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def student_label(self) -> str:
        return f"org.kafkalite.hub={self.prefix}"

    def remove_student_leftovers(self) -> None:
        """What a failed test may leave: the students' containers and home volumes."""
        client = self.engine.client
        for container in client.containers.list(all=True, filters={"label": self.student_label()}):
            container.remove(force=True)
        for volume in client.volumes.list(filters={"label": self.student_label()}):
            volume.remove(force=True)

    def student_container(self, name: str) -> Container:
        (found,) = self.engine.client.containers.list(
            filters={"label": self.student_label(), "name": f"{self.prefix}-{name}"}
        )
        return found


@pytest.fixture(scope="module")
def hub(engine: Engine, base_image: str) -> Iterator[Hub]:
    course = Hub(engine, base_image, free_base_port())
    course.build("lab", files=["docker-compose.yml"])  # the students' image
    course.build()
    try:
        course.run("up", "-d", "--no-build", timeout_s=300)
        wait_for(lambda: http_status(f"{course.url}/hub/api/") == 200, 120, "the hub's API")
        yield course
    finally:
        course.down()
        course.remove_student_leftovers()


def log_in(hub: Hub, user: str) -> urllib.request.OpenerDirector:
    """Log in through the hub's form, as a browser does; the hub then spawns the user's
    server. Returns a client holding the user's cookies."""
    jar = http.cookiejar.CookieJar()
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    browser.open(f"{hub.url}/hub/login", timeout=30).read()
    xsrf = next(c.value for c in jar if c.name == "_xsrf")
    form = urllib.parse.urlencode({"username": user, "password": hub.password, "_xsrf": xsrf})
    browser.open(f"{hub.url}/hub/login", form.encode(), timeout=60).read()
    return browser


def server_answers(browser: urllib.request.OpenerDirector, hub: Hub, user: str) -> bool:
    """The user's JupyterLab answers through the hub's proxy: its page (which sends the
    browser through the hub's OAuth, as a student's browser goes), then its API."""
    try:
        with browser.open(f"{hub.url}/user/{user}/lab", timeout=30) as page:
            if page.status != 200 or not page.url.endswith(f"/user/{user}/lab"):
                return False
        with browser.open(f"{hub.url}/user/{user}/api/status", timeout=30) as r:
            return r.status == 200 and "started" in json.loads(r.read())
    except (OSError, ValueError):
        return False


RESET_STUDENT_CLUSTER = [
    "sh",
    "-c",
    "kafkalite down --dir ~/labs/.kafkalite && rm -rf ~/labs/.kafkalite",
]
FRESH_CLUSTER_TOPICS = (
    "import json, os, kafkalite.lab; os.chdir(os.path.expanduser('~/labs'));"
    "lab = kafkalite.lab.connect(); print(json.dumps(lab.status()['partitions']))"
)


def broker_processes(container: Container) -> int:
    """How many brokers run inside a student's container."""
    return sum("-m kafkalite.broker " in cmd for _, cmd in processes_of(container).values())


def memory_mib(container: Container) -> float:
    stats = container.stats(stream=False)
    return float(stats["memory_stats"]["usage"]) / MIB


def test_two_students_each_run_lab_04_in_their_own_container(hub: Hub) -> None:
    with ThreadPoolExecutor(len(STUDENTS)) as pool:
        browsers = dict(zip(STUDENTS, pool.map(lambda u: log_in(hub, u), STUDENTS), strict=True))
    for user in STUDENTS:
        wait_for(lambda u=user: server_answers(browsers[u], hub, u), 240, f"{user}'s JupyterLab")
    containers = {user: hub.student_container(user) for user in STUDENTS}
    idle = {user: memory_mib(c) for user, c in containers.items()}

    for container in containers.values():
        # no student holds the Docker socket
        assert docker_exec(hub.engine, container, ["test", "-e", "/var/run/docker.sock"]).returncode
        assert "DOCKER_HOST" not in container.attrs["Config"]["Env"]

    with ThreadPoolExecutor(len(STUDENTS)) as pool:
        reports = dict(
            zip(
                STUDENTS,
                pool.map(lambda u: run_lab_04(hub.engine, containers[u]), STUDENTS),
                strict=True,
            )
        )
    busy = {user: memory_mib(c) for user, c in containers.items()}
    for user, report in reports.items():
        assert report["errors"] == [], user
        assert report["seconds"] < LAB_BUDGET_S, user
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

    # an instructor resets one student's cluster (README: "For a course"); the other's runs on
    assert docker_exec(hub.engine, ada, RESET_STUDENT_CLUSTER).returncode == 0
    assert broker_processes(ada) == 0
    assert broker_processes(grace) == 3
    fresh = docker_exec(hub.engine, ada, ["python", "-c", FRESH_CLUSTER_TOPICS], timeout_s=120)
    assert fresh.returncode == 0, fresh.stderr[-2000:]
    # the student's next connect(): a new, empty cluster
    assert json.loads(fresh.stdout.splitlines()[-1]) == []
    print(
        "\nper student container, MiB: idle "
        + ", ".join(f"{u} {m:.0f}" for u, m in idle.items())
        + "; after lab 04 with its 3 brokers running "
        + ", ".join(f"{u} {m:.0f}" for u, m in busy.items())
    )


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
