"""``kafkalite lab`` as a student runs it: a cluster and JupyterLab on the labs, reached
with the printed token only; run again, it reuses both; ``kafkalite down`` stops the
brokers, JupyterLab and every kernel it started, and leaves nothing behind, whichever
process started the brokers (a notebook's kernel included)."""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import psutil
import pytest
from jupyter_client import BlockingKernelClient

from kafkalite.cluster import Cluster
from kafkalite.lab.connection import ENV_DIR
from kafkalite.lab.jupyter import HOME_DIRS
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
    # a workspace left from a session that had a notebook open: not reopened
    left = root / "jupyter-workspaces" / "default-37a8.jupyterlab-workspace"
    left.parent.mkdir(parents=True)
    left.write_text(
        json.dumps({"data": {"notebook:00-hello.ipynb": {}}, "metadata": {"id": "default"}})
    )
    kafka_port, jupyter_port = free_base_port(3), free_base_port(1)
    args = ["--dir", str(root), "--kafka-port", str(kafka_port), "--labs", str(labs)]
    started = kafkalite("lab", *args, "--port", str(jupyter_port))
    assert started.returncode == 0, started.stderr
    try:
        assert not left.exists()
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
        # nothing written to the home folder: Jupyter's and IPython's files are the cluster's
        for name, folder in HOME_DIRS.items():
            assert kernels[0].environ()[name] == str((root / folder).resolve())
        status, body = get(f"{base}/lab/api/workspaces", token)
        assert status == 200 and "00-hello" not in body.decode(), body

        cluster = Cluster.attach(root)
        assert [s.value for s in cluster.broker_states().values()] == ["running"] * 3
        again = kafkalite("lab", *args, "--port", str(jupyter_port))
        assert again.returncode == 0, again.stderr
        assert "already running" in again.stdout and token in again.stdout
        assert json.loads((root / "jupyter.json").read_text())["pid"] == server["pid"]
    finally:
        # as printed, in the shell it was printed in (this test's: `python -m kafkalite`)
        stop = re.search(r"stop both: (.+)", started.stdout)
        assert stop, started.stdout
        down = subprocess.run(
            ["bash", "-c", stop.group(1)], check=False, capture_output=True, text=True, timeout=120
        )
    assert down.returncode == 0, down.stderr
    assert (
        not psutil.pid_exists(server["pid"]) or psutil.Process(server["pid"]).status() == "zombie"
    )
    assert all(not k.is_running() or k.status() == "zombie" for k in kernels)
    assert not (root / "jupyter.json").exists()
    assert [s.value for s in Cluster.attach(root).broker_states().values()] == ["stopped"] * 3
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"{base}/api/status", timeout=5)


def _start_lab(tmp_path: Path) -> tuple[Path, str, str]:
    """``kafkalite lab`` on free ports: the cluster's folder, JupyterLab's URL and token."""
    labs = tmp_path / "labs"
    labs.mkdir()
    root = tmp_path / "cluster"
    kafka_port, jupyter_port = free_base_port(3), free_base_port(1)
    args = ["--dir", str(root), "--kafka-port", str(kafka_port), "--labs", str(labs)]
    started = kafkalite("lab", *args, "--port", str(jupyter_port))
    assert started.returncode == 0, started.stderr
    token = re.search(r"token=(\w+)", started.stdout)
    assert token, started.stdout
    return root, f"http://127.0.0.1:{jupyter_port}", token.group(1)


def _run_in_kernel(jupyter: psutil.Process, code: str) -> None:
    """Run ``code`` in the one kernel JupyterLab started, as a notebook cell would."""
    kernels = [c for c in jupyter.children(recursive=True) if "ipykernel" in command_line(c)]
    assert len(kernels) == 1, [command_line(k) for k in kernels]
    arguments = kernels[0].cmdline()
    client = BlockingKernelClient(connection_file=arguments[arguments.index("-f") + 1])
    client.load_connection_file()
    client.start_channels()
    try:  # not wait_for_ready: it calls a kernel dead whose heartbeat has not begun yet
        asked = client.execute(code)
        reply = client.get_shell_msg(timeout=120)
        while reply["parent_header"].get("msg_id") != asked:
            reply = client.get_shell_msg(timeout=120)
        assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        client.stop_channels()


def test_down_shuts_down_a_broker_a_notebook_started(tmp_path: Path) -> None:
    """A broker started from a kernel (``lab.start(2)``) once was the kernel's child, and
    stopping JupyterLab first killed it with the kernel's process tree (``down`` then left
    it out of its report). Brokers are now nobody's children (forked by
    ``kafkalite.broker.launcher``) and ``down`` stops them before JupyterLab: it gets a
    controlled shutdown like the others, and the report names it."""
    root, base, token = _start_lab(tmp_path)
    try:
        assert get(f"{base}/api/kernels", token, method="POST")[0] == 201
        jupyter = psutil.Process(json.loads((root / "jupyter.json").read_text())["pid"])
        before = Cluster.attach(root).pid(2)
        _run_in_kernel(
            jupyter,
            "import kafkalite.lab\nlab = kafkalite.lab.connect()\nlab.stop(2)\nlab.start(2)",
        )
        broker = psutil.Process(Cluster.attach(root).pid(2))
        assert broker.pid != before, "started again, from the kernel"
        assert broker not in jupyter.children(recursive=True), "not in JupyterLab's tree"
    finally:
        asked = time.monotonic()
        down = kafkalite("down", "--dir", str(root))
        took = time.monotonic() - asked
    assert down.returncode == 0, down.stderr
    assert "stopped brokers 1, 2, 3 (controlled shutdown)" in down.stdout, down.stdout
    assert "SIGKILL" not in down.stdout
    assert [s.value for s in Cluster.attach(root).broker_states().values()] == ["stopped"] * 3
    assert not broker.is_running() or broker.status() == psutil.STATUS_ZOMBIE
    print(f"kafkalite down took {took:.1f} s (load average {psutil.getloadavg()[0]:.1f})")


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
