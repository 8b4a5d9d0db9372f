"""What a course's staff sees of one student's cluster, and how they reset it.

A class on JupyterHub runs one 3-broker cluster inside each student's server. The hub's
admin asks every server for :func:`health` (``kafkalite-course students``): how many of
its brokers are up, which are broken now, and the last fault the cluster saw, so a
student stuck behind a broker left dead or paused is found without opening their
notebook. :func:`reset` is the instructor's "start this student again from empty"; the
student's next ``kafkalite.lab.connect()`` starts a new cluster.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from kafkalite.cluster import BrokerState
from kafkalite.cluster.spec import SPEC_FILE
from kafkalite.events import EventType
from kafkalite.lab.connection import attach_cluster

FAULT_EVENTS = (
    EventType.BROKER_FENCED,  # a broker killed, stopped, paused or cut off: it leads nothing
    EventType.UNCLEAN_LEADER_ELECTED,  # committed records may be gone
)
"""The events that tell of a fault, as the cluster itself recorded it: the notebook's own
record of its fault verbs lives in its kernel, which the hub cannot see."""
_UP = (BrokerState.RUNNING, BrokerState.ISOLATED, BrokerState.PAUSED)


def health(root: Path) -> dict[str, Any]:
    """The cluster in ``root`` (a student's ``.kafkalite``): each broker's state, how many
    are up, and the last fault event (None when nothing failed, or no broker answers)."""
    if not (root / SPEC_FILE).exists():
        return {"cluster": None, "brokers": {}, "brokers_up": 0, "last_fault": None}
    cluster = attach_cluster(root)
    states = cluster.broker_states()
    events = cluster.events() if BrokerState.RUNNING in states.values() else []
    faults = [e for e in events if e["type"] in FAULT_EVENTS]
    last = faults[-1] if faults else None
    return {
        "cluster": str(root),
        "brokers": {str(b): s.value for b, s in states.items()},
        "brokers_up": sum(s == BrokerState.RUNNING for s in states.values()),
        "last_fault": None
        if last is None
        else {
            "type": last["type"],
            "broker": last.get("broker_id", last["broker"]),
            "seconds_ago": round(time.time() - last["time_ms"] / 1000, 1),
        },
    }


def reset(root: Path) -> dict[str, Any]:
    """Stop the cluster in ``root`` and delete it (its topics and logs): the next
    ``connect()`` starts an empty one. A folder that holds no cluster is left alone."""
    if not (root / SPEC_FILE).exists():
        return {"reset": False, "cluster": None}
    cluster = attach_cluster(root)
    up = sum(s in _UP for s in cluster.broker_states().values())
    cluster.down()
    shutil.rmtree(root)
    return {"reset": True, "cluster": str(root), "brokers_stopped": up}
