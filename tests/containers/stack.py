"""The compose projects the container tests bring up, each under a project name of its own:
the course stack (``docker-compose.yml`` with the socket override) and the class hub
(``docker/jupyterhub/docker-compose.yml``).

Everything a project creates carries its compose project label (and the students'
containers and volumes the hub makes carry the hub's label), so ``leftovers()`` finds
whatever ``down -v`` failed to remove. Images keep a tag per clone (``test-<hash of the
clone's path>``): they are the next run's build cache, and two clones testing at once
never run each other's code.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import docker.errors
import pytest
import requests.exceptions
from docker.models.containers import Container

from tests.containers.engine import REPO, Engine, machine_lock
from tests.support.waiting import wait_for

PROJECT_LABEL = "com.docker.compose.project"
ROLE_LABEL = "org.kafkalite.role"
LABEL_IMAGE = "org.kafkalite.image=kafkalite"
COURSE_FILES = ["docker-compose.yml", "docker/docker-socket.yml"]
HUB_FILES = ["docker/jupyterhub/docker-compose.yml"]


def compose_command() -> list[str]:
    """``docker compose`` (v2) where the plugin exists, else Debian's ``docker-compose``."""
    v2 = subprocess.run(["docker", "compose", "version"], capture_output=True, check=False)
    return ["docker", "compose"] if v2.returncode == 0 else ["docker-compose"]


def extra_ca_certs() -> str:
    """The CA certificates this machine added to its store (a network that intercepts
    HTTPS needs them inside the image builds too)."""
    root = Path("/usr/local/share/ca-certificates")
    return "".join(p.read_text() for p in sorted(root.rglob("*.crt"))) if root.exists() else ""


CONTAINER_TESTS = [
    pytest.mark.containers,
    pytest.mark.slow,
    pytest.mark.xdist_group("containers"),
    pytest.mark.timeout(1800),  # the first build on a machine installs every dependency
]
"""Every container test's marks: its lane, and one xdist worker for all (they share the
engine, its images and its swarm)."""


def checked(command: list[str], env: dict[str, str], timeout_s: float) -> str:
    """Run a command of the engine's client from the repository; its output, or an
    AssertionError with everything it printed."""
    done = subprocess.run(
        command, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout_s, check=False
    )
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def base_image(engine: Engine) -> str:
    """``BASE_IMAGE`` if set, else Debian bookworm's Python from mmdebstrap (kept by the
    engine's data root, so only the first run on a machine builds it: about 80 s)."""
    if os.environ.get("BASE_IMAGE"):
        return os.environ["BASE_IMAGE"]
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "build-base-image.sh")],
        env={**os.environ, "DOCKER_HOST": engine.host},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"scripts/build-base-image.sh failed:\n{done.stderr}")
    return done.stdout.strip()


def http_status(url: str, timeout_s: float = 5) -> int:
    """The HTTP status of a GET (0: no answer)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as r:
            return int(r.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


def copy_into(container: Container, files: dict[str, Path], dest: str = "/tmp/kltest") -> None:
    """Put test files into a container (``files``: path inside ``dest`` -> source)."""
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        for name, source in files.items():
            info = tar.gettarinfo(str(source), arcname=name)
            info.uid = info.gid = 1000
            info.mode = 0o755 if source.is_dir() else 0o644
            if source.is_dir():
                tar.addfile(info)
            else:
                with source.open("rb") as f:
                    tar.addfile(info, f)
    container.exec_run(["mkdir", "-p", dest])
    assert container.put_archive(dest, archive.getvalue())


LAB_04 = next((REPO / "grader" / "masters").glob("04-*.ipynb"))
LAB_BUDGET_S = 300  # the lab tests allow 120 s on the host; containers share a loaded machine


def script_files(scripts: list[str]) -> dict[str, Path]:
    """What a script from this folder needs inside a container: itself, its helpers, and
    lab 04 with its reference answers and checks (the master notebook)."""
    here = Path(__file__).parent
    support = REPO / "tests" / "support"
    return {
        "lab04.ipynb": LAB_04,
        "tests": REPO / "tests",
        "tests/__init__.py": REPO / "tests" / "__init__.py",
        "tests/support": support,
        "tests/support/__init__.py": support / "__init__.py",
        "tests/support/waiting.py": support / "waiting.py",
        "tests/support/notebooks.py": support / "notebooks.py",
        **{name: here / name for name in scripts},
    }


def processes_of(container: Container) -> dict[str, tuple[str, str]]:
    """Every process of a container, ``docker top``: host pid -> (uid, command line). Not
    through ``exec``: the engine sometimes loses a short command's output (moby#27289)."""
    top = container.top(ps_args="-o pid,uid,args")
    return {pid: (uid, command) for pid, uid, command in top["Processes"]}


def docker_exec(
    engine: Engine,
    container: Container,
    command: list[str],
    env: dict[str, str] | None = None,
    timeout_s: float = 600,
) -> subprocess.CompletedProcess[str]:
    """Run a command in a container as its user, bounded by ``timeout_s``."""
    environment = [f for k, v in (env or {}).items() for f in ("-e", f"{k}={v}")]
    return subprocess.run(
        ["docker", "exec", *environment, str(container.id), *command],
        env={**os.environ, "DOCKER_HOST": engine.host},
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )


class ComposeProject:
    """One compose project: its files, its environment, its leftovers."""

    def __init__(self, engine: Engine, files: list[str], env: dict[str, str]) -> None:
        self.engine = engine
        self.files = files
        self.project = f"kltest{os.getpid()}{int(time.time() * 1000) % 10**7}"
        self.tag = "test-" + hashlib.sha1(str(REPO).encode()).hexdigest()[:8]
        self.env = {
            **os.environ,
            "DOCKER_HOST": engine.host,
            "COMPOSE_PROJECT_NAME": self.project,
            "KAFKALITE_TAG": self.tag,
            "KAFKALITE_EXTRA_CA_CERTS": extra_ca_certs(),
            "DOCKER_SOCKET": engine.socket_path,
            "DOCKER_GID": str(os.stat(engine.socket_path).st_gid),
            **env,
        }
        self.compose = compose_command()

    def run(self, *args: str, files: list[str] | None = None, timeout_s: float = 600) -> str:
        """One compose command on this project (by default with its own files)."""
        chosen = (f for name in files or self.files for f in ("-f", name))
        return checked([*self.compose, *chosen, *args], self.env, timeout_s)

    def build(self, *services: str, files: list[str] | None = None) -> None:
        """Build the images, one session of this machine at a time (test sessions of
        several clones and group runs share the engine); then remove the images an earlier
        build left untagged, one by one: an engine refuses a second ``image prune`` while
        one runs (409), and a prune would also take another build's images away."""
        with machine_lock("image-build"):
            self.run("build", "--force-rm", *services, files=files, timeout_s=1500)
            images = self.engine.client.images
            for image in images.list(filters={"dangling": True, "label": LABEL_IMAGE}):
                # APIError: a container still uses it. ReadTimeout: deleting a large image's
                # layers outlasted the client's 60 s on a busy disk; the engine finishes it
                with contextlib.suppress(docker.errors.APIError, requests.exceptions.ReadTimeout):
                    images.remove(str(image.id))  # an image listed has an id

    def down(self) -> None:
        """Remove the project, keeping its containers' output in ``.test-logs/``: the
        brokers log to it, and a failure in a container test is read there afterwards."""
        containers = self.containers()
        if containers:  # not again once down: that would empty the file
            self._save_logs(containers)
        self.run("down", "-v", "--remove-orphans", "--timeout", "60", timeout_s=300)

    def _save_logs(self, containers: list[Container]) -> None:
        logs = REPO / ".test-logs" / f"compose-{self.project}.log"
        logs.parent.mkdir(exist_ok=True)
        with logs.open("wb") as out:
            for container in containers:
                out.write(f"===== {container.name}\n".encode())
                with contextlib.suppress(docker.errors.APIError):
                    out.write(container.logs(timestamps=True))

    def containers(self, role: str | None = None) -> list[Container]:
        labels = [f"{PROJECT_LABEL}={self.project}"]
        if role is not None:
            labels.append(f"{ROLE_LABEL}={role}")
        return self.engine.client.containers.list(all=True, filters={"label": labels})

    def leftovers(self, label: str | None = None) -> dict[str, list[str]]:
        client = self.engine.client
        found: dict[str, str | list[str] | bool] = {
            "label": label or f"{PROJECT_LABEL}={self.project}"
        }
        return {
            "containers": [
                str(c.name)
                for c in client.containers.list(all=True, filters=found, ignore_removed=True)
            ],
            "networks": [str(n.name) for n in client.networks.list(filters=found)],
            "volumes": [str(v.name) for v in client.volumes.list(filters=found)],
        }

    def inspect(self, container: Container) -> dict[str, Any]:
        try:
            container.reload()
        except docker.errors.NotFound:
            return {}
        return container.attrs


class CourseStack(ComposeProject):
    """``docker-compose.yml`` plus the socket override, its labs folder a copy in ``workdir``."""

    def __init__(self, engine: Engine, base_image: str, workdir: Path, lab_port: int) -> None:
        self.labs = workdir / "labs"
        shutil.copytree(REPO / "labs", self.labs)
        uid = 1000 if os.getuid() == 0 else os.getuid()
        if os.getuid() == 0:  # the notebook server's user must be able to save the labs
            for path in [self.labs, *self.labs.rglob("*")]:
                os.chown(path, uid, uid)
        self.token = hashlib.sha1(os.urandom(16)).hexdigest()
        self.lab_port = lab_port
        self.up_seconds = 0.0
        super().__init__(
            engine,
            COURSE_FILES,
            {
                "BASE_IMAGE": base_image,
                "KAFKALITE_LAB_PORT": str(lab_port),
                "KAFKALITE_LABS": str(self.labs),
                "KAFKALITE_UID": str(uid),
                "KAFKALITE_GID": str(uid),
                "JUPYTER_TOKEN": self.token,
            },
        )

    def up(self, timeout_s: float = 180) -> float:
        """``up -d``, then wait for healthy brokers and JupyterLab; the seconds it took."""
        started = time.monotonic()
        self.run("up", "-d", "--no-build", timeout_s=timeout_s)
        wait_for(self.healthy, timeout_s, "every broker container healthy")
        wait_for(lambda: self.lab_http_status(self.token) == 200, timeout_s, "JupyterLab")
        return time.monotonic() - started

    def healthy(self) -> bool:
        brokers = self.containers("broker")
        return len(brokers) == 3 and all(
            c.attrs["State"].get("Health", {}).get("Status") == "healthy" for c in brokers
        )

    def lab(self) -> Container:
        (lab,) = self.containers("lab")
        return lab

    def lab_http_status(self, token: str | None) -> int:
        """HTTP status of JupyterLab's ``/api/status`` on the published port (0: no answer)."""
        query = f"?token={token}" if token else ""
        return http_status(f"http://127.0.0.1:{self.lab_port}/api/status{query}")

    def exec_lab(
        self, command: list[str], env: dict[str, str] | None = None, timeout_s: float = 600
    ) -> subprocess.CompletedProcess[str]:
        return docker_exec(self.engine, self.lab(), command, env, timeout_s)


def run_lab_04(engine: Engine, container: Container) -> dict[str, Any]:
    """Execute lab 04 (its master: the student's steps, the reference answers, every
    check) inside a lab container; the runner's report."""
    copy_into(container, script_files(["run_notebook.py"]))
    done = docker_exec(
        engine,
        container,
        ["python", "/tmp/kltest/run_notebook.py", "/tmp/kltest/lab04.ipynb", str(LAB_BUDGET_S)],
        env={"PYTHONPATH": "/tmp/kltest"},
        timeout_s=2 * LAB_BUDGET_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def run_lab_04_at_once(engine: Engine, containers: dict[str, Container]) -> dict[str, Any]:
    """Lab 04 in several students' containers at the same time: each one's report."""
    with ThreadPoolExecutor(len(containers)) as pool:
        reports = pool.map(lambda c: run_lab_04(engine, c), containers.values())
        return dict(zip(containers, reports, strict=True))
