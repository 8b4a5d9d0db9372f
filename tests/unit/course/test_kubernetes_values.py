"""The Kubernetes set-up on paper, checked: the Zero to JupyterHub values name the lab
image and its entry point, give each student the memory ``bench.course`` measured (the
one-server hub's default is the same figure), keep the brokers inside the student's pod,
keep homes on volumes, and cull idle servers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[3]
VALUES = REPO / "docker" / "jupyterhub" / "kubernetes-values.yaml"
MEASURED = REPO / "bench" / "results" / "course.json"
HUB_CONFIG = REPO / "docker" / "jupyterhub" / "jupyterhub_config.py"


@pytest.fixture(scope="module")
def values() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(VALUES.read_text())
    return loaded


@pytest.fixture(scope="module")
def measured() -> dict[str, Any]:
    recommended: dict[str, Any] = json.loads(MEASURED.read_text())["recommended"]
    return recommended


def test_students_run_the_lab_image_with_its_entry_point(values: dict[str, Any]) -> None:
    singleuser = values["singleuser"]
    assert singleuser["image"]["name"].endswith("kafkalite/lab")
    assert singleuser["image"]["tag"].endswith("-spark0")  # the image docker compose builds
    assert singleuser["cmd"] == "kafkalite-lab"  # copies the labs in, then the hub's server
    assert (singleuser["uid"], singleuser["fsGid"]) == (1000, 1000)  # the image's user
    assert singleuser["extraEnv"]["KAFKALITE_BACKEND"] == "local"  # brokers inside the pod


def test_each_student_gets_the_memory_bench_course_measured(
    values: dict[str, Any], measured: dict[str, Any]
) -> None:
    memory = values["singleuser"]["memory"]
    assert memory["limit"] == f"{measured['memory_limit_mib']}M"
    assert memory["guarantee"] == f"{measured['memory_guarantee_mib']}M"
    assert values["singleuser"]["cpu"]["guarantee"] == measured["cpu_guarantee"]
    default = re.search(r'"KAFKALITE_STUDENT_MEMORY"\) or "(\d+)M"', HUB_CONFIG.read_text())
    assert default is not None and int(default.group(1)) == measured["memory_limit_mib"]


def test_homes_persist_and_idle_servers_are_culled(values: dict[str, Any]) -> None:
    storage = values["singleuser"]["storage"]
    assert storage["type"] == "dynamic"
    assert storage["homeMountPath"] == "/home/kafkalite"  # where the labs and the cluster live
    cull = values["cull"]
    assert cull["enabled"] is True
    assert 0 < cull["every"] < cull["timeout"]
