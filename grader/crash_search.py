"""A crash at every durable step: run a driver uncrashed, then once per crash point killed
there (SIGKILL, by the grader) and restarted as a second instance, and return what each
trial left behind for the test to judge.

The order of one search:
1. Trial 0 runs the driver with no crash, its steps recorded by the gate (the Kafka
   proxy's requests, the file hook's writes, the driver's sink appends). Its outcome is
   the first one returned ("no crash").
2. Those steps give the crash points (``grader.crash_points``): right before each step,
   and right after the ones where that differs.
3. Each further trial gets its own arguments from ``prepare(trial)`` (a fresh consumer
   group, a fresh output topic) and its own directory; a first instance runs until the
   gate kills it at the trial's point; a second instance then runs in the same directory
   against the same topics to completion, as a restarted service would.
4. A point the first instance never reached (the run went another way this time) is
   recorded as not reached: that trial judged an uncrashed run, not a crash.

How many points are tried is the search's :class:`~grader.student.SearchOptions`: all of
them, or a seeded sample bounded in number and in time. The time budget ends a search only
once it has killed a run at its point: a search that judged no crash leaves its case
unable to pass (``grader.crash_points.Coverage``). The summary line says how many points
were reached, of how many, with the seed, so a sample can be replayed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from grader import wire
from grader.crash_points import Coverage, CrashPoint, points_of, search_order
from grader.sandbox_session import RunDir, RunResult
from grader.session import SINK_PREFIX
from grader.student import SearchOptions, Student, StudentError

NO_CRASH = "with no crash"
NEVER_REACHED = " (never reached: the run went another way)"
OWN_FILES = frozenset({"request.json", "result.json", "result.json.tmp", "output.txt"})
MAX_FILES = 50
MAX_FILE = 4 << 20


@dataclass(slots=True)
class Outcome:
    """One trial: where its first instance was killed, and what was left after the
    second one finished (or, for trial 0, after the only one)."""

    crash_point: str
    killed: bool
    kwargs: dict[str, Any]
    returned: Any = None
    problem: str | None = None
    """Why the last instance gave no answer (its error, in the student's terms)."""
    sinks: dict[str, list[Any]] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    """The files the instances left in the trial's directory (its "disk"), at the end."""
    files_at_crash: dict[str, bytes] = field(default_factory=dict)
    """The same, right after the first instance was killed (before the restart)."""

    def sink(self, name: str = "output") -> list[Any]:
        """What the trial's instances appended to the driver's sink ``name``, in order."""
        return self.sinks.get(name, [])

    def ok(self) -> Any:
        """What the last instance returned; raises its problem as the case's feedback."""
        if self.problem is not None:
            raise StudentError(f"{self.crash_point}: {self.problem}")
        return self.returned


@dataclass(slots=True)
class CrashSearch:
    outcomes: list[Outcome]
    points: int
    seed: int
    sampled: bool

    def __iter__(self) -> Iterator[Outcome]:
        return iter(self.outcomes)

    @property
    def coverage(self) -> Coverage:
        trials = self.outcomes[1:]
        missed = [o.crash_point.removesuffix(NEVER_REACHED) for o in trials if not o.killed]
        reached = len(trials) - len(missed)
        return Coverage(
            self.points, reached, len(missed), self.seed, self.sampled, missed[0] if missed else ""
        )


def once(
    student: Student, driver: Callable[..., Any], kwargs: dict[str, Any], hint: str
) -> Outcome:
    """One uncrashed run of ``driver``, with what it left behind (sinks, files)."""
    rundir = student.session.new_dir()
    return _outcome(
        student, NO_CRASH, False, kwargs, rundir, student.start(driver, rundir, kwargs), hint
    )


def search(
    student: Student,
    driver: Callable[..., Any],
    prepare: Callable[[int], dict[str, Any]] | None,
    kwargs: dict[str, Any],
    hint: str,
    options: SearchOptions,
) -> CrashSearch:
    started = time.monotonic()
    gate = student.session.gate

    def trial_kwargs(trial: int) -> dict[str, Any]:
        return {**kwargs, **(prepare(trial) if prepare is not None else {})}

    first_kwargs = trial_kwargs(0)
    rundir = student.session.new_dir("trial-0")
    gate.open_run(None, student.session.kill_runs)
    result = student.start(driver, rundir, first_kwargs, watched=True)
    record = gate.close_run()
    outcomes = [_outcome(student, NO_CRASH, False, first_kwargs, rundir, result, hint)]
    points = points_of(record.steps)
    order = search_order(points, options.seed, options.limit)
    for trial, point in enumerate(order, start=1):
        spent = options.budget_s is not None and time.monotonic() - started > options.budget_s
        if spent and any(o.killed for o in outcomes):
            break
        outcomes.append(_trial(student, driver, point, trial, trial_kwargs(trial), hint))
    sampled = len(order) < len(points) or len(outcomes) - 1 < len(order)
    return CrashSearch(outcomes, len(points), options.seed, sampled)


def _trial(
    student: Student,
    driver: Callable[..., Any],
    point: CrashPoint,
    trial: int,
    kwargs: dict[str, Any],
    hint: str,
) -> Outcome:
    session, gate = student.session, student.session.gate
    rundir = session.new_dir(f"trial-{trial}")
    gate.open_run(point, session.kill_runs)
    first = student.start(driver, rundir, kwargs, watched=True)
    record = gate.close_run()
    if record.killed_at is None:
        described = point.describe() + NEVER_REACHED
        return _outcome(student, described, False, kwargs, rundir, first, hint)
    at_crash = _files(rundir)
    second = student.start(driver, rundir, kwargs)
    described = f"{point.describe()}, then restarted"
    outcome = _outcome(student, described, True, kwargs, rundir, second, hint)
    outcome.files_at_crash = at_crash
    return outcome


def _outcome(
    student: Student,
    crash_point: str,
    killed: bool,
    kwargs: dict[str, Any],
    rundir: RunDir,
    result: RunResult,
    hint: str,
) -> Outcome:
    outcome = Outcome(crash_point, killed, kwargs, sinks=_sinks(rundir), files=_files(rundir))
    try:
        outcome.returned = student.returned(_what(killed), result, hint)
    except StudentError as error:
        outcome.problem = str(error)
    rundir.close()
    return outcome


def _what(killed: bool) -> str:
    return "the restarted instance" if killed else "your code"


def _files(rundir: RunDir) -> dict[str, bytes]:
    """The regular files a run left in its directory (not the grader's own), each read
    up to a bound."""
    files = {}
    for name in rundir.names()[:MAX_FILES]:
        if name in OWN_FILES or name.startswith(SINK_PREFIX):
            continue
        data = rundir.read(name, MAX_FILE)
        if data is not None:
            files[name] = data
    return files


def _sinks(rundir: RunDir) -> dict[str, list[Any]]:
    """Each sink file of the run's directory, decoded line by line (a line cut short by
    the kill is no value: its append never completed)."""
    sinks: dict[str, list[Any]] = {}
    for entry in rundir.names():
        if not entry.startswith(SINK_PREFIX) or (raw := rundir.read(entry)) is None:
            continue
        values = []
        for line in raw.decode(errors="replace").split("\n"):
            if not line:
                continue
            try:
                values.append(wire.loads(line))
            except wire.WireError:
                continue
        sinks[entry.removeprefix(SINK_PREFIX)] = values
    return sinks
