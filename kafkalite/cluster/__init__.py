"""The lab supervisor: run brokers, inject faults, and see the whole cluster at once.

Brokers are separate processes (or, later, containers): nothing here imports the broker.

The names below are loaded on first use, not when the package is: the link-proxy daemon
(``kafkalite.cluster.link_proxies``, one per running cluster) lives in this package but
needs none of the supervisor, and importing it (HTTP client, psutil, ...) made the daemon
6 MiB larger.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kafkalite.cluster.backend import BrokerState, ClusterBackend
    from kafkalite.cluster.spec import ClusterError
    from kafkalite.cluster.supervisor import Cluster

__all__ = ["BrokerState", "Cluster", "ClusterBackend", "ClusterError"]

_MODULES = {
    "BrokerState": "kafkalite.cluster.backend",
    "ClusterBackend": "kafkalite.cluster.backend",
    "ClusterError": "kafkalite.cluster.spec",
    "Cluster": "kafkalite.cluster.supervisor",
}


def __getattr__(name: str) -> Any:
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_MODULES[name]), name)
