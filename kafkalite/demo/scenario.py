"""What every scenario shares: a clean cluster to start from, writes in the background,
and the ending (the run's timeline and the history checker's verdict).

A scenario is a subclass of :class:`Scenario` that names its ``info`` (from the catalog)
and its ``topics`` (only their partitions are drawn), creates what it needs in
``prepare`` and lists its steps in ``steps``. ``set_up`` runs when the scenario opens and
on R: it stops what the previous run left going, brings every broker back (``Lab.reset``)
and starts a new history, so each scenario starts from the same cluster whatever ran
before it.
"""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Iterable
from typing import Any, ClassVar

import matplotlib.pyplot as plt

from kafkalite.demo import words
from kafkalite.demo.catalog import ScenarioInfo
from kafkalite.demo.steps import Command, Outcome, Step, Stepper
from kafkalite.lab.anomalies import CheckResult
from kafkalite.lab.dashboard.model import DashboardState
from kafkalite.lab.history import History
from kafkalite.lab.lab import Lab
from kafkalite.lab.recording import RecordingProducer

STOP_TIMEOUT_S = 60.0
TIMELINE_DPI = 110
"""The ending's timeline drawn at 110 pixels an inch: its 8- to 12-point labels are 13 to 18
pixels tall on a 1280x720 projector (at 80, in a narrow column, 8 to 11: unreadable from
the back of a room)."""
TIMELINE_FONT_PT = 12
"""matplotlib's 10 points for a notebook, 12 for a projector (the timeline's labels are
sized relative to it)."""
TIMELINE_SIZE_PX = (800, 400)
"""The presenter's dashboard column (1280 pixels less the side column), whose place the
timeline takes at the end: drawn that size, not shrunk to it, so its labels keep theirs."""


class BackgroundWrites:
    """``Lab.write_while`` on a thread of its own, from one step until a later one stops
    it: the writes go on while the class watches the fault."""

    def __init__(
        self, lab: Lab, producer: RecordingProducer, topic: str, rate: float, prefix: str
    ) -> None:
        self.sent = 0
        self._stop = threading.Event()

        def write() -> None:
            self.sent = lab.write_while(
                producer, topic, 0, during=self._stop.wait, rate=rate, prefix=prefix
            )

        self._thread = threading.Thread(target=write, name=f"demo-writes-{topic}", daemon=True)
        self._thread.start()

    def stop(self) -> int:
        """Stop sending, wait for the answers (``write_while`` flushes), return how many
        were sent."""
        self._stop.set()
        self._thread.join(STOP_TIMEOUT_S)
        return self.sent


class Scenario:
    info: ClassVar[ScenarioInfo]
    topics: ClassVar[frozenset[str]]

    def __init__(self, lab: Lab) -> None:
        self.lab = lab
        self.history = History()
        self.started_at = time.time()
        self._writes: list[BackgroundWrites] = []

    # ---- what a scenario defines -------------------------------------------------------

    def prepare(self) -> None:
        """Create the scenario's topics and write what the class sees at the start."""

    def steps(self) -> list[Step]:
        raise NotImplementedError

    def words(self, state: DashboardState) -> list[str]:
        """The state that matters now, in words (default: the partitions on screen)."""
        return words.partitions(state)

    # ---- shared ------------------------------------------------------------------------

    def set_up(self) -> None:
        self.close()
        self.lab.reset()
        self.started_at = time.time()
        self.history = self.lab.new_history()
        self.prepare()

    def events(self, kind: str, topic: str | None = None) -> list[dict[str, Any]]:
        """The brokers' events of ``kind`` (about ``topic``) since this run was set up:
        earlier runs of the scenario used the same topic names."""
        since_ms = self.started_at * 1000
        return [
            e
            for e in self.lab.cluster.events()
            if e["type"] == kind
            and e["time_ms"] >= since_ms
            and not e.get("replay")
            and (topic is None or e.get("topic") == topic)
        ]

    def carry_out(self, stepper: Stepper, command: Command) -> None:
        """Run what ``stepper`` asked for on the cluster and report back to it; an error is
        reported in one line, never raised (the presenter must stay alive)."""
        try:
            if command.set_up:
                self.set_up()
                stepper.finished()
                return
            assert command.step is not None
            action = stepper.steps[command.step].run
            assert action is not None, "a question runs nothing"
            stepper.finished(action())
        except Exception as error:  # shown on screen; R starts the scenario again
            stepper.failed(f"{type(error).__name__}: {error}")

    def close(self) -> None:
        """Stop what this run left going (writes, processes); the cluster stays as it is."""
        for writes in self._writes:
            writes.stop()
        self._writes.clear()

    def write_in_background(
        self, producer: RecordingProducer, topic: str, rate: float = 20, prefix: str = "msg"
    ) -> BackgroundWrites:
        writes = BackgroundWrites(self.lab, producer, topic, rate, prefix)
        self._writes.append(writes)
        return writes

    def verdict(
        self,
        result: CheckResult,
        title: str,
        history: History | None = None,
        text: str = "",
        facts: Iterable[tuple[str, str]] = (),
        kills: Iterable[tuple[float, str]] = (),
    ) -> Outcome:
        """The ending: the run's timeline (writes, errors, faults, elections) and what the
        history checker found. ``kills``: (``time.time()``, what) of processes the scenario
        killed that are no broker (a consumer, a Spark driver), marked on the timeline as
        the cluster's own faults are."""
        png = io.BytesIO()
        chosen = history or self.history
        with plt.rc_context({"font.size": TIMELINE_FONT_PT}):
            figure = self.lab.timeline(chosen, title)
            first = (chosen.span or (0.0, 0.0))[0]  # the timeline's zero
            for at, what in kills:
                for axis in figure.axes:
                    axis.axvline(at - first, color="tab:red", linestyle=":", linewidth=1.5)
                figure.axes[0].annotate(
                    f"{what} ", (at - first, 0.3), xycoords=("data", "axes fraction"),
                    ha="right", color="tab:red", fontsize="small",
                )  # fmt: skip
            figure.set_size_inches(
                TIMELINE_SIZE_PX[0] / TIMELINE_DPI, TIMELINE_SIZE_PX[1] / TIMELINE_DPI
            )
            figure.savefig(png, format="png", dpi=TIMELINE_DPI, bbox_inches="tight")
        plt.close(figure)
        return Outcome(
            text=text,
            figure_png=png.getvalue(),
            verdict=result.verdict(),
            valid=result.valid,
            facts=(
                *facts,
                *((name.replace(" ", "-"), str(n)) for name, n in result.counts.items()),
            ),
        )
