"""Crash points come from a run's durable steps, are named as the student wrote them, and a
search tries all of them or a seeded, replayable sample; the gate kills at the point."""

from __future__ import annotations

import pytest

from grader.crash_points import Coverage, CrashPoint, Step, ordinal, points_of, search_order
from grader.gate import StepGate

pytestmark = [pytest.mark.grader, pytest.mark.unit]

HEARD = "before your program heard back"
RUN = [
    Step("sink.append()", "b'payment-0'"),
    Step("consumer.commit()", "offset 5 of p partition 0", HEARD),
    Step("sink.append()", "b'payment-5'"),
    Step("consumer.commit()", "offset 10 of p partition 0", HEARD),
]


def test_each_step_gives_a_point_before_it_and_after_it_where_that_differs() -> None:
    points = points_of(RUN)
    assert [p.describe() for p in points] == [
        "killed right before your 1st sink.append() (b'payment-0')",
        "killed right before your 1st consumer.commit() (offset 5 of p partition 0)",
        "killed right after your 1st consumer.commit() (offset 5 of p partition 0), " + HEARD,
        "killed right before your 2nd sink.append() (b'payment-5')",
        "killed right before your 2nd consumer.commit() (offset 10 of p partition 0)",
        "killed right after your 2nd consumer.commit() (offset 10 of p partition 0), " + HEARD,
    ]
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th",
    ]  # fmt: skip


def test_a_search_tries_every_point_in_order_or_a_seeded_sample_of_every_kind() -> None:
    points = [CrashPoint("sink.append()", n) for n in range(1, 31)]
    points += [
        CrashPoint("consumer.commit()", n, after=after) for n in (1, 2) for after in ("", HEARD)
    ]
    assert search_order(points, seed=1, limit=None) == points
    assert search_order(points, seed=1, limit=40) == points
    sample = search_order(points, seed=1, limit=5)
    assert len(sample) == 5 and len(set(sample)) == 5
    kinds = {(p.label, bool(p.after)) for p in sample[:3]}
    assert kinds == {
        ("sink.append()", False),
        ("consumer.commit()", False),
        ("consumer.commit()", True),
    }
    assert sample == search_order(points, seed=1, limit=5)  # the seed replays it
    assert sample != search_order(points, seed=2, limit=5)


def test_a_short_search_asks_right_after_a_commit_first_whatever_the_seed() -> None:
    """Lab 09's Spark trials are few (2): which two kinds a seed drew decided whether a
    restart that forgot its checkpoint was caught, only right after a transaction's end."""
    steps = [Step("transactional write", f"{n} records", HEARD) for n in range(1, 6)]
    steps.append(Step("producer.send_offsets_to_transaction() (sending the offsets)", "", HEARD))
    steps.append(Step("producer.commit_transaction()", "", HEARD))
    points = points_of(steps * 3)
    for seed in range(20):
        first = search_order(points, seed=seed, limit=2)[0]
        assert (first.label, bool(first.after)) == ("producer.commit_transaction()", True)


def test_the_gate_kills_at_the_point_and_refuses_everything_after() -> None:
    gate, kills = StepGate(), []
    point = points_of(RUN)[2]  # right after the 1st commit
    gate.open_run(point, lambda: kills.append("kill"))
    assert gate.before(RUN[0]).go
    passage = gate.before(RUN[1])
    assert passage.go and passage.is_point and kills == []
    assert gate.after(passage) is False and kills == ["kill"]
    assert not gate.before(RUN[2]).go  # the dying instance's later steps never land
    record = gate.close_run()
    assert record.killed_at == point and record.steps == RUN[:2]
    assert gate.before(RUN[3]).go  # no run open: a plain call passes unwatched


def test_a_point_before_a_step_stops_the_step() -> None:
    gate, kills = StepGate(), []
    gate.open_run(CrashPoint("sink.append()", 2), lambda: kills.append("kill"))
    assert gate.before(RUN[0]).go and gate.before(RUN[1]).go
    assert not gate.before(RUN[2]).go and kills == ["kill"]


def test_a_search_that_killed_the_run_somewhere_judged_a_crash_and_says_how_much() -> None:
    full = Coverage(points=9, reached=9)
    assert full.unjudged() is None
    assert full.summary() == "crash points reached: 9 of 9 (all of them tried)"
    partial = Coverage(points=28, reached=1, not_reached=5, seed=7, sampled=True)
    assert partial.unjudged() is None  # one crash judged: the case's checks decide
    assert partial.summary() == (
        "crash points reached: 1 of 28 (a seeded sample, seed 7; 5 never reached: the "
        "rerun went another way; 22 not tried)"
    )


def test_a_search_that_killed_the_run_nowhere_cannot_pass_and_says_why() -> None:
    missed = "killed right before your 1st rename of a file (a.tmp → a.json) (never reached)"
    rerun_differs = Coverage(points=6, reached=0, not_reached=6, example=missed)
    assert rerun_differs.unjudged() == (
        "no crash could be tried: your code was rerun 6 times on the same input to be "
        "killed at one of the durable steps of its first run, and never took that step "
        f"again ({missed}); a run whose durable steps change from one run to the next "
        "cannot be checked against a crash"
    )
    nothing_durable = Coverage(points=0, reached=0)
    reason = nothing_durable.unjudged()
    assert reason is not None and "took no durable step the grader can see" in reason
    assert nothing_durable.summary() == "crash points reached: 0 of 0 (all of them tried)"
    out_of_time = Coverage(points=4, reached=0, sampled=True)
    reason = out_of_time.unjudged()
    assert reason is not None and "the grader's fault, not yours" in reason
