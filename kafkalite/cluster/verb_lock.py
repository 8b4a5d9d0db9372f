"""One verb at a time on a cluster, across every shell that holds it.

A notebook's dashboard, a terminal's ``kafkalite`` and a benchmark each hold the whole
``cluster.json`` in memory and write it whole after a verb. A verb of one shell used to
write back what it held of a broker another shell had just started again: that broker's
new pid was lost, and every shell reading the file afterwards took the running broker for
dead (a dashboard drew no leader for the partitions it led; ``start`` would have started it
a second time). Each verb now takes the cluster's lock file, reads what the other shells
wrote, acts, and writes (``Cluster._verb``).
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path

LOCK_FILE = "cluster.lock"


@contextlib.contextmanager
def cluster_lock(root: Path) -> Iterator[None]:
    """Held by one verb of one shell at a time (threads too: each opens its own file)."""
    try:
        handle = (root / LOCK_FILE).open("a")
    except OSError:  # no cluster folder this shell can write: it writes no cluster.json either
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
