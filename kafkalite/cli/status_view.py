"""``kafkalite status`` as rich tables: brokers, partitions (every replica's offsets) and
the metadata quorum, drawn from one ``Cluster.status()`` snapshot (pure: no I/O)."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table


def status_table(status: dict[str, Any]) -> Group:
    brokers = Table(title="brokers")
    for column in ("id", "address", "state", "controller"):
        brokers.add_column(column)
    for b in status["brokers"]:
        brokers.add_row(str(b["id"]), b["address"], b["state"], "yes" if b["controller"] else "")
    partitions = Table(title="partitions")
    for column in (
        "topic",
        "partition",
        "leader",
        "epoch",
        "isr",
        "HW",
        "LSO",
        "replicas (LEO/HW)",
    ):
        partitions.add_column(column)
    for p in status["partitions"]:
        replicas = "  ".join(
            f"{r['broker']}:{r['log_end_offset']}/{r['high_watermark']}" for r in p["replicas"]
        )
        partitions.add_row(
            p["topic"],
            str(p["partition"]),
            str(p["leader"]),
            str(p["leader_epoch"]),
            ",".join(map(str, p["isr"])),
            str(p["high_watermark"]),
            str(p["last_stable_offset"]),
            replicas,
        )
    quorum = status.get("quorum")
    if not quorum:
        return Group(brokers, partitions)
    voters = Table(
        title="metadata quorum",
        caption=f"leader {quorum['leader']} · epoch {quorum['epoch']} · "
        f"HW {quorum['high_watermark']}",
    )
    for column in ("voter", "log end offset", "lag"):
        voters.add_column(column)
    for v in quorum["voters"]:
        voters.add_row(str(v["id"]), str(v["log_end_offset"]), str(v["lag"]))
    return Group(brokers, partitions, voters)
