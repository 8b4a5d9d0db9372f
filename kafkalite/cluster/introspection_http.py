"""The supervisor's HTTP client for the brokers' introspection endpoints.

Every call is bounded: a paused broker accepts the connection and answers nothing, so a
caller without a timeout (a dashboard refresh, ``status``) would hang with it.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

HTTP_TIMEOUT_S = 2.0  # a broker busy with a heavy workload still answers


def fetch_json(host: str, port: int, path: str, timeout_s: float = HTTP_TIMEOUT_S) -> Any:
    """GET one introspection path; None when the broker does not answer in time."""
    try:
        with urllib.request.urlopen(f"http://{host}:{port}{path}", timeout=timeout_s) as r:
            return json.loads(r.read())
    except (OSError, urllib.error.URLError, ValueError):
        return None
