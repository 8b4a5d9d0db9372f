#!/usr/bin/env python3
"""``kafkalite-course``: the instructor's command on the class's JupyterHub.

    kafkalite-course students            # each student: server, brokers up, last fault
    kafkalite-course students --json
    kafkalite-course reset ada grace     # their clusters stopped and emptied
    kafkalite-course reset --all         # every running student's cluster

Run it in the hub's container (``docker exec <hub> kafkalite-course students``; in a
swarm, ``docker exec`` on the manager that runs the hub). It asks the hub's REST API which
servers run and where (its routing table), then each student's server for its cluster
(the lab image's server extension, ``kafkalite/cluster``), directly and not through the
proxy: a look by staff does not count as the student's activity, so the idle culler still
stops servers nobody uses. The hub's ``course-admin`` service token authorizes both
(``KAFKALITE_HUB_ADMIN_TOKEN``, else the file the hub's configuration wrote).

Only the standard library: the hub image runs this file without the Kafka-Lite package.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TOKEN_FILE = Path("/srv/jupyterhub/course-admin-token")
DEFAULT_API = "http://127.0.0.1:8081/hub/api"
PAGINATION = "application/jupyterhub-pagination+json"
TIMEOUT_S = 20.0
"""A student's server answers its cluster's health in well under a second; a loaded
machine (every student's brokers busy) may take seconds."""
CLUSTER_PATH = "kafkalite/cluster"


class HubError(Exception):
    """The hub or a student's server refused or did not answer (one line says which)."""


@dataclass(frozen=True)
class Hub:
    api: str  # the hub's REST API, e.g. http://127.0.0.1:8081/hub/api
    token: str

    @classmethod
    def from_environment(cls) -> Hub:
        token = os.environ.get("KAFKALITE_HUB_ADMIN_TOKEN") or (
            TOKEN_FILE.read_text().strip() if TOKEN_FILE.exists() else ""
        )
        if not token:
            raise HubError(
                f"no admin token: set KAFKALITE_HUB_ADMIN_TOKEN or run where {TOKEN_FILE} is"
            )
        return cls(os.environ.get("KAFKALITE_HUB_API", DEFAULT_API).rstrip("/"), token)

    def request(self, url: str, method: str = "GET", accept: str = "application/json") -> Any:
        request = urllib.request.Request(
            url,
            method=method,
            data=b"" if method == "POST" else None,
            headers={"Authorization": f"token {self.token}", "Accept": accept},
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
                body = response.read()
        except urllib.error.HTTPError as exc:
            raise HubError(f"{method} {url}: HTTP {exc.code} {exc.reason}") from None
        except OSError as exc:
            raise HubError(f"{method} {url}: {exc}") from None
        return json.loads(body) if body else None

    def pages(self, path: str) -> Iterator[Any]:
        """Every item of a paginated hub endpoint (users, the routing table)."""
        offset: int | None = 0
        while offset is not None:
            page = self.request(f"{self.api}{path}?offset={offset}", accept=PAGINATION)
            items = page["items"]
            yield from items.values() if isinstance(items, dict) else items
            following = page["_pagination"]["next"]
            offset = None if following is None else int(following["offset"])


def servers(hub: Hub) -> dict[str, str]:
    """Each running student's server (default servers only): user name -> its address on
    the hub's network, as the proxy forwards to it, with its base path."""
    found = {}
    for route in hub.pages("/proxy"):
        user = (route.get("data") or {}).get("user")
        if user and not (route["data"].get("server_name") or ""):
            found[user] = route["target"].rstrip("/") + route["routespec"]
    return found


def student_names(hub: Hub) -> list[str]:
    return sorted(u["name"] for u in hub.pages("/users") if "admin" not in u.get("roles", []))


def cluster_of(hub: Hub, server: str, method: str = "GET") -> dict[str, Any]:
    path = CLUSTER_PATH if method == "GET" else f"{CLUSTER_PATH}/reset"
    answer: dict[str, Any] = hub.request(f"{server.rstrip('/')}/{path}", method=method)
    return answer


def students(hub: Hub) -> list[dict[str, Any]]:
    """One row per student: whether their server runs and, if it does, its cluster."""
    running = servers(hub)

    def row(name: str) -> dict[str, Any]:
        if name not in running:
            return {"student": name, "server": "stopped"}
        try:
            return {"student": name, "server": "running", **cluster_of(hub, running[name])}
        except HubError as exc:
            return {"student": name, "server": "running", "error": str(exc)}

    names = sorted(set(student_names(hub)) | set(running))
    with ThreadPoolExecutor(max_workers=16) as pool:
        return list(pool.map(row, names))


def reset(hub: Hub, names: Sequence[str] | None) -> list[dict[str, Any]]:
    """Reset the named students' clusters (None: every running student's)."""
    running = servers(hub)
    chosen = sorted(running) if names is None else list(names)

    def one(name: str) -> dict[str, Any]:
        if name not in running:
            return {"student": name, "reset": False, "why": "server not running"}
        try:
            return {"student": name, **cluster_of(hub, running[name], method="POST")}
        except HubError as exc:
            return {"student": name, "reset": False, "why": str(exc)}

    with ThreadPoolExecutor(max_workers=16) as pool:
        return list(pool.map(one, chosen))


def describe(row: dict[str, Any]) -> str:
    """One line of the ``students`` table."""
    if row["server"] != "running":
        return f"{row['student']:<20} stopped"
    if "error" in row:
        return f"{row['student']:<20} running  no answer: {row['error']}"
    if row["cluster"] is None:
        return f"{row['student']:<20} running  no cluster yet"
    broken = ", ".join(f"{b} {s}" for b, s in row["brokers"].items() if s != "running")
    line = f"{row['student']:<20} running  {row['brokers_up']}/{len(row['brokers'])} brokers up"
    if broken:
        line += f" ({broken})"
    if fault := row["last_fault"]:
        line += f"; last fault: {fault['type']} of broker {fault['broker']}"
        line += f" {fault['seconds_ago']:.0f} s ago"
    return line


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kafkalite-course", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    listing = sub.add_parser("students", help="each student's server and cluster health")
    listing.add_argument("--json", action="store_true")
    resetting = sub.add_parser("reset", help="stop and empty students' clusters")
    resetting.add_argument("names", nargs="*")
    resetting.add_argument("--all", action="store_true", help="every running student")
    args = parser.parse_args(argv)
    try:
        hub = Hub.from_environment()
        if args.command == "students":
            rows = students(hub)
            print(json.dumps(rows, indent=1) if args.json else "\n".join(map(describe, rows)))
            return 0
        if bool(args.names) == args.all:
            parser.error("reset: name students, or --all")
        results = reset(hub, None if args.all else args.names)
    except HubError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for result in results:
        done = "reset" if result["reset"] else f"not reset ({result.get('why', 'no cluster')})"
        print(f"{result['student']:<20} {done}")
    return 0 if all(r["reset"] or r.get("cluster", "") is None for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
