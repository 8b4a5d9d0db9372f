"""Voilà serving the presenter, beside the cluster it shows, as ``kafkalite lab`` serves
JupyterLab.

Two ways, chosen by where ``kafkalite demo`` runs:

- on a machine of its own (a laptop, a lecture-hall PC): Voilà in the background on
  loopback with a random token, recorded in ``<cluster dir>/voila.json`` (its output in
  ``voila.log``), so ``kafkalite down`` stops it with the cluster and JupyterLab;
- in a JupyterLab terminal (the course stack's lab container, or an instructor's own
  server on JupyterHub, where no other port is reachable): the presenter notebook is put
  in the server's folder and shown by the server's own Voilà extension, at
  ``voila/render/kafkalite-demo.ipynb`` beside ``/lab``, behind the same login.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from urllib.parse import urlencode

from kafkalite.cluster.spec import check_port_free
from kafkalite.lab import jupyter
from kafkalite.lab.connection import LAB_BASE_PORT, LAB_BROKERS, open_cluster

STATE_FILE = "voila.json"
LOG_FILE = "voila.log"
DEFAULT_PORT = 8866
PRESENTER = Path(__file__).with_name("presenter.ipynb")
IN_SERVER_NAME = "kafkalite-demo.ipynb"
"""The presenter's name in a Jupyter server's folder (the extension way)."""
SERVER_ROOT = "JUPYTER_SERVER_ROOT"
SERVER_URL = "JUPYTER_SERVER_URL"
"""What a JupyterLab terminal's environment says of the server it runs in."""
HUB_PREFIX = "JUPYTERHUB_SERVICE_PREFIX"
HUB_PUBLIC_URL = "JUPYTERHUB_PUBLIC_URL"
"""What JupyterHub tells the server it spawned: the server's path on the hub's address,
and (when the hub knows it: ``JupyterHub.public_url``) that address with the path."""


def start(
    cluster_dir: Path, ip: str = "127.0.0.1", port: int = DEFAULT_PORT
) -> tuple[jupyter.JupyterServer, bool]:
    """Start Voilà on the presenter (or reuse the one serving this cluster); returns the
    server and whether it was started now."""
    running = jupyter.load(cluster_dir, STATE_FILE)
    if running is not None and running.reachable():
        return running, False
    if running is not None:
        stop(cluster_dir)
    check_port_free(ip if ip not in ("0.0.0.0", "") else "0.0.0.0", port)
    token = jupyter.new_token()
    command = [
        sys.executable,
        "-m",
        "voila",
        str(PRESENTER),
        "--no-browser",
        f"--Voila.ip={ip}",
        f"--Voila.port={port}",
        "--Voila.port_retries=0",
        f"--token={token}",
        "--VoilaConfiguration.show_tracebacks=True",  # an instructor's own machine
    ]
    server = jupyter.JupyterServer(
        0, ip, port, token, str(PRESENTER.parent), probe="/voila/static/voila.js"
    )
    return jupyter.launch(cluster_dir, command, server, STATE_FILE, LOG_FILE, name="Voilà"), True


def stop(cluster_dir: Path) -> bool:
    return jupyter.stop(cluster_dir, state_file=STATE_FILE)


def url(server: jupyter.JupyterServer, scenario: str | None = None) -> str:
    query = {"token": server.token, **({"scenario": scenario} if scenario else {})}
    return f"{server.base_url}/?{urlencode(query)}"


def in_jupyter_server() -> Path | None:
    """The folder of the Jupyter server whose terminal this is, if it is one."""
    root = os.environ.get(SERVER_ROOT)
    return Path(root) if root else None


def put_in_server(root: Path, cluster_dir: Path) -> Path:
    """The presenter notebook in the server's folder, pointed at this cluster."""
    notebook = json.loads(PRESENTER.read_text())
    source = "".join(notebook["cells"][0]["source"])
    notebook["cells"][0]["source"] = source.replace(
        "present()", f"present({str(cluster_dir.resolve())!r})"
    )
    path = root / IN_SERVER_NAME
    path.write_text(json.dumps(notebook, indent=1) + "\n")
    return path


def extension_url(scenario: str | None) -> str:
    """Where the server's Voilà extension shows the presenter. On JupyterHub the server is
    reached through the hub's proxy, at ``<hub's address>/user/<name>/``: the full address
    when the hub was told its public one (``KAFKALITE_HUB_PUBLIC_URL`` in the course's
    stack), else the path to open on the hub's address. Elsewhere the server's own
    address. (Either way the browser's login to that server is the page's.)"""
    query = f"?{urlencode({'scenario': scenario})}" if scenario else ""
    page = f"voila/render/{IN_SERVER_NAME}{query}"
    public = os.environ.get(HUB_PUBLIC_URL)
    if public:
        return f"{public.rstrip('/')}/{page}"
    prefix = os.environ.get(HUB_PREFIX)
    if prefix:
        return f"{prefix.rstrip('/')}/{page}"
    return f"{os.environ.get(SERVER_URL, 'http://127.0.0.1:8888/')}{page}"


def open_demo(
    cluster_dir: Path,
    scenario: str | None = None,
    brokers: int = LAB_BROKERS,
    kafka_port: int = LAB_BASE_PORT,
    configs: dict[str, str] | None = None,
    ip: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    stop_command: str = "kafkalite down",
) -> str:
    """What ``kafkalite demo`` does: start or reuse the cluster, then serve the presenter;
    returns what to tell the instructor (``stop_command`` written for their shell)."""
    cluster = open_cluster(cluster_dir, brokers, kafka_port, configs)
    states = ", ".join(f"{b}: {s.value}" for b, s in cluster.broker_states().items())
    brokers_line = f"  brokers:   {cluster.bootstrap_servers}  ({states})"
    root = in_jupyter_server()
    if root is not None:
        path = put_in_server(root, cluster_dir)
        return "\n".join(
            [
                f"Presenter written to {path} (this Jupyter server's Voilà shows it)",
                f"  open:      {extension_url(scenario)}",
                *(
                    ["             (on the hub's address, the one this server's page is on)"]
                    if os.environ.get(HUB_PREFIX) and not os.environ.get(HUB_PUBLIC_URL)
                    else []
                ),
                brokers_line,
            ]
        )
    server, started = start(cluster_dir, ip, port)
    return "\n".join(
        [
            f"Presenter {'started' if started else 'already running'} (Voilà)",
            f"  open:      {url(server, scenario)}",
            "  keys:      → next, ← back, R reset (a presentation clicker's keys)",
            brokers_line,
            f"  cluster:   {cluster_dir}  (log: {cluster_dir / LOG_FILE})",
            f"  stop all:  {stop_command}",
        ]
    )
