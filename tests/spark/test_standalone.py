"""The exactly-once pipeline on a Spark standalone cluster: a master and one worker started
from the pip package (``spark-class``) on loopback, the job sent with ``spark-submit
--py-files``. This is how a course outgrows ``local[*]``.

The executors run a Python that cannot import the ``kafkalite`` installed in the venv
(``-S``: no site-packages ``.pth`` files, so no editable install; the libraries come from
``PYTHONPATH``): they get the package only from the zip shipped with the job.
"""

from __future__ import annotations

import os
import re
import site
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import kafkalite.spark
from examples.spark.orders import produce_orders
from kafkalite.checker import Ack
from kafkalite.cluster import Cluster
from kafkalite.spark.session import spark_python
from tests.spark.orders_check import judge
from tests.spark.support import read_topic
from tests.support.topics import create_topic
from tests.support.waiting import wait_for

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.xdist_group("spark"),
    pytest.mark.timeout(1200),
]

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


MASTER_URL = re.compile(rb"Starting Spark master at (spark://\S+)")
MASTER_UI_PORT = re.compile(rb"started service 'MasterUI' on port (\d+)")


def bound_address(log: Path, pattern: re.Pattern[bytes]) -> str | None:
    """The address a Spark daemon logged that it bound, once it has.

    The daemons bind port 0 and say where they landed: a port picked free beforehand can
    be taken by another lane's client before the daemon binds it, and Spark then moves to
    the next port while the test asks the stranger (the CI of 5114bbd read a Kafka
    broker's bytes as an HTTP status line)."""
    found = pattern.search(log.read_bytes())
    return found.group(1).decode() if found else None


def executor_python(directory: Path) -> Path:
    """A Python for the executors that sees the venv's libraries but not its kafkalite.

    Checked from where executors run, a directory outside the repository (``python -c``
    looks in its working directory first, and the suite runs from the repository's root,
    where ``import kafkalite`` always works); an empty ``PYTHONPATH`` adds no entry (an
    empty entry would also mean the working directory)."""
    wrapper = directory / "python-without-kafkalite"
    libraries = ":".join(site.getsitepackages())
    python = spark_python(sys.executable, "-S")
    wrapper.write_text(
        f'#!/bin/sh\nPYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}{libraries}" exec {python} "$@"\n'
    )
    wrapper.chmod(0o755)
    outside = directory / "executor-cwd"
    outside.mkdir()
    check = subprocess.run(
        [wrapper, "-c", "import kafkalite"], cwd=outside, capture_output=True, check=False
    )
    assert check.returncode != 0, "the executors' Python must not find kafkalite by itself"
    return wrapper


@pytest.fixture
def standalone(tmp_path: Path) -> Iterator[str]:
    """A master and a worker on loopback; yields the master URL."""
    kafkalite.spark.prepare_environment()
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOG_DIR": str(tmp_path)}
    started: list[subprocess.Popen[bytes]] = []
    work = tmp_path / "work"

    def spark_class(*args: str) -> Path:
        log = tmp_path / f"{args[0].rsplit('.', 1)[-1]}.log"
        with log.open("wb") as out:
            started.append(
                subprocess.Popen([BIN / "spark-class", *args], env=env, stdout=out, stderr=out)
            )
        return log

    try:
        master_log = spark_class(
            "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", "0",
            "--webui-port", "0",
        )  # fmt: skip
        url = wait_for(lambda: bound_address(master_log, MASTER_URL), 300, "the master's URL")
        ui_port = wait_for(lambda: bound_address(master_log, MASTER_UI_PORT), 60, "its web UI")
        spark_class(
            "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1", "--cores", "2",
            "--memory", "2g", "--webui-port", "0", "--work-dir", str(work),
        )  # fmt: skip

        def one_alive_worker() -> bool:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as r:
                    return b'"aliveworkers" : 1' in r.read()
            except OSError:
                return False

        wait_for(one_alive_worker, 300, "the master with one worker")
        yield url
    finally:
        for process in reversed(started):
            process.terminate()
        for process in started:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()


def test_exactly_once_pipeline_on_a_standalone_cluster(
    standalone: str, make_cluster3: Callable[..., Cluster], tmp_path: Path
) -> None:
    cluster = make_cluster3()
    bootstrap = cluster.bootstrap_servers
    for topic in ("orders", "enriched"):
        create_topic(bootstrap, topic, 3, 3)
    assert produce_orders(bootstrap, "orders", range(300)) == 300
    shipped = kafkalite.spark.package_zip(tmp_path)
    env = {
        **os.environ,
        "PYSPARK_PYTHON": str(executor_python(tmp_path)),
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "PYTHONPATH": str(ROOT),
    }
    driver_log = tmp_path / "driver.log"
    with driver_log.open("wb") as log:
        result = subprocess.run(
            [BIN / "spark-submit", "--master", standalone, "--py-files", str(shipped),
             "--conf", "spark.executor.memory=1g",
             str(ROOT / "examples" / "spark" / "exactly_once_topic.py"),
             "--master", standalone, "--bootstrap", bootstrap, "--input", "orders",
             "--output", "enriched", "--checkpoint", str(tmp_path / "checkpoint"),
             "--available-now"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=600, check=False,
        )  # fmt: skip
    assert result.returncode == 0, driver_log.read_text(errors="replace")[-6000:]
    work = list((tmp_path / "work").glob("app-*/*/stderr"))
    assert work, "no executor ran on the worker"
    acks = [
        Ack(("orders", r.partition), r.value, r.offset) for r in read_topic(bootstrap, "orders")
    ]
    verdict = judge(bootstrap, "orders", "enriched", acks)
    assert verdict.output_records == 300
    verdict.assert_exactly_once()
