"""The course's containers: image sizes, `docker compose up` to three healthy brokers and a
reachable JupyterLab, a rebuild after a code change, what the stack costs at rest, and what
one JupyterHub student's container costs idle and while running lab 04 (the measure behind
the README's students-per-machine figure).

    python -m bench.containers

Needs a Docker engine; like the tests it uses the machine's, or starts the project's own
(scripts/docker-engine.sh) and the Debian base image (scripts/build-base-image.sh). The
rebuild is timed on a copy of the repository with one changed line, so the working tree is
never touched.
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, cast

from docker.models.containers import Container

from bench.common import describe_or_run, record
from tests.containers.engine import REPO, Engine, start_engine
from tests.containers.stack import CourseStack, base_image, run_lab_04
from tests.support.ports import free_base_port
from tests.support.waiting import wait_for

MIB = 2**20
UP_RUNS = 3
SETTLE_S = 20
SAMPLE_S = 30


def _stats(container: Container) -> dict[str, Any]:
    """One snapshot of the container's resource use (``docker stats --no-stream``)."""
    return cast(dict[str, Any], container.stats(stream=False))


def _cpu_and_memory(containers: list[Container], seconds: float) -> dict[str, dict[str, float]]:
    """Each container's CPU (share of one core, averaged over ``seconds``) and memory."""
    first = {c.name: _stats(c) for c in containers}
    time.sleep(seconds)
    result = {}
    for c in containers:
        last = _stats(c)
        used = last["cpu_stats"]["cpu_usage"]["total_usage"]
        used -= first[c.name]["cpu_stats"]["cpu_usage"]["total_usage"]
        result[str(c.name)] = {
            "cpu_cores": round(used / 1e9 / seconds, 3),
            "memory_mib": round(last["memory_stats"]["usage"] / MIB, 1),
        }
    return result


def _image_sizes(engine: Engine, tag: str) -> dict[str, float]:
    names = {"broker": f"kafkalite/broker:{tag}", "lab": f"kafkalite/lab:{tag}-spark0"}
    return {k: round(engine.client.images.get(v).attrs["Size"] / MIB) for k, v in names.items()}


def _timed_rebuild(stack: CourseStack) -> float:
    """Rebuild both images from a copy of the repository whose package changed one line."""
    with tempfile.TemporaryDirectory(prefix="kafkalite-rebuild-") as tmp:
        copy = Path(tmp) / "repo"
        shutil.copytree(
            REPO,
            copy,
            ignore=shutil.ignore_patterns(
                ".venv", ".git", "__pycache__", ".*_cache", ".hypothesis", ".kafkalite*"
            ),
        )
        with (copy / "kafkalite" / "__init__.py").open("a") as f:
            f.write(f"# rebuilt at {time.time()}\n")
        started = time.monotonic()
        stack.run("--project-directory", str(copy), "build", "broker-1", "lab", timeout_s=900)
        return time.monotonic() - started


def _student(engine: Engine, stack: CourseStack) -> dict[str, Any]:
    """One student's container as JupyterHub starts it (the lab image, the local backend),
    measured idle (JupyterLab and a started 3-broker cluster) and through lab 04."""
    image = f"kafkalite/lab:{stack.tag}-spark0"
    container = engine.client.containers.run(
        image,
        detach=True,
        environment={"JUPYTER_TOKEN": "bench"},
        labels={"org.kafkalite.role": "bench-student"},
    )
    try:
        answers = [
            "python",
            "-c",
            "import urllib.request as u; u.urlopen('http://127.0.0.1:8888/api')",
        ]
        wait_for(lambda: container.exec_run(answers).exit_code == 0, 120, "JupyterLab")
        time.sleep(SETTLE_S)
        idle_server = _cpu_and_memory([container], SAMPLE_S)[str(container.name)]
        peak = 0.0
        stop = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not stop.is_set():
                usage = _stats(container)["memory_stats"]["usage"] / MIB
                peak = max(peak, usage)

        sampler = threading.Thread(target=sample, daemon=True)
        before = _stats(container)["cpu_stats"]["cpu_usage"]["total_usage"]
        started = time.monotonic()
        sampler.start()
        report = run_lab_04(engine, container)
        seconds = time.monotonic() - started
        stop.set()
        sampler.join(30)
        after = _stats(container)["cpu_stats"]["cpu_usage"]["total_usage"]
        time.sleep(SETTLE_S)
        idle_cluster = _cpu_and_memory([container], SAMPLE_S)[str(container.name)]
        return {
            "idle_jupyterlab_only": idle_server,
            "idle_with_its_cluster": idle_cluster,
            "lab_04": {
                "seconds": round(seconds, 1),
                "errors": report["errors"],
                "cpu_cores_average": round((after - before) / 1e9 / seconds, 2),
                "peak_memory_mib": round(peak, 1),
            },
        }
    finally:
        container.remove(force=True)


def main() -> None:
    describe_or_run("bench.containers", __doc__)
    load_at_start = os.getloadavg()
    engine = start_engine()
    try:
        with tempfile.TemporaryDirectory(prefix="kafkalite-bench-") as tmp:
            stack = CourseStack(engine, base_image(engine), Path(tmp), free_base_port())
            stack.tag = stack.env["KAFKALITE_TAG"] = "bench"  # the tests' images stay as built
            stack.build()
            ups = []
            for _ in range(UP_RUNS):
                stack.down()
                ups.append(stack.up())
            time.sleep(SETTLE_S)
            idle = _cpu_and_memory(stack.containers(), SAMPLE_S)
            stack.down()
            results = {
                "load_average_at_start": load_at_start,
                "image_mib": _image_sizes(engine, stack.tag),
                "compose_up_to_healthy_and_jupyterlab_s": {
                    "median": round(statistics.median(ups), 1),
                    "runs": [round(u, 1) for u in ups],
                },
                "rebuild_after_a_code_change_s": round(_timed_rebuild(stack), 1),
                "stack_idle": idle,
                "stack_idle_total": {
                    "cpu_cores": round(sum(v["cpu_cores"] for v in idle.values()), 3),
                    "memory_mib": round(sum(v["memory_mib"] for v in idle.values()), 1),
                },
                "student": _student(engine, stack),
                "load_average_at_end": os.getloadavg(),
            }
        record("containers", results)
    finally:
        engine.release()


if __name__ == "__main__":
    main()
