"""Where a run can crash: its durable steps, the crash points they make, and which of them
a crash search tries. Pure logic, no processes (``grader.crash_search`` runs the trials).

A *durable step* is one that changes state a crash does not undo: a Kafka request that
writes (a produce, an offset commit, the steps of a transaction), an output file opened
for writing, renamed or removed, a record a driver appends to its output. The grader sees
each one from outside the submission (its Kafka proxy, the file audit hook, the driver's
own output) and names it the way the student wrote it: ``consumer.commit()``,
``producer.commit_transaction()``, ``os.replace(state.tmp → state.json)``.

One uncrashed run lists the steps; each step gives one crash point *right before* it and,
where the moment after differs from the moment before the next step, one *right after* it
(a Kafka request the broker carried out whose answer never reached the program; a file
just emptied by its opening). A point is named by its step's label and occurrence ("the
2nd ``consumer.commit()``"), not by its position in the run: how kafka-python batches
records into requests varies between runs, and the 2nd commit is the 2nd commit whatever
was written before it.

When a run has more points than a search may try, the search tries one point of each kind
of step first (each label, before and after), then the rest in a seeded random order,
until its time is spent; the seed (printed) replays it.

A search judges a crash only where it killed the run at its point (:class:`Coverage`):
a trial whose rerun never came to the point judges an uncrashed run, and a case whose
searches killed nothing has checked no crash at all, so it cannot pass.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Step:
    """One durable step of a run, as the grader saw it."""

    label: str
    """The call, in the student's words (``consumer.commit()``); occurrences count by it."""
    detail: str = ""
    """This occurrence's specifics (``offset 10 of payments[0]``)."""
    after: str = ""
    """What "right after" means, when it is a crash point of its own (``before your
    program heard back``); empty when right after is the same as right before the next."""


@dataclass(frozen=True, slots=True)
class CrashPoint:
    label: str
    occurrence: int
    """1-based, among the run's steps with this label."""
    after: str = ""
    """Empty: killed right before the step; else killed right after it (and this says how)."""
    detail: str = ""

    def describe(self) -> str:
        """The point in the student's terms: "killed right after your 2nd
        consumer.commit() (offset 10 of payments[0]), before your program heard back"."""
        what = f"your {ordinal(self.occurrence)} {self.label}"
        detail = f" ({self.detail})" if self.detail else ""
        if self.after:
            return f"killed right after {what}{detail}, {self.after}"
        return f"killed right before {what}{detail}"


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def points_of(steps: list[Step]) -> list[CrashPoint]:
    """Every crash point of a run whose durable steps were ``steps``, in run order."""
    seen: Counter[str] = Counter()
    points = []
    for step in steps:
        seen[step.label] += 1
        n = seen[step.label]
        points.append(CrashPoint(step.label, n, detail=step.detail))
        if step.after:
            points.append(CrashPoint(step.label, n, after=step.after, detail=step.detail))
    return points


def search_order(points: list[CrashPoint], seed: int, limit: int | None) -> list[CrashPoint]:
    """The points in the order a search tries them: all of them in run order when they fit
    in ``limit`` (None: no limit); else one point of each kind first (a kind: a label,
    before or after; which one is drawn by the seed; the "after" kinds before the
    "before" ones, commits first among them), so that a short search still meets every
    kind of step once, then the others in a seeded shuffle, cut at ``limit``."""
    if limit is None or len(points) <= limit:
        return list(points)
    rng = random.Random(seed)
    shuffled = list(points)
    rng.shuffle(shuffled)
    firsts: dict[tuple[str, bool], CrashPoint] = {}
    for point in shuffled:
        firsts.setdefault((point.label, bool(point.after)), point)
    # the "right after" kinds first: an effect that landed unacknowledged is where most
    # wrong answers show (a write the restart repeats, an offset committed too early); of
    # those, the commits first (a transaction's end, an offset commit): right after one, a
    # restart must know what it had finished, the question exactly-once answers. A short
    # search (lab 09's Spark trials: 2) then always asks it, whatever the seed drew.
    chosen = sorted(firsts.values(), key=lambda point: (not point.after, not _commits(point)))
    rest = [p for p in shuffled if p not in chosen]
    return (chosen + rest)[:limit]


def _commits(point: CrashPoint) -> bool:
    """Whether the point's step commits work: a transaction's end or an offset commit."""
    return "commit" in point.label


@dataclass(frozen=True, slots=True)
class Coverage:
    """What one crash search judged: of the ``points`` the uncrashed run had, how many
    trials killed the run at theirs (``reached``), how many reruns never came to their
    point (``not_reached``: the run went another way, e.g. ``example``), and whether the
    points left (neither) were left by a sample or by the time budget."""

    points: int
    reached: int
    not_reached: int = 0
    seed: int = 0
    sampled: bool = False
    example: str = ""
    """One point a rerun never came to, described (for the feedback)."""

    @property
    def untried(self) -> int:
        return self.points - self.reached - self.not_reached

    def summary(self) -> str:
        """One line for the feedback and the staff's table: "crash points reached: 6 of 9
        (a seeded sample, seed 7; 1 never reached: the rerun went another way; 2 not
        tried)"."""
        how = f"a seeded sample, seed {self.seed}" if self.sampled else "all of them tried"
        parts = [how]
        if self.not_reached:
            parts.append(f"{self.not_reached} never reached: the rerun went another way")
        if self.untried:
            parts.append(f"{self.untried} not tried")
        return f"crash points reached: {self.reached} of {self.points} ({'; '.join(parts)})"

    def unjudged(self) -> str | None:
        """Why no crash was judged (the case cannot pass), in the student's terms; None
        when at least one trial killed the run at its point and judged the restart."""
        if self.reached:
            return None
        if self.points == 0:
            return (
                "no crash could be tried: your code took no durable step the grader can "
                "see (no record produced, no offset committed, no file written from Python), "
                "so what a crash does to it was never checked"
            )
        if self.not_reached:
            return (
                f"no crash could be tried: your code was rerun {self.not_reached} times on "
                "the same input to be killed at one of the durable steps of its first run, "
                f"and never took that step again ({self.example}); a run whose durable "
                "steps change from one run to the next cannot be checked against a crash"
            )
        return (
            "no crash could be tried: the grader ran out of time before its first crash "
            "trial; this is the grader's fault, not yours: tell your instructor"
        )


class PointMatcher:
    """Follows one trial's steps and says when its crash point comes: count each label's
    occurrences as the steps arrive; the point is the step whose label and occurrence it
    names. Thread-safe use is the caller's (the gate serializes steps)."""

    def __init__(self, point: CrashPoint | None) -> None:
        self.point = point
        self._seen: Counter[str] = Counter()

    def arrived(self, step: Step) -> bool:
        """Count ``step``; True when it is the point's step."""
        self._seen[step.label] += 1
        p = self.point
        return p is not None and step.label == p.label and self._seen[step.label] == p.occurrence

    def kill_before(self, is_point: bool) -> bool:
        return is_point and self.point is not None and not self.point.after

    def kill_after(self, is_point: bool) -> bool:
        return is_point and self.point is not None and bool(self.point.after)
