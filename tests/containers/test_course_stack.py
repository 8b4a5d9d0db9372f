"""The course stack on a real Docker engine: `docker compose up` gives three healthy brokers
and JupyterLab, the lab container drives the brokers through the Docker backend, and
`docker compose down -v` leaves nothing behind.

The images are built from this clone (the build cache makes a rebuild after a code change
take seconds); the lab container gets the Docker socket through docker/docker-socket.yml,
the course's explicit choice, because these tests kill, pause and isolate brokers from it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkalite.cluster import Cluster
from tests.containers.engine import Engine
from tests.containers.stack import (
    CONTAINER_TESTS,
    LAB_BUDGET_S,
    CourseStack,
    copy_into,
    processes_of,
    run_lab_04,
    script_files,
)
from tests.support.ports import free_base_port
from tests.support.topics import create_topic
from tests.support.waiting import wait_for

pytestmark = CONTAINER_TESTS


@pytest.fixture(scope="module")
def stack(
    engine: Engine, base_image: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CourseStack]:
    course = CourseStack(engine, base_image, tmp_path_factory.mktemp("course"), free_base_port())
    course.build()
    try:
        course.up_seconds = course.up()
        yield course
    finally:
        course.down()


def test_up_gives_healthy_brokers_and_jupyterlab_behind_a_token(stack: CourseStack) -> None:
    assert stack.healthy()
    assert stack.lab_http_status(stack.token) == 200
    assert stack.lab_http_status(None) == 403  # token authentication
    assert stack.lab_http_status("wrong") == 403
    ports = stack.inspect(stack.lab())["NetworkSettings"]["Ports"]["8888/tcp"]
    assert [p["HostIp"] for p in ports] == ["127.0.0.1"]  # never on the machine's network
    for broker in stack.containers("broker"):
        assert not stack.inspect(broker)["NetworkSettings"]["Ports"].get("9092/tcp")
    assert stack.up_seconds < 180  # generous: the target is 20 s on a quiet machine


def test_processes_run_as_a_user_under_tini(stack: CourseStack) -> None:
    for container in [*stack.containers("broker"), *stack.containers("links"), stack.lab()]:
        processes = processes_of(container)  # pid (on the engine's host) -> uid, command
        assert {uid for uid, _ in processes.values()} == {"1000"}, container.name
        _, init = processes[str(stack.inspect(container)["State"]["Pid"])]
        assert init.split()[0] == "tini", container.name


def test_default_compose_file_keeps_the_docker_socket_out(stack: CourseStack) -> None:
    default = stack.run("config", files=["docker-compose.yml"])  # the course's own file alone
    assert "docker.sock" not in default
    no_socket = {"DOCKER_HOST": "unix:///nonexistent.sock"}
    done = stack.exec_lab(["kafkalite", "kill", "1"], env=no_socket)
    assert done.returncode == 1
    assert done.stderr.startswith("error: fault verbs in the course stack need the Docker socket")
    assert len(done.stderr.strip().splitlines()) == 1
    done = stack.exec_lab(["kafkalite", "status", "--json"], env=no_socket)
    assert done.returncode == 0, done.stderr
    assert [b["state"] for b in json.loads(done.stdout)["brokers"]] == ["running"] * 3


def test_cli_in_the_lab_sees_the_stack(stack: CourseStack) -> None:
    done = stack.exec_lab(["kafkalite", "status", "--json"])
    assert done.returncode == 0, done.stderr
    brokers = json.loads(done.stdout)["brokers"]
    assert [b["address"] for b in brokers] == [f"broker-{i}:9092" for i in (1, 2, 3)]
    assert sum(b["controller"] for b in brokers) == 1
    done = stack.exec_lab(["kafkalite", "up"])
    assert done.returncode == 1 and "course stack" in done.stderr


def test_work_in_the_labs_folder_is_kept_on_the_host(stack: CourseStack) -> None:
    done = stack.exec_lab(["sh", "-c", "echo saved > /home/kafkalite/labs/mine.txt"])
    assert done.returncode == 0, done.stderr
    assert (stack.labs / "mine.txt").read_text() == "saved\n"


def _shape(value: Any) -> Any:
    """The JSON schema of a status snapshot: keys and the shapes of their values."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return "value"


def test_lab_04_runs_in_the_lab_container_against_the_broker_containers(
    stack: CourseStack,
) -> None:
    report = run_lab_04(stack.engine, stack.lab())
    assert report["errors"] == []
    assert report["seconds"] < LAB_BUDGET_S
    done = stack.exec_lab(["kafkalite", "status", "--json"])
    assert {"orders", "clicks", "ledger"} <= {
        p["topic"] for p in json.loads(done.stdout)["partitions"]
    }


def test_the_instructors_demo_runs_in_the_lab_container(stack: CourseStack) -> None:
    """``kafkalite demo`` where the course runs (issue 32): two scenarios rehearsed in the
    lab container against the broker containers, their resets and faults (a broker cut
    off, a leader killed) carried out through the Docker backend, each to its verdict."""
    scenarios = ["committed", "acks-1"]
    done = stack.exec_lab(["python", "-m", "kafkalite.demo.rehearse", *scenarios], timeout_s=400)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for slug in scenarios:
        assert f"  {slug}: " in done.stdout and f"{slug} FAILED" not in done.stdout


def test_faults_through_the_docker_backend_lose_no_acknowledged_write(
    stack: CourseStack, tmp_path: Path
) -> None:
    copy_into(stack.lab(), script_files(["lab_scenario.py"]))
    done = stack.exec_lab(
        ["python", "/tmp/kltest/lab_scenario.py"],
        env={"PYTHONPATH": "/tmp/kltest"},
        timeout_s=900,
    )
    assert done.returncode == 0, done.stderr[-8000:]
    report = json.loads(done.stdout)
    assert report["killed"]["state"] == "dead"
    assert report["killed"]["new_leader"] != report["killed"]["broker"]
    assert report["kafka_python_after_failover"] >= 0
    assert report["restarted"] == "running"
    assert report["paused"]["state"] == "paused"
    assert report["isolated"]["state"] == "isolated"
    assert report["isolated"]["answers_clients"] and report["isolated"]["answers_clients_later"]
    slowed = report["paused"]["broker"]
    assert report["slowed"] == {
        "broker": slowed,
        "slow_ms": {str(slowed): 300},
        "in_status": {str(b): 300 if b == slowed else None for b in (1, 2, 3)},
    }
    assert report["healed"] == {"isolated": [], "slow_ms": {}, "partially_partitioned": []}
    assert report["stopped"] == {
        "broker": report["isolated"]["broker"],
        "state": "stopped",  # SIGTERM reached the broker through tini: it exited 0
        "exit_code": 0,
    }
    assert set(report["states_at_end"].values()) == {"running"}
    assert report["acked"] > 100
    assert report["anomalies"] == {}, report["anomalies"]

    # the same status schema as a local cluster's
    local = Cluster.up(tmp_path / "local", brokers=1, base_port=free_base_port())
    try:
        create_topic(local.bootstrap_servers, "shape", 1, 1)
        wait_for(lambda: local.status()["partitions"], 20, "the local topic in status")
        assert _shape(report["status"]) == _shape(local.status())
    finally:
        local.down()


def test_down_leaves_no_container_network_or_volume(stack: CourseStack) -> None:
    stack.down()
    assert stack.leftovers() == {"containers": [], "networks": [], "volumes": []}
