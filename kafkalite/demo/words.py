"""The state that matters, named in words, from the dashboard's state (pure).

A projector shows colours to the front rows; the sentence under the picture reaches the
back: "offset 11 is not committed: broker 2 (in the ISR) has not fetched it". Every
sentence here is computed from one ``PartitionView`` (or the brokers' cards), so the words
and the strips above them always agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kafkalite.lab.dashboard.model import BrokerCard, DashboardState, PartitionView, ReplicaRow
from kafkalite.lab.dashboard.strips import CellKind


def span(first: int, last: int) -> str:
    """``offset 7`` or ``offsets 7-9`` (inclusive)."""
    return f"offset {first}" if first == last else f"offsets {first}-{last}"


def brokers(ids: Iterable[int]) -> str:
    """``broker 2`` or ``brokers 1 and 3``."""
    ids = sorted(ids)
    if len(ids) == 1:
        return f"broker {ids[0]}"
    return "brokers " + ", ".join(map(str, ids[:-1])) + f" and {ids[-1]}"


def _runs(offsets: Sequence[int]) -> list[tuple[int, int]]:
    """Consecutive offsets as (first, last) pairs."""
    runs: list[tuple[int, int]] = []
    for offset in sorted(offsets):
        if runs and runs[-1][1] == offset - 1:
            runs[-1] = (runs[-1][0], offset)
        else:
            runs.append((offset, offset))
    return runs


def _leader_row(p: PartitionView) -> ReplicaRow | None:
    return next((r for r in p.replicas if r.is_leader and not r.last_seen), None)


def committed(p: PartitionView) -> list[str]:
    """What is committed and, for what is not, which in-sync replica lacks it."""
    if p.leader is None:
        return [f"{p.name} has no leader: it takes no writes and serves no reads."]
    leader = _leader_row(p)
    hw = p.high_watermark
    if leader is None or hw is None or leader.log_end_offset is None:
        return [f"{p.name}: leader broker {p.leader} (not answering yet)."]
    lines = [
        f"{p.name}: leader broker {p.leader}, ISR {list(p.isr)}, high watermark {hw}: "
        + (f"{span(0, hw - 1)} are committed." if hw > 0 else "nothing is committed yet.")
    ]
    end = leader.log_end_offset
    if end > hw:
        lacking = [
            r.broker
            for r in p.replicas
            if r.in_isr and not r.is_leader and (r.log_end_offset or 0) < end
        ]
        why = (
            f"{brokers(lacking)} (in the ISR) {'has' if len(lacking) == 1 else 'have'} "
            "not fetched " + ("it" if end - hw == 1 else "them")
            if lacking
            else "the followers' next fetch moves the high watermark"
        )
        lines.append(
            f"{span(hw, end - 1)} {'is' if end - hw == 1 else 'are'} not committed: {why}."
        )
    for r in p.replicas:
        if not r.in_isr and r.log_end_offset is not None and not r.last_seen:
            held = span(0, r.log_end_offset - 1) if r.log_end_offset else "nothing"
            lines.append(f"broker {r.broker} is out of the ISR: it has {held}.")
    return lines


def cells_of_kind(p: PartitionView, kind: CellKind) -> list[int]:
    """Offsets drawn as ``kind`` on any replica of the partition."""
    return sorted({c.offset for r in p.replicas for c in r.cells if c.kind == kind})


def transactions(p: PartitionView) -> list[str]:
    """Open and aborted transactions as a read_committed consumer meets them."""
    lines = []
    if p.open_transactions and p.last_stable_offset is not None:
        lines.append(
            f"{p.name}: a transaction is open from offset {p.last_stable_offset}: "
            f"read_committed consumers stop at the last stable offset "
            f"{p.last_stable_offset}, read_uncommitted ones read on to {p.high_watermark}."
        )
    for first, last in _runs(cells_of_kind(p, CellKind.ABORTED)):
        lines.append(
            f"{p.name}: {span(first, last)} belong to an aborted transaction: "
            "read_committed consumers skip them."
        )
    return lines


def truncations(p: PartitionView) -> list[str]:
    lines = []
    for r in p.replicas:
        gone = [c.offset for c in r.cells if c.kind == CellKind.TRUNCATED or c.replaced]
        for first, last in _runs(gone):
            lines.append(
                f"{p.name}: broker {r.broker} truncated {span(first, last)} "
                "to agree with the new leader."
            )
    return lines


def broker_states(cards: Iterable[BrokerCard]) -> str:
    """``broker 1 is dead; broker 2 is the controller`` (running brokers unnamed)."""
    parts = [f"broker {c.id} is {c.state}" for c in cards if c.state != "running"]
    controller = next((c.id for c in cards if c.controller), None)
    parts.append(
        f"broker {controller} is the active controller"
        if controller is not None
        else "no active controller"
    )
    return "; ".join(parts) + "."


def partitions(state: DashboardState) -> list[str]:
    """The default words of a scenario: for each partition on screen, what is committed,
    which transaction hides what, and what a truncation removed."""
    lines = [broker_states(state.brokers)]
    for p in state.partitions:
        lines += committed(p) + transactions(p) + truncations(p)
    return lines


def replica_table(state: DashboardState) -> list[tuple[str, str, str, str]]:
    """The lecture's table of a partition's replicas without what would answer a quiz (no
    high watermark, no colours): (partition, broker, role, what its log holds)."""
    rows = []
    for p in state.partitions:
        for r in p.replicas:
            role = "leader" if r.is_leader else "follower"
            role += ", in the ISR" if r.in_isr else ", out of the ISR"
            end = r.log_end_offset
            held = "?" if end is None else (span(0, end - 1) if end else "nothing")
            rows.append((p.name, f"broker {r.broker}", role, held))
    return rows


def group(state: DashboardState, name: str) -> list[str]:
    """``group dashboards (Stable): c2 reads clicks-0 and clicks-1`` as its coordinator
    describes it; a member that died is named until its session expires."""
    view = next((g for g in state.groups if g.group == name), None)
    if view is None or not view.members:
        return [f"Group {name} has no members."]
    members = "; ".join(
        f"{m.client_id} reads " + (", ".join(f"{t}-{p}" for t, p in m.partitions) or "nothing")
        for m in view.members
    )
    return [f"Group {name} ({view.state}): {members}."]
