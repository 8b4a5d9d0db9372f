"""What each recorded scenario (``scenarios.py``) must show on the dashboard: checked on
the stored recordings (``tests/unit/lab/dashboard/``) and on fresh ones from a live
cluster (``test_scenarios_live.py``), so the stored ones cannot drift from the broker."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafkalite.lab.dashboard.model import TRUNCATION_VISIBLE_MS, DashboardModel, DashboardState
from kafkalite.lab.dashboard.render import render_html
from kafkalite.lab.dashboard.strips import CellKind

Step = dict[str, Any]


def replay(steps: list[Step]) -> tuple[DashboardModel, list[DashboardState], list[Step]]:
    model = DashboardModel()
    states = [model.update(s["status"], s["events"], s["time_ms"]) for s in steps]
    return model, states, steps


def kinds(state: DashboardState, broker: int) -> list[str]:
    row = next(r for r in state.partition("orders", 0).replicas if r.broker == broker)
    return [str(c.kind) for c in row.cells]


def killed_leader_a_new_leader_and_epoch_the_dead_log_still_in_view(steps: list[Step]) -> None:
    _, (before, after), _ = replay(steps)
    p0 = before.partition("orders", 0)
    old = p0.leader
    assert old is not None and p0.high_watermark == 12
    assert all(kinds(before, b) == ["committed"] * 12 for b in (1, 2, 3))
    assert before.broker(old).leads == 1

    p1 = after.partition("orders", 0)
    assert p1.leader not in (None, old)
    assert p1.leader_epoch == p0.leader_epoch + 1
    assert old not in p1.isr
    dead = after.broker(old)
    assert (dead.state, dead.verbs, dead.leads) == ("dead", ("start",), 0)
    assert after.broker(p1.leader).leads == 1  # type: ignore[arg-type]
    row = next(r for r in p1.replicas if r.broker == old)
    # the dead broker no longer answers: its last reported log, greyed, out of the ISR
    assert row.last_seen and not row.in_isr and row.log_end_offset == 12
    assert len(row.cells) == 12
    texts = [i.text for i in after.feed]
    assert any(f"broker {p1.leader} is leader, epoch {p1.leader_epoch}" in t for t in texts)
    assert any(f"ISR shrank, [{old}] out" in t for t in texts)


def paused_follower_leaves_the_isr_and_rejoins_after_resume(steps: list[Step]) -> None:
    _, (written, paused, resumed), _ = replay(steps)
    assert all(kinds(written, b) == ["committed"] * 5 for b in (1, 2, 3))
    follower = next(b for b in paused.brokers if b.state == "paused")
    assert follower.verbs == ("resume", "kill")
    p = paused.partition("orders", 0)
    assert follower.id not in p.isr
    row = next(r for r in p.replicas if r.broker == follower.id)
    assert row.last_seen and not row.in_isr
    assert any("ISR shrank" in i.text for i in paused.feed)

    assert resumed.broker(follower.id).verbs == (
        "kill",
        "stop",
        "pause",
        "isolate",
        "partial_partition",
    )
    p = resumed.partition("orders", 0)
    assert follower.id in p.isr
    assert all(kinds(resumed, b) == ["committed"] * 10 for b in (1, 2, 3))
    # the newest ISR event is the expansion; quorum events may follow it (when the paused
    # follower was the controller, it resigns once resumed)
    newest_isr = next(i for i in resumed.feed if i.category == "isr")
    assert "ISR expanded" in newest_isr.text


def isolated_leader_acks_1_writes_are_uncommitted_then_truncated(steps: list[Step]) -> None:
    model, (isolated, healed), steps = replay(steps)
    old = next(b for b in isolated.brokers if b.state == "isolated")
    assert old.verbs == ("kill", "stop", "pause", "heal")
    p = isolated.partition("orders", 0)
    assert p.leader != old.id and p.high_watermark == 9  # 6 before + 3 after the election
    row = next(r for r in p.replicas if r.broker == old.id)
    # it still believes it leads in the old epoch; its 4 acks=1 writes were never committed
    assert row.leader_epoch is not None and row.leader_epoch < p.leader_epoch
    assert kinds(isolated, old.id) == ["committed"] * 6 + ["uncommitted"] * 4
    assert kinds(isolated, p.leader) == ["committed"] * 9  # type: ignore[arg-type]

    # on heal it truncated offsets 6..9: 6..8 hold the new leader's records now (replaced),
    # 9 is gone and stays drawn, struck through
    cells = next(r for r in healed.partition("orders", 0).replicas if r.broker == old.id).cells
    assert [(c.offset, c.kind, c.replaced) for c in cells[6:]] == [
        (6, CellKind.COMMITTED, True),
        (7, CellKind.COMMITTED, True),
        (8, CellKind.COMMITTED, True),
        (9, CellKind.TRUNCATED, False),
    ]
    assert any(f"broker {old.id} truncated offsets 6..9 (4 records)" in i.text for i in healed.feed)
    # "for a while": the same snapshot a minute later shows the log as it is
    later = model.update(steps[-1]["status"], [], steps[-1]["time_ms"] + TRUNCATION_VISIBLE_MS)
    cells = next(r for r in later.partition("orders", 0).replicas if r.broker == old.id).cells
    assert [c.kind for c in cells] == [CellKind.COMMITTED] * 9
    assert not any(c.replaced for c in cells)


def transactions_aborted_open_and_then_committed(steps: list[Step]) -> None:
    """A committed transaction (offsets 0-2, its marker at 3), an aborted one (4-6, marker
    7) and one left open (8-10): the LSO waits at 8 while the HW is at 11."""
    _, (open_, ended), _ = replay(steps)
    p = open_.partition("orders", 0)
    assert (p.high_watermark, p.last_stable_offset) == (11, 8)
    assert kinds(open_, p.leader) == (  # type: ignore[arg-type]
        ["committed"] * 4 + ["aborted"] * 4 + ["open_txn"] * 3
    )
    assert [t["state"] for t in open_.transactions] == ["Ongoing"]
    html = render_html(open_)
    assert 'data-marker="LSO" data-offset="8"' in html
    assert "open transaction of producer 0 from 8" in html
    texts = [i.text for i in open_.feed if i.category == "txn"]
    assert any("transaction dashboard-tx aborted" in t for t in texts)
    assert any("transaction dashboard-tx committed" in t for t in texts)

    p = ended.partition("orders", 0)
    assert (p.high_watermark, p.last_stable_offset) == (12, 12)
    assert kinds(ended, p.leader) == (  # type: ignore[arg-type]
        ["committed"] * 4 + ["aborted"] * 4 + ["committed"] * 4
    )


EXPECTATIONS: dict[str, Callable[[list[Step]], None]] = {
    "kill_leader": killed_leader_a_new_leader_and_epoch_the_dead_log_still_in_view,
    "pause_follower": paused_follower_leaves_the_isr_and_rejoins_after_resume,
    "isolated_leader_truncation": isolated_leader_acks_1_writes_are_uncommitted_then_truncated,
    "transactions": transactions_aborted_open_and_then_committed,
}
