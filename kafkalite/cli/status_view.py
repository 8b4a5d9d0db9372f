"""``kafkalite status`` as rich tables: brokers (with how long the active controller has
not heard from each, against the session after which it fences a silent one, how late
each one's loop runs and the delay ``slow`` put on it; ``partial`` when a partial
partition cut its replication links), partitions (every replica's offsets, or why its
broker cannot say; the open transactions that hold the last stable offset back and the
latest aborted ones that read_committed readers skip), the metadata quorum, the
transactions the coordinators know and the consumer groups with members (each member's
epoch and what it reads, and what it is giving up or waiting for in a KIP-848 rebalance),
drawn from one ``Cluster.status()`` snapshot (pure: no I/O)."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Group
from rich.table import Table

ABORTED_SHOWN = 3
"""Aborted transactions shown per partition (the latest; the snapshot holds up to 100)."""


def status_table(status: dict[str, Any]) -> Group:
    """Every table of the snapshot, made to fit an 80-column terminal: offsets are never
    cut (their columns do not wrap), a topic name or a partition's replicas go on to a
    second line instead, and transactions on partitions get a table of their own, drawn
    only when there are some."""
    tables = [brokers_table(status["brokers"]), partitions_table(status["partitions"])]
    with_transactions = [
        p
        for p in status["partitions"]
        if p.get("open_transactions") or p.get("aborted_transactions")
    ]
    if with_transactions:
        tables.append(partition_transactions_table(with_transactions))
    quorum = status.get("quorum")
    if quorum:
        tables.append(quorum_table(quorum))
    if status.get("transactions"):
        tables.append(transactions_table(status["transactions"]))
    with_members = [g for g in status.get("groups") or () if g["members"]]
    if with_members:
        tables.append(groups_table(with_members))
    return Group(*tables)


def brokers_table(brokers: list[dict[str, Any]]) -> Table:
    table = _table("brokers", _session_caption(brokers))
    for column in ("id", "address", "state", "controller", "silent", "loop lag", "slow"):
        table.add_column(column, no_wrap=column != "address")
    for b in brokers:
        table.add_row(
            str(b["id"]),
            b["address"],
            "partial" if b.get("partial_partition") else b["state"],
            "yes" if b["controller"] else "",
            _ms(b.get("silent_ms")),
            _ms(b.get("loop_lag_ms")),
            _ms(b.get("slow_ms")),
        )
    return table


def partitions_table(partitions: list[dict[str, Any]]) -> Table:
    """One row per partition: its leader, leader epoch, ISR, high watermark, last stable
    offset, and each replica's ``broker:LEO/HW``."""
    table = _table("partitions")
    table.add_column("topic", overflow="fold")
    for column in ("p", "leader", "epoch", "isr", "HW", "LSO"):
        table.add_column(column, no_wrap=True, justify="right" if column != "isr" else "left")
    cells = [f"{r['broker']}:{replica_cell(r)}" for p in partitions for r in p["replicas"]]
    table.add_column(
        "replicas  broker:LEO/HW",
        min_width=max(map(len, ["broker:LEO/HW", *cells])),
        overflow="fold",
    )
    for p in partitions:
        table.add_row(
            p["topic"],
            str(p["partition"]),
            _known(p["leader"]),
            str(p["leader_epoch"]),
            ",".join(map(str, p["isr"])),
            _known(p["high_watermark"]),
            _known(p["last_stable_offset"]),
            " ".join(f"{r['broker']}:{replica_cell(r)}" for r in p["replicas"]),
        )
    return table


def partition_transactions_table(partitions: list[dict[str, Any]]) -> Table:
    """The open transactions that hold each partition's LSO back, and the latest aborted
    ones its read_committed readers skip."""
    table = _table("transactions on partitions")
    table.add_column("partition", overflow="fold")
    table.add_column("open  pid.epoch@first")
    table.add_column("aborted  pid@first-last")
    for p in partitions:
        table.add_row(
            f"{p['topic']}-{p['partition']}",
            " ".join(
                f"{t['producer_id']}.{t['producer_epoch']}@{t['first_offset']}"
                for t in p.get("open_transactions", [])
            ),
            aborted_cell(p.get("aborted_transactions") or []),
        )
    return table


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


def _table(title: str, caption: str | None = None) -> Table:
    """A table with a rule under its header and no outer frame: two columns narrower
    than a boxed one, which an 80-column terminal needs."""
    return Table(title=title, caption=caption, box=box.SIMPLE_HEAD, show_edge=False)


def _known(value: object) -> str:
    """A field only a leader knows (the leader itself, its HW, its LSO): ``-`` while the
    partition has none, never ``None``."""
    return "-" if value is None else str(value)


def _ms(value: int | None) -> str:
    return "" if value is None else f"{value} ms"


def quorum_table(quorum: dict[str, Any]) -> Table:
    voters = _table(
        "metadata quorum",
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
    table = _table("transactions (from their coordinators)")
    table.add_column("transactional.id", overflow="fold")
    table.add_column("producer id.epoch", no_wrap=True)
    table.add_column("state", no_wrap=True)
    names = [name for t in transactions for name in t["partitions"]]
    table.add_column("partitions", min_width=max(map(len, ["partitions", *names])))
    table.add_column("coordinator", no_wrap=True)
    table.add_column("timeout", no_wrap=True)
    for t in transactions:
        table.add_row(
            t["transactional_id"],
            f"{t['producer_id']}.{t['producer_epoch']}",
            t["state"],
            " ".join(t["partitions"]),
            str(t.get("coordinator", "")),
            _ms(t["timeout_ms"]),
        )
    return table


def groups_table(groups: list[dict[str, Any]]) -> Table:
    """A row per member: its group's protocol, state and epoch (a classic group's
    generation; a consumer group's group epoch, and its assignment epoch when it lags),
    the member's own epoch and what it reads, and, in a consumer group that is
    rebalancing, what it is giving up and what it waits for."""
    table = _table(
        "consumer groups (from their coordinators)",
        caption="consumer protocol (KIP-848): each member moves to its target at its own "
        "epoch; classic: the whole group at each generation",
    )
    table.add_column("group", overflow="fold")
    for column in ("protocol", "state", "epoch"):
        table.add_column(column, no_wrap=True)
    table.add_column("member", overflow="fold")
    table.add_column("epoch", no_wrap=True, justify="right")
    table.add_column("reads", overflow="fold")
    for g in groups:
        epoch = str(g["epoch"])
        if g.get("assignment_epoch") is not None and g["assignment_epoch"] != g["epoch"]:
            epoch += f" (assigned {g['assignment_epoch']})"
        for i, m in enumerate(sorted(g["members"], key=lambda m: m["client_id"])):
            first = i == 0
            table.add_row(
                g["group"] if first else "",
                g["protocol"] if first else "",
                g["state"] if first else "",
                epoch if first else "",
                m["client_id"]
                + (f" ({m['instance_id']})" if m.get("instance_id") else "")
                + (" · classic" if _classic_in_consumer_group(g, m) else ""),
                str(m["member_epoch"]),
                member_reads(m),
            )
    return table


def _classic_in_consumer_group(group: dict[str, Any], member: dict[str, Any]) -> bool:
    """A classic member of a consumer group (KIP-848's online migration)."""
    return group["protocol"] == "consumer" and member.get("member_protocol") == "classic"


def member_reads(member: dict[str, Any]) -> str:
    """What a member reads, then what it gives up and waits for while it reconciles:
    ``t-0 t-1, giving up t-2, waiting for t-3``."""
    reads = " ".join(member["assigned"]) or "nothing"
    if member.get("revoking"):
        reads += ", giving up " + " ".join(member["revoking"])
    if member.get("waiting"):
        reads += ", waiting for " + " ".join(member["waiting"])
    return reads


def _session_caption(brokers: list[dict[str, Any]]) -> str | None:
    """The rule the silences are judged by, in a line."""
    session = next((b["session_ms"] for b in brokers if b.get("session_ms") is not None), None)
    if session is None:
        return None
    return (
        f"the controller fences a broker silent for {session} ms "
        "(broker.session.timeout.ms); a killed one at once"
    )
