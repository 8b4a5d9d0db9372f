"""``kafkalite lab`` as a student runs it: a cluster and JupyterLab on the labs, reached
with the printed token only; run again, it reuses both; ``kafkalite down`` stops the
brokers, JupyterLab and every kernel it started, and leaves nothing behind."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import psutil
import pytest

from kafkalite.cluster import Cluster
from kafkalite.lab.connection import ENV_DIR
from tests.support.cli import kafkalite
from tests.support.ports import free_base_port

pytestmark = [pytest.mark.labs, pytest.mark.slow]


def get(url: str, token: str | None = None, method: str = "GET") -> tuple[int, bytes]:
    headers = {"Authorization": f"token {token}"} if token else {}
    request = urllib.request.Request(url, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""


def command_line(process: psutil.Process) -> str:
    """The process's command line; empty for one that exited meanwhile (JupyterLab's
    short-lived helpers: a zombie's command line cannot be read)."""
    try:
        return " ".join(process.cmdline())
    except (psutil.ZombieProcess, psutil.NoSuchProcess):
        return ""


def test_lab_serves_the_notebooks_and_down_leaves_nothing_behind(tmp_path: Path) -> None:
    labs = tmp_path / "labs"
    labs.mkdir()
    nbformat.write(nbformat.v4.new_notebook(), labs / "00-hello.ipynb")
    root = tmp_path / "cluster"
    kafka_port, jupyter_port = free_base_port(3), free_base_port(1)
    args = ["--dir", str(root), "--kafka-port", str(kafka_port), "--labs", str(labs)]
    started = kafkalite("lab", *args, "--port", str(jupyter_port))
    assert started.returncode == 0, started.stderr
    try:
        url = re.search(r"open:\s+(\S+)", started.stdout)
        assert url, started.stdout
        assert url.group(1).startswith(f"http://127.0.0.1:{jupyter_port}/lab?token=")
        token = url.group(1).split("token=")[1]
        assert f"127.0.0.1:{kafka_port}" in started.stdout
        base = f"http://127.0.0.1:{jupyter_port}"

        assert get(f"{base}/api/status", token)[0] == 200
        assert get(f"{base}/api/status")[0] == 403, "JupyterLab must ask for the token"
        status, body = get(f"{base}/api/contents", token)
        assert status == 200
        assert [f["name"] for f in json.loads(body)["content"]] == ["00-hello.ipynb"]

        server = json.loads((root / "jupyter.json").read_text())
        jupyter = psutil.Process(server["pid"])
        assert jupyter.environ()[ENV_DIR] == str(root.resolve())
        listening = {c.laddr for c in jupyter.net_connections() if c.status == "LISTEN"}
        assert {(a.ip, a.port) for a in listening} == {("127.0.0.1", jupyter_port)}
        status, body = get(f"{base}/api/kernels", token, method="POST")
        assert status == 201, "a kernel starts"
        kernels = [c for c in jupyter.children(recursive=True) if "ipykernel" in command_line(c)]
        assert kernels and kernels[0].environ()[ENV_DIR] == str(root.resolve())

        cluster = Cluster.attach(root)
        assert [s.value for s in cluster.broker_states().values()] == ["running"] * 3
        again = kafkalite("lab", *args, "--port", str(jupyter_port))
        assert again.returncode == 0, again.stderr
        assert "already running" in again.stdout and token in again.stdout
        assert json.loads((root / "jupyter.json").read_text())["pid"] == server["pid"]
    finally:
        down = kafkalite("down", "--dir", str(root))
    assert down.returncode == 0, down.stderr
    assert (
        not psutil.pid_exists(server["pid"]) or psutil.Process(server["pid"]).status() == "zombie"
    )
    assert all(not k.is_running() or k.status() == "zombie" for k in kernels)
    assert not (root / "jupyter.json").exists()
    assert [s.value for s in Cluster.attach(root).broker_states().values()] == ["stopped"] * 3
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"{base}/api/status", timeout=5)


def test_lab_refuses_a_busy_port_with_one_line(tmp_path: Path) -> None:
    labs = tmp_path / "labs"
    labs.mkdir()
    root = tmp_path / "cluster"
    kafka_port = free_base_port(3)
    try:
        busy = kafkalite(
            "lab",
            "--dir",
            str(root),
            "--kafka-port",
            str(kafka_port),
            "--labs",
            str(labs),
            "--port",
            str(kafka_port),  # the first broker's port: taken once the cluster runs
        )
        assert busy.returncode == 1
        assert busy.stderr.strip() == f"error: port {kafka_port} on 127.0.0.1 is already in use"
    finally:
        kafkalite("down", "--dir", str(root))
