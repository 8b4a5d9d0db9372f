"""A scenario's steps and the state machine a presenter walks them with (pure).

A scenario is a list of :class:`Step`: each says in one sentence what happens next, and
either asks the class a question (no action: the next step shows what happens) or runs an
action on the cluster that returns an :class:`Outcome` (what happened, in words, read off
the live cluster).

:class:`Stepper` is what the keys drive (→ next, ← back, R reset, what a presentation
clicker sends). It never runs anything itself: a key returns the :class:`Command` to carry
out (run step *i*, set the scenario up afresh), and the presenter reports back with
``finished`` or ``failed``. So it is driven directly by unit tests, and the widgets around
it stay thin.

States and transitions (``index`` is the step on screen, -1 the scenario's title card;
``outcomes`` holds the steps already run on the cluster):

    SETTING_UP --finished--> READY (index -1, no outcome)
    READY --next--> READY (review: the next step already ran, index + 1)
    READY --next--> RUNNING (the next step has not run: Command RUN)
    READY --back--> READY (index - 1: its outcome is shown again, the cluster stays)
    RUNNING --finished--> READY (the outcome is kept, index + 1)
    RUNNING --failed--> FAILED (the error is shown; back reviews, reset starts again)
    READY/FAILED --reset--> SETTING_UP (Command SET_UP)
    RUNNING, SETTING_UP: every key is ignored (one thing on the cluster at a time)

Going back does not undo the cluster (a killed broker stays dead): it shows an earlier
step again, and → walks forward through what already ran before running anything new.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a step did, in words read off the live cluster."""

    text: str = ""
    figure_png: bytes | None = None
    """The run's timeline (the verdict step)."""
    verdict: str | None = None
    """The history checker's verdict line (the verdict step)."""
    valid: bool | None = None
    """Whether the checker found no anomaly (None: no verdict)."""
    facts: tuple[tuple[str, str], ...] = ()
    """Named facts the page shows as ``data-*`` attributes (a quiz's answer, say), so a
    browser test can compare them with the cluster."""


@dataclass(frozen=True, slots=True)
class Step:
    say: str
    """One sentence: what happens next (or, for a question, the question)."""
    run: Callable[[], Outcome] | None = None
    """The action on the cluster; None for a question to the class."""
    blind: bool = False
    """A question whose answer the picture would give away (the strips colour committed
    offsets): while it is on screen, a table of the replicas' logs replaces it."""

    @property
    def question(self) -> bool:
        return self.run is None


class Phase(StrEnum):
    SETTING_UP = "setting-up"
    READY = "ready"
    RUNNING = "running"
    FAILED = "failed"


class Key(StrEnum):
    NEXT = "next"
    BACK = "back"
    RESET = "reset"


@dataclass(frozen=True, slots=True)
class Command:
    """What the presenter must carry out: run step ``step``, or set up (``step`` None)."""

    step: int | None

    @property
    def set_up(self) -> bool:
        return self.step is None


SET_UP = Command(None)


class Stepper:
    def __init__(self, steps: Sequence[Step]) -> None:
        if not steps:
            raise ValueError("a scenario has at least one step")
        self.steps = tuple(steps)
        self.index = -1
        self.outcomes: list[Outcome] = []
        self.phase = Phase.SETTING_UP
        self.error: str | None = None
        self._pending: Command | None = SET_UP

    def start(self) -> Command:
        """The command that opens the scenario: set the cluster up for it."""
        self.phase, self._pending = Phase.SETTING_UP, SET_UP
        return SET_UP

    def press(self, key: Key) -> Command | None:
        """Apply a key; returns what to run on the cluster, if anything."""
        if self.phase in (Phase.RUNNING, Phase.SETTING_UP):
            return None
        if key == Key.RESET:
            return self.start()
        if key == Key.BACK:
            self.index = max(-1, self.index - 1)
            return None
        if self.phase == Phase.FAILED:
            return None  # a failed step is not retried on a half-broken cluster: reset
        following = self.index + 1
        if following < len(self.outcomes):
            self.index = following
            return None
        if following >= len(self.steps):
            return None
        if self.steps[following].question:
            self.outcomes.append(Outcome())
            self.index = following
            return None
        self.phase, self._pending = Phase.RUNNING, Command(following)
        return self._pending

    def finished(self, outcome: Outcome | None = None) -> None:
        """The pending command is done (a set-up has no outcome)."""
        done, self._pending = self._pending, None
        if done is None:
            raise RuntimeError("nothing was running")
        self.error = None
        if done.set_up:
            self.outcomes.clear()
            self.index = -1
        else:
            self.outcomes.append(outcome or Outcome())
            self.index = len(self.outcomes) - 1
        self.phase = Phase.READY  # last: a key pressed on another thread waits for it

    def failed(self, error: str) -> None:
        self._pending = None
        self.error = error
        self.phase = Phase.FAILED

    @property
    def step(self) -> Step | None:
        """The step on screen (None on the title card)."""
        return self.steps[self.index] if self.index >= 0 else None

    @property
    def outcome(self) -> Outcome | None:
        return self.outcomes[self.index] if 0 <= self.index < len(self.outcomes) else None

    @property
    def running(self) -> Step | None:
        """The step whose action runs now, if any."""
        pending = self._pending
        if pending is None or pending.step is None:
            return None
        return self.steps[pending.step]

    @property
    def at_end(self) -> bool:
        return self.index == len(self.steps) - 1

    @property
    def reviewing(self) -> bool:
        """An earlier step is on screen: the cluster is further along."""
        return self.index < len(self.outcomes) - 1
