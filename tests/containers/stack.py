"""The course stack (``docker-compose.yml``) under a project name of its own, as a test uses it.

Everything the stack creates carries the compose project's label, so ``leftovers()`` finds
any container, network or volume that ``down -v`` failed to remove. Images keep a tag per
clone (``test-<hash of the clone's path>``): they are the build cache of the next run, and
two clones testing at once never run each other's code.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import tarfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import docker.errors
from docker.models.containers import Container

from tests.containers.engine import REPO, Engine
from tests.support.waiting import wait_for

PROJECT_LABEL = "com.docker.compose.project"
ROLE_LABEL = "org.kafkalite.role"
COMPOSE_FILES = ["docker-compose.yml", "docker/docker-socket.yml"]


def compose_command() -> list[str]:
    """``docker compose`` (v2) where the plugin exists, else Debian's ``docker-compose``."""
    v2 = subprocess.run(["docker", "compose", "version"], capture_output=True, check=False)
    return ["docker", "compose"] if v2.returncode == 0 else ["docker-compose"]


def extra_ca_certs() -> str:
    """The CA certificates this machine added to its store (a network that intercepts
    HTTPS needs them inside the image builds too)."""
    root = Path("/usr/local/share/ca-certificates")
    return "".join(p.read_text() for p in sorted(root.rglob("*.crt"))) if root.exists() else ""


class CourseStack:
    def __init__(self, engine: Engine, base_image: str, workdir: Path, lab_port: int) -> None:
        self.engine = engine
        self.project = f"kltest{os.getpid()}{int(time.time()) % 100000}"
        self.tag = "test-" + hashlib.sha1(str(REPO).encode()).hexdigest()[:8]
        self.token = hashlib.sha1(os.urandom(16)).hexdigest()
        self.lab_port = lab_port
        self.up_seconds = 0.0
        self.labs = workdir / "labs"
        shutil.copytree(REPO / "labs", self.labs)
        uid = 1000 if os.getuid() == 0 else os.getuid()
        if os.getuid() == 0:  # the notebook server's user must be able to save the labs
            for path in [self.labs, *self.labs.rglob("*")]:
                os.chown(path, uid, uid)
        self.env = {
            **os.environ,
            "DOCKER_HOST": engine.host,
            "COMPOSE_PROJECT_NAME": self.project,
            "BASE_IMAGE": base_image,
            "KAFKALITE_TAG": self.tag,
            "KAFKALITE_EXTRA_CA_CERTS": extra_ca_certs(),
            "KAFKALITE_LAB_PORT": str(lab_port),
            "KAFKALITE_LABS": str(self.labs),
            "KAFKALITE_UID": str(uid),
            "KAFKALITE_GID": str(uid),
            "JUPYTER_TOKEN": self.token,
            "DOCKER_SOCKET": engine.socket_path,
            "DOCKER_GID": str(os.stat(engine.socket_path).st_gid),
        }
        self.compose = compose_command()

    def run(self, *args: str, files: list[str] = COMPOSE_FILES, timeout_s: float = 600) -> str:
        """One compose command on this stack (by default with the Docker socket override)."""
        done = subprocess.run(
            [*self.compose, *(f for name in files for f in ("-f", name)), *args],
            cwd=REPO,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
        if done.returncode != 0:
            raise AssertionError(f"compose {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
        return done.stdout

    def build(self) -> None:
        self.run("build", "--force-rm", timeout_s=1500)
        # the images the previous build of this clone left untagged (the build cache stays)
        self.engine.client.images.prune(
            filters={"dangling": True, "label": "org.kafkalite.image=kafkalite"}
        )

    def up(self, timeout_s: float = 180) -> float:
        """``up -d``, then wait for healthy brokers and JupyterLab; the seconds it took."""
        started = time.monotonic()
        self.run("up", "-d", "--no-build", timeout_s=timeout_s)
        self.wait_healthy(timeout_s)
        wait_for(lambda: self.lab_http_status(self.token) == 200, timeout_s, "JupyterLab")
        return time.monotonic() - started

    def down(self) -> None:
        self.run("down", "-v", "--remove-orphans", "--timeout", "30", timeout_s=300)

    # ---- looking at it -------------------------------------------------------------

    def containers(self, role: str | None = None) -> list[Container]:
        labels = [f"{PROJECT_LABEL}={self.project}"]
        if role is not None:
            labels.append(f"{ROLE_LABEL}={role}")
        return self.engine.client.containers.list(all=True, filters={"label": labels})

    def lab(self) -> Container:
        (lab,) = self.containers("lab")
        return lab

    def healthy(self) -> bool:
        brokers = self.containers("broker")
        return len(brokers) == 3 and all(
            c.attrs["State"].get("Health", {}).get("Status") == "healthy" for c in brokers
        )

    def wait_healthy(self, timeout_s: float = 120) -> None:
        wait_for(self.healthy, timeout_s, "every broker container healthy")

    def lab_http_status(self, token: str | None) -> int:
        """HTTP status of JupyterLab's ``/api/status`` on the published port (0: no answer)."""
        query = f"?token={token}" if token else ""
        url = f"http://127.0.0.1:{self.lab_port}/api/status{query}"
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return int(r.status)
        except urllib.error.HTTPError as exc:
            return exc.code
        except OSError:
            return 0

    def leftovers(self) -> dict[str, list[str]]:
        client = self.engine.client
        label = {"label": f"{PROJECT_LABEL}={self.project}"}
        return {
            "containers": [c.name for c in client.containers.list(all=True, filters=label)],
            "networks": [n.name for n in client.networks.list(filters=label)],
            "volumes": [v.name for v in client.volumes.list(filters=label)],
        }

    # ---- working in the lab container ---------------------------------------------

    def copy_into_lab(self, files: dict[str, Path], dest: str = "/tmp/kltest") -> None:
        """Put test files into the lab container (``files``: path inside ``dest`` -> source)."""
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
        lab = self.lab()
        lab.exec_run(["mkdir", "-p", dest])
        assert lab.put_archive(dest, archive.getvalue())

    def exec_lab(
        self, command: list[str], env: dict[str, str] | None = None, timeout_s: float = 600
    ) -> subprocess.CompletedProcess[str]:
        """Run a command in the lab container as its user, bounded by ``timeout_s``."""
        environment = [f for k, v in (env or {}).items() for f in ("-e", f"{k}={v}")]
        return subprocess.run(
            ["docker", "exec", *environment, self.lab().id, *command],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )

    def inspect(self, container: Container) -> dict[str, Any]:
        try:
            container.reload()
        except docker.errors.NotFound:
            return {}
        return container.attrs
