"""The class's JupyterHub as the container tests and ``bench.course`` drive it: through its
REST API with the course-admin token (create students, start and stop their servers), its
login form as a browser posts it, and each student's Jupyter server through the hub's
proxy (kernels started and run over their websocket, as JupyterLab runs them)."""

from __future__ import annotations

import contextlib
import http.cookiejar
import json
import re
import secrets
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import websocket
from docker.models.containers import Container

from tests.containers.engine import Engine
from tests.containers.stack import HUB_FILES, ComposeProject
from tests.support.waiting import wait_for

CONNECT = (
    "import time\nimport kafkalite.lab\n"
    "started = time.monotonic()\nlab = kafkalite.lab.connect()\n"
    "print(round(time.monotonic() - started, 3))"
)
"""A notebook's first cell, timed: the student's cluster found, or started (its seconds
are the cell's last line)."""


@dataclass(frozen=True)
class Execution:
    """What one cell did: its printed output, its error (``Name: message``) if any."""

    output: str
    error: str | None
    seconds: float


class Kernel:
    """A notebook's kernel in a student's server, started and driven as JupyterLab does:
    a session for the notebook through the REST API, then execute requests over the
    kernel's websocket. Its working directory is the notebook's folder (the labs).

    Each cell opens the websocket afresh, as a JupyterLab tab reconnects: a connection
    left idle while a class arrives may be closed in between (seen in ``bench.course``)."""

    def __init__(self, server_url: str, token: str, notebook: str) -> None:
        self.server_url = server_url.rstrip("/")
        self.headers = {"Authorization": f"token {token}"}
        session = _call(
            f"{self.server_url}/api/sessions",
            self.headers,
            "POST",
            {"path": notebook, "type": "notebook", "name": notebook, "kernel": {"name": "python3"}},
        )
        self.session_id = session["id"]
        self.kernel_id = session["kernel"]["id"]
        self.client_session = uuid.uuid4().hex

    def execute(self, code: str, timeout_s: float = 300) -> Execution:
        ws_url = self.server_url.replace("http", "ws", 1)
        socket = websocket.create_connection(
            f"{ws_url}/api/kernels/{self.kernel_id}/channels",
            header=[f"{k}: {v}" for k, v in self.headers.items()],
            timeout=60,
        )
        try:
            return self._execute(socket, code, timeout_s)
        finally:
            socket.close()

    def _execute(self, socket: websocket.WebSocket, code: str, timeout_s: float) -> Execution:
        msg_id = uuid.uuid4().hex
        header = {
            "msg_id": msg_id,
            "session": self.client_session,
            "username": "",
            "msg_type": "execute_request",
            "version": "5.3",
        }
        content = {"code": code, "silent": False, "store_history": True, "allow_stdin": False}
        socket.send(
            json.dumps(
                {
                    "header": header,
                    "parent_header": {},
                    "metadata": {},
                    "channel": "shell",
                    "content": {**content, "user_expressions": {}},
                }
            )
        )
        started = time.monotonic()
        output: list[str] = []
        error = None
        while True:
            socket.settimeout(max(1.0, timeout_s - (time.monotonic() - started)))
            message = json.loads(socket.recv())
            if message.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind = message["msg_type"]
            if kind == "stream":
                output.append(message["content"]["text"])
            elif kind == "error":
                error = f"{message['content']['ename']}: {message['content']['evalue']}"
            elif kind == "execute_reply":
                return Execution("".join(output), error, time.monotonic() - started)

    def close(self) -> None:
        """Shut the kernel down (its session deleted), as closing the notebook's tab and
        shutting its kernel does."""
        _call(f"{self.server_url}/api/sessions/{self.session_id}", self.headers, "DELETE")


def _call(url: str, headers: dict[str, str], method: str = "GET", body: Any = None) -> Any:
    request = urllib.request.Request(
        url,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={**headers, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        data = response.read()
    return json.loads(data) if data else None


class OpenTab:
    """A student's JupyterLab tab left open: it asks the server for its kernels every few
    seconds, as JupyterLab does, which is activity the hub's idle culler sees."""

    def __init__(self, browser: urllib.request.OpenerDirector, url: str, every_s: float = 5):
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._poll, args=(browser, url, every_s), daemon=True)
        self.thread.start()

    def _poll(self, browser: urllib.request.OpenerDirector, url: str, every_s: float) -> None:
        while not self.stop.wait(every_s):
            with contextlib.suppress(OSError):
                browser.open(f"{url}/api/kernels", timeout=30).read()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(60)


@dataclass(frozen=True)
class HubClient:
    """The hub at ``url`` as its admin's scripts and its students' browsers reach it."""

    url: str
    admin_token: str
    password: str

    def api(self, path: str, method: str = "GET", body: Any = None) -> Any:
        headers = {"Authorization": f"token {self.admin_token}"}
        return _call(f"{self.url}/hub/api{path}", headers, method, body)

    def answers(self) -> bool:
        try:
            return bool(self.api("/"))
        except OSError:
            return False

    def create_students(self, names: list[str]) -> None:
        self.api("/users", "POST", {"usernames": names})

    def start_server(self, name: str) -> None:
        self.api(f"/users/{name}/server", "POST")

    def stop_server(self, name: str) -> None:
        self.api(f"/users/{name}/server", "DELETE")

    def server(self, name: str) -> dict[str, Any] | None:
        """The hub's view of the student's server (None: none is running or starting)."""
        found: dict[str, Any] | None = self.api(f"/users/{name}")["servers"].get("")
        return found

    def server_ready(self, name: str) -> bool:
        return bool((self.server(name) or {}).get("ready"))

    def kernel_gone(self, name: str, kernel_id: str) -> bool:
        """Whether the kernel no longer runs in the student's server (its REST API, through
        the proxy; the student may have others)."""
        headers = {"Authorization": f"token {self.admin_token}"}
        kernels: list[dict[str, Any]] = _call(f"{self.server_url(name)}/api/kernels", headers)
        return kernel_id not in {kernel["id"] for kernel in kernels}

    def server_url(self, name: str) -> str:
        return f"{self.url}/user/{name}"

    def kernel(self, name: str, notebook: str) -> Kernel:
        """A kernel for ``notebook`` in the student's server, through the hub's proxy."""
        return Kernel(self.server_url(name), self.admin_token, notebook)

    def run_in_terminal(self, name: str, command: str, timeout_s: float = 300) -> str:
        """``command`` typed into a new terminal of the user's server, as someone at the
        keyboard of JupyterLab's terminal runs it (the server's REST API makes the
        terminal, its websocket carries the keys and the screen); returns what the
        terminal showed until the command's exit status, which must be 0. The terminal
        is closed after."""
        headers = {"Authorization": f"token {self.admin_token}"}
        server = self.server_url(name)
        terminal = _call(f"{server}/api/terminals", headers, "POST")["name"]
        socket = websocket.create_connection(
            f"{server.replace('http', 'ws', 1)}/terminals/websocket/{terminal}",
            header=[f"{k}: {v}" for k, v in headers.items()],
            timeout=60,
        )
        screen = ""
        try:
            socket.send(json.dumps(["stdin", f"{command}; echo command-exit=$?\r"]))
            deadline = time.monotonic() + timeout_s
            while (status := re.search(r"command-exit=(\d+)", screen)) is None:
                socket.settimeout(max(1.0, deadline - time.monotonic()))
                kind, *text = json.loads(socket.recv())
                if kind == "stdout":
                    screen += text[0].replace("\r", "")
            assert status.group(1) == "0", screen
            return screen
        finally:
            socket.close()
            _call(f"{server}/api/terminals/{terminal}", headers, "DELETE")

    def log_in(self, user: str) -> urllib.request.OpenerDirector:
        """Log in through the hub's form, as a browser does; the hub then spawns the user's
        server. Returns a client holding the user's cookies."""
        jar = http.cookiejar.CookieJar()
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        browser.open(f"{self.url}/hub/login", timeout=30).read()
        xsrf = next(c.value for c in jar if c.name == "_xsrf")
        form = urllib.parse.urlencode({"username": user, "password": self.password, "_xsrf": xsrf})
        browser.open(f"{self.url}/hub/login", form.encode(), timeout=60).read()
        return browser

    def open_tab(self, browser: urllib.request.OpenerDirector, user: str) -> OpenTab:
        return OpenTab(browser, self.server_url(user))

    def lab_answers(self, browser: urllib.request.OpenerDirector, user: str) -> bool:
        """The user's JupyterLab answers through the hub's proxy: its page (which sends the
        browser through the hub's OAuth, as a student's browser goes), then its API."""
        try:
            with browser.open(f"{self.url}/user/{user}/lab", timeout=30) as page:
                if page.status != 200 or not page.url.endswith(f"/user/{user}/lab"):
                    return False
            with browser.open(f"{self.url}/user/{user}/api/status", timeout=30) as r:
                return r.status == 200 and "started" in json.loads(r.read())
        except (OSError, ValueError):
            return False


class Hub(ComposeProject):
    """``docker/jupyterhub/docker-compose.yml`` under a project, network and student
    prefix of its own, with a known admin token and password."""

    def __init__(
        self, engine: Engine, base_image: str, port: int, env: dict[str, str] | None = None
    ) -> None:
        self.port = port
        self.prefix = f"klstudent{secrets.token_hex(3)}"
        self.client = HubClient(
            f"http://127.0.0.1:{port}", secrets.token_hex(24), secrets.token_urlsafe(12)
        )
        super().__init__(
            engine,
            HUB_FILES,
            {
                "BASE_IMAGE": base_image,
                "KAFKALITE_HUB_PASSWORD": self.client.password,
                "KAFKALITE_HUB_ADMIN_TOKEN": self.client.admin_token,
                "KAFKALITE_HUB_PORT": str(port),
                "KAFKALITE_HUB_PUBLIC_URL": f"{self.client.url}/",
                "KAFKALITE_HUB_NETWORK": f"{self.prefix}-net",
                "KAFKALITE_HUB_PREFIX": self.prefix,
                **(env or {}),
            },
        )

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

    def hub_container(self) -> Container:
        (hub,) = self.containers("hub")
        return hub

    def build_images(self) -> None:
        """The students' image and the hub's (this clone's, shared by all its hubs)."""
        self.build("lab", files=["docker-compose.yml"])
        self.build()

    @contextlib.contextmanager
    def running(self) -> Iterator[Hub]:
        """Built, up and answering its API; then down, with the students' leftovers."""
        self.build_images()
        try:
            self.run("up", "-d", "--no-build", timeout_s=300)
            wait_for(self.client.answers, 120, "the hub's API")
            yield self
        finally:
            # the students first: a hub stopping many of them may outlast compose's wait,
            # which then fails to remove the network they are still on
            self.remove_student_leftovers()
            self.down()
