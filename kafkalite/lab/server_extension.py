"""A Jupyter server extension: the course's view into one student's cluster.

Each student's server (JupyterHub spawns one per student) answers, beside its own API:

- ``GET <base_url>kafkalite/cluster``: :func:`~kafkalite.lab.cluster_health.health` of the
  cluster the student's notebooks use;
- ``POST <base_url>kafkalite/cluster/reset``: :func:`~kafkalite.lab.cluster_health.reset`.

Both need the server's own authentication (the student, or a hub token with
``access:servers``, which the hub's ``course-admin`` service holds). Neither counts as the
student's activity: the hub's idle culler must still see an untouched server as idle
after staff looked at it. The lab image enables it for every server
(``docker/jupyter-server-extension.json``).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from jupyter_server.base.handlers import APIHandler
from jupyter_server.serverapp import ServerApp
from jupyter_server.utils import url_path_join
from tornado import web

from kafkalite.lab.cluster_health import health, reset
from kafkalite.lab.connection import find_cluster_dir


class _ClusterHandler(APIHandler):
    _track_activity = False  # staff looking is not the student working

    @property
    def cluster_dir(self) -> Path:
        """Where the student's notebooks find their cluster: from the server's root."""
        return find_cluster_dir(cwd=Path(self.settings["server_root_dir"]))


class HealthHandler(_ClusterHandler):
    @web.authenticated
    async def get(self) -> None:
        self.finish(json.dumps(await asyncio.to_thread(health, self.cluster_dir)))


class ResetHandler(_ClusterHandler):
    @web.authenticated
    async def post(self) -> None:
        self.finish(json.dumps(await asyncio.to_thread(reset, self.cluster_dir)))


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    return [{"module": "kafkalite.lab.server_extension"}]


def _load_jupyter_server_extension(server: ServerApp) -> None:
    base = server.web_app.settings["base_url"]
    server.web_app.add_handlers(  # type: ignore[no-untyped-call]
        ".*$",
        [
            (url_path_join(base, "kafkalite/cluster"), HealthHandler),
            (url_path_join(base, "kafkalite/cluster/reset"), ResetHandler),
        ],
    )
