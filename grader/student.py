"""``student``: a test's only way to the submission, in the grader's process.

A test function runs in the grader; the student's code runs in the sandbox
(``grader.sandbox_session``). Between them only data crosses, and this class is where it
is read: what a call returned is decoded by ``grader.wire`` (plain values only), what it
raised becomes a :class:`StudentError` whose message is the case's feedback, in the
student's terms. A test asserts on the values, and checks whatever they claim against
the grading cluster's real state.

- ``student.call("name", *args)``: the student's function, in a fresh process, with
  JSON-able arguments; returns its (JSON-able) return value.
- ``student.run(driver, **kwargs)``: a driver (``grader.drivers``) in a fresh process.
- ``student.crash_search(driver, prepare=..., **kwargs)``: the driver run uncrashed, then
  killed at each of its durable steps and restarted (``grader.crash_search``).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from grader import drivers, feedback, wire
from grader.crash_points import Coverage
from grader.extract import Extracted
from grader.sandbox_session import RunDir, RunResult, Session


class StudentError(AssertionError):
    """What went wrong on the student's side: a failed case's feedback, first line first."""


@dataclass(frozen=True, slots=True)
class SearchOptions:
    """How hard a crash search looks: every point (``limit`` None and no time budget), or
    a seeded sample bounded in trials and seconds."""

    seed: int = 0
    limit: int | None = None
    budget_s: float | None = None


@dataclass(slots=True)
class Student:
    session: Session
    extracted: Extracted
    time_s: float
    search: SearchOptions = field(default_factory=SearchOptions)
    searches: list[Coverage] = field(default_factory=list)
    """What each crash search this case ran judged (for the verdict and the feedback)."""

    def defines(self, name: str) -> bool:
        return name in self.session.defined

    def call(self, name: str, *args: Any, hint: str = "", **kwargs: Any) -> Any:
        """``name(*args, **kwargs)`` in the sandbox; its return value, decoded."""
        shown = _shown_call(name, args, kwargs)
        self._loaded(name, shown)
        request = {"kind": "call", "name": name, "args": wire.encode(list(args)),
                   "kwargs": wire.encode(kwargs)}  # fmt: skip
        result = self.session.run(request, self.session.new_dir(), self.time_s)
        return self.returned(shown, result, hint)

    def run(self, driver: Callable[..., Any], hint: str = "", **kwargs: Any) -> Any:
        """``driver(**kwargs)`` in the sandbox (its other parameters resolved by name)."""
        rundir = self.session.new_dir()
        try:
            return self.returned(self._describe(driver), self.start(driver, rundir, kwargs), hint)
        finally:
            rundir.close()

    def start(
        self,
        driver: Callable[..., Any],
        rundir: RunDir,
        kwargs: dict[str, Any],
        watched: bool = False,
    ) -> RunResult:
        """One run of ``driver`` in ``rundir`` (the crash search's building block)."""
        self._loaded(None, self._describe(driver))
        name, source = drivers.source_of(driver)
        request = {"kind": "driver", "name": name, "source": source, "args": [],
                   "kwargs": wire.encode(kwargs)}  # fmt: skip
        return self.session.run(request, rundir, self.time_s, watched=watched)

    def once(self, driver: Callable[..., Any], hint: str = "", **kwargs: Any) -> Any:
        """``driver(**kwargs)`` once, uncrashed: an ``Outcome`` (what it returned, what it
        appended to its sinks, the files it left) for the test to judge."""
        from grader.crash_search import once  # noqa: PLC0415  (it imports this module)

        return once(self, driver, kwargs, hint)

    def crash_search(
        self,
        driver: Callable[..., Any],
        prepare: Callable[[int], dict[str, Any]] | None = None,
        hint: str = "",
        limit: int | None = None,
        **kwargs: Any,
    ) -> Any:
        """Run ``driver`` uncrashed, then kill it at each durable step and restart it
        (see ``grader.crash_search``); ``prepare(trial)`` gives each trial's own
        arguments (a fresh group, a fresh output topic). ``limit``: at most this many
        points whatever the grading's options say (a trial that starts Spark costs two
        JVM starts); ``--all-crash-points`` lifts it too."""
        from grader.crash_search import search  # noqa: PLC0415  (it imports this module)

        options = self.search
        if limit is not None and options.limit is not None:
            options = dataclasses.replace(options, limit=min(limit, options.limit))
        found = search(self, driver, prepare, kwargs, hint, options)
        self.searches.append(found.coverage)
        return found

    def _describe(self, driver: Callable[..., Any]) -> str:
        doc = (getattr(driver, "__doc__", None) or "").strip().splitlines()
        return doc[0].rstrip(".") if doc else f"the grader's {getattr(driver, '__name__', 'run')}"

    def _loaded(self, name: str | None, shown: str) -> None:
        if self.session.load_error is not None:
            raise StudentError(f"your code raised {self.session.load_error}")
        if name is not None and name not in self.session.defined:
            raise StudentError(feedback.missing(name, self.extracted))

    def returned(self, shown: str, result: RunResult, hint: str = "") -> Any:
        """The value a run returned, or the StudentError that says why there is none."""
        if result.timed_out:
            raise StudentError(
                feedback.timed_out(shown, self.time_s, result.stack, self.extracted, hint)
                + _printed(result.output)
            )
        if result.flooded:
            raise StudentError(f"{shown} was stopped: it printed more output than the limit allows")
        if result.stray_files:
            shown_files = ", ".join(result.stray_files[:3])
            raise StudentError(
                f"{shown} wrote outside its directory ({shown_files}); only its own directory "
                "is allowed"
            )
        data = result.data
        if isinstance(data, dict) and len(data) == 1:
            ((kind, body),) = data.items()
            if kind == "returned":
                try:
                    return wire.decode(body)
                except wire.WireError as exc:
                    message = f"{shown} returned a value the grader cannot read: {exc}"
                    raise StudentError(message) from None
            if kind == "raised" and isinstance(body, dict):
                raise StudentError(
                    feedback.raised(shown, body, self.extracted) + _printed(result.output)
                )
            if kind == "missing" and isinstance(body, str):
                raise StudentError(feedback.missing(body, self.extracted, used_by=shown))
        status = "" if result.status is None else f" (exit status {result.status})"
        raise StudentError(f"{shown} ended without an answer{status}" + _printed(result.output))


def _printed(output: str) -> str:
    text = output.strip()
    if not text:
        return ""
    lines = text.splitlines()[-15:]
    return "\nits last output:\n" + "\n".join(f"  {line}" for line in lines)


def _shown_call(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    parts = [_shown_value(a) for a in args] + [f"{k}={_shown_value(v)}" for k, v in kwargs.items()]
    return f"{name}({', '.join(parts)})"


def _shown_value(value: Any) -> str:
    kind = type(value).__name__
    if kind == "DataFrame":
        return f"<a table of {len(value)} rows>"
    if kind == "History":
        return f"<a history of {len(value)} ops>"
    text = ""
    with contextlib.suppress(Exception):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
