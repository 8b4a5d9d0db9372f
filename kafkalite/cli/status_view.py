"""``kafkalite status`` as rich tables: brokers (with how late each one's loop runs and
the delay ``slow`` put on it), partitions (every replica's offsets, or why its broker cannot
say; the open transactions that hold the last stable offset back and the latest aborted ones
that read_committed readers skip), the metadata quorum and the transactions the
coordinators know, drawn from one ``Cluster.status()`` snapshot (pure: no I/O)."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table

ABORTED_SHOWN = 3
"""Aborted transactions shown per partition (the latest; the snapshot holds up to 100)."""


def status_table(status: dict[str, Any]) -> Group:
    brokers = Table(title="brokers")
    for column in ("id", "address", "state", "controller", "loop lag", "slow"):
        brokers.add_column(column)
    for b in status["brokers"]:
        brokers.add_row(
            str(b["id"]),
            b["address"],
            b["state"],
            "yes" if b["controller"] else "",
            _ms(b.get("loop_lag_ms")),
            _ms(b.get("slow_ms")),
        )
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
        "open txns (pid.epoch@first)",
        "aborted txns (pid@first-last)",
    ):
        partitions.add_column(column)
    for p in status["partitions"]:
        replicas = "  ".join(f"{r['broker']}:{replica_cell(r)}" for r in p["replicas"])
        partitions.add_row(
            p["topic"],
            str(p["partition"]),
            str(p["leader"]),
            str(p["leader_epoch"]),
            ",".join(map(str, p["isr"])),
            str(p["high_watermark"]),
            str(p["last_stable_offset"]),
            replicas,
            " ".join(
                f"{t['producer_id']}.{t['producer_epoch']}@{t['first_offset']}"
                for t in p.get("open_transactions", [])
            ),
            aborted_cell(p.get("aborted_transactions") or []),
        )
    tables = [brokers, partitions]
    quorum = status.get("quorum")
    if quorum:
        tables.append(quorum_table(quorum))
    if status.get("transactions"):
        tables.append(transactions_table(status["transactions"]))
    return Group(*tables)


def replica_cell(replica: dict[str, Any]) -> str:
    """``LEO/HW`` of a replica whose broker answered; otherwise why it could not (its
    broker is dead, stopped, paused) or ``?`` (running, but too busy to answer)."""
    if replica["log_end_offset"] is not None:
        return f"{replica['log_end_offset']}/{replica['high_watermark']}"
    state = replica.get("state")
    return state if state not in (None, "running", "isolated") else "?"


def aborted_cell(aborted: list[dict[str, Any]]) -> str:
    """The latest aborted transactions (oldest of them first), and how many there are when
    that is not all: ``7@2-3 7@6-9 (+12 older)``."""
    shown = " ".join(
        f"{t['producer_id']}@{t['first_offset']}-{t['last_offset']}"
        for t in aborted[-ABORTED_SHOWN:]
    )
    older = len(aborted) - ABORTED_SHOWN
    return f"{shown} (+{older} older)" if older > 0 else shown


def _ms(value: int | None) -> str:
    return "" if value is None else f"{value} ms"


def quorum_table(quorum: dict[str, Any]) -> Table:
    voters = Table(
        title="metadata quorum",
        caption=f"leader {quorum['leader']} · epoch {quorum['epoch']} · "
        f"HW {quorum['high_watermark']}",
    )
    for column in ("voter", "log end offset", "lag"):
        voters.add_column(column)
    for v in quorum["voters"]:
        voters.add_row(str(v["id"]), str(v["log_end_offset"]), str(v["lag"]))
    return voters


def transactions_table(transactions: list[dict[str, Any]]) -> Table:
    """Each transactional id with its coordinator's view: state and partitions."""
    table = Table(title="transactions (from their coordinators)")
    for column in (
        "transactional.id",
        "producer (id.epoch)",
        "state",
        "partitions",
        "coordinator",
        "timeout ms",
    ):
        table.add_column(column)
    for t in transactions:
        table.add_row(
            t["transactional_id"],
            f"{t['producer_id']}.{t['producer_epoch']}",
            t["state"],
            " ".join(t["partitions"]),
            str(t.get("coordinator", "")),
            str(t["timeout_ms"]),
        )
    return table
