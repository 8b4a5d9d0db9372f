"""The presenter app: a scenario's steps, the live cluster, and the keys that drive them.

What a projector shows at 1280x720: across the top, the scenario picker and the keys, the
step's sentence (or the question to the class, on yellow) and what the step did, read off
the cluster (at the end, the checker's verdict); below, side by side, the dashboard of the
scenario's partitions only, scaled up (the brokers' cards and the offset strips), and a
column with the state that matters in words and the dashboard's event feed and consumer
groups. At the end the run's timeline takes the dashboard's place, drawn at its width:
stacked under the strips it went below the bottom edge, and in the side column its
labels were too small to read from the back of a room.

The state lives in a :class:`~kafkalite.demo.steps.Stepper`; this module only turns keys
into its commands, carries them out on a worker thread (so the page stays live while a
broker is killed and a leader elected) and draws. The page's ``.kl-demo-state`` element
carries the stepper's state as ``data-*`` attributes, for a browser test.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from html import escape

import ipywidgets as w

from kafkalite.demo import words
from kafkalite.demo.catalog import SCENARIOS, ScenarioInfo, scenario_info
from kafkalite.demo.keys import KeyListener
from kafkalite.demo.scenario import Scenario
from kafkalite.demo.scenarios import scenario_class
from kafkalite.demo.steps import Command, Key, Outcome, Phase, Stepper
from kafkalite.lab.dashboard import Dashboard, DashboardModel, DashboardState
from kafkalite.lab.dashboard.feed import Feed
from kafkalite.lab.lab import Lab

SCALE = 1.3
"""The dashboard's cards, strips and feed on a projector: 1.3 times a laptop's (CSS
``zoom``, so the pixel sizes the dashboard's renderer writes inline grow with it)."""
WINDOW_CELLS = 18
"""Offsets drawn per partition: the newest 18 fit the left column at ``SCALE``."""
SIDE_PX = 430
"""The side column: the words, the feed and the groups."""
NARROW_SIDE_PX = 330
"""On a narrower screen (a 1024x768 projector) the side column narrows and the dashboard
is drawn at a laptop's size: at ``SCALE`` its strips' newest offsets were cut off. The
projector's picture is as wide as ever, so its cells are no smaller to the class."""

# The demo ends at the screen's bottom (a projector cannot scroll): when the heading and the
# outcome take two lines each, the words above the feed give way (they scroll), not the
# feed and the groups below them (CI 2026-11-30: a four-click outcome pushed them 1 px off).
STYLE = f"""<style>
body, .jp-Notebook, .jp-Cell, .jp-OutputArea-output {{ margin: 0 !important;
  padding: 0 !important; }}
.kl-demo {{ font-family: "DejaVu Sans", Arial, sans-serif; padding: 6px 14px; color: #111;
  max-width: 1280px; box-sizing: border-box; max-height: 100vh; }}
.kl-demo-bar {{ align-items: center; }}
.kl-demo-bar .widget-button {{ font-size: 16px; height: 34px; }}
.kl-demo-bar select {{ font-size: 16px; height: 34px; }}
.kl-demo-head {{ font-size: 16px; color: #444; margin-left: 12px; }}
.kl-demo-say {{ font-size: 27px; line-height: 1.25; font-weight: 600; margin: 6px 0 2px; }}
.kl-demo-say.kl-question {{ background: #fff3cd; border-left: 10px solid #f9a825;
  padding: 4px 12px; }}
.kl-demo-say .kl-ask {{ display: block; font-size: 17px; font-weight: 700; color: #8d6e00; }}
.kl-demo-outcome {{ font-size: 20px; line-height: 1.3; color: #0d47a1; margin: 2px 0; }}
.kl-demo-outcome .kl-verdict {{ font-size: 24px; font-weight: 700; }}
.kl-demo-outcome .kl-verdict.kl-valid {{ color: #1b5e20; }}
.kl-demo-outcome .kl-verdict.kl-anomaly {{ color: #b71c1c; }}
.kl-demo-outcome .kl-error {{ color: #b71c1c; }}
.kl-demo-main {{ gap: 12px; border-top: 1px solid #ccc; padding-top: 4px;
  flex: 1 1 auto; min-height: 0; }}
.kl-demo-left {{ flex: 1 1 auto; min-width: 0; }}
.kl-demo-side {{ flex: 0 0 {SIDE_PX}px; width: {SIDE_PX}px; min-height: 0; }}
.kl-demo-left img {{ max-width: 100%; }}
.kl-demo-words {{ font-size: 17px; line-height: 1.3; color: #222; max-height: 44vh;
  overflow-y: auto; flex: 0 1 auto; min-height: 0; }}
.kl-demo-side .kl-panels {{ flex: 0 0 auto; }}
.kl-demo-words p {{ margin: 0 0 4px; }}
.kl-demo-picture, .kl-demo .kl-panels {{ zoom: {SCALE:g}; }}
@media (max-width: 1200px) {{
  .kl-demo-side {{ flex-basis: {NARROW_SIDE_PX}px; width: {NARROW_SIDE_PX}px; }}
  .kl-demo-picture, .kl-demo .kl-panels {{ zoom: 1; }}
}}
.kl-demo .kl-feed {{ max-height: 90px !important; }}
.kl-demo .kl-card .widget-hbox {{ display: none !important; }}
.kl-demo-table {{ font-size: 22px; border-collapse: collapse; margin: 6px 0; }}
.kl-demo-table td, .kl-demo-table th {{ border: 1px solid #999; padding: 4px 14px;
  text-align: left; }}
.kl-demo-table th {{ background: #eee; }}
</style>"""
TABLE_HEAD = ("partition", "replica", "role", "its log holds")


class Presenter:
    """``Presenter(lab, "committed")`` opens at a scenario; display ``presenter.widget``."""

    def __init__(self, lab: Lab, first: str | None = None) -> None:
        self.lab = lab
        self._lock = threading.RLock()
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kafkalite-demo")
        self.scenario: Scenario | None = None
        self.stepper: Stepper | None = None
        self.model = DashboardModel(shown_topics=frozenset(), window_cells=WINDOW_CELLS)
        self.dashboard = Dashboard(
            lab.cluster, model=self.model, panels=False, on_state=self._on_state
        )
        self.picker = w.Dropdown(
            options=[(info.title, info.slug) for info in SCENARIOS],
            layout=w.Layout(width="460px"),
        )
        self.picker.add_class("kl-demo-picker")
        buttons = {
            Key.BACK: w.Button(description="◀ back", tooltip="← or PageUp"),
            Key.NEXT: w.Button(description="next ▶", tooltip="→, PageDown or space"),
            Key.RESET: w.Button(description="⟲ reset", tooltip="R: set the scenario up again"),
        }
        for key, button in buttons.items():
            button.add_class(f"kl-demo-{key}")
            button.on_click(lambda _b, k=key: self.press(k))
        self.head = w.HTML()
        self.say = w.HTML()
        self.outcome = w.HTML()
        self.figure = w.Image(format="png", layout=w.Layout(display="none"))
        self.words = w.HTML()
        self.table = w.HTML(layout=w.Layout(display="none"))
        self.picture = w.VBox([w.HBox(list(self.dashboard.cards.values())), self.dashboard.strips])
        for widget, name in (
            (self.say, "say"),
            (self.outcome, "outcome"),
            (self.words, "words"),
            (self.picture, "picture"),
        ):
            widget.add_class(f"kl-demo-{name}")
        self.keys = KeyListener(self.press)
        bar = w.HBox([self.picker, *buttons.values(), self.head])
        bar.add_class("kl-demo-bar")
        left = w.VBox([self.table, self.picture, self.figure])
        side = w.VBox([self.words, self.dashboard.panels])
        main = w.HBox([left, side])
        for widget, name in ((left, "left"), (side, "side"), (main, "main")):
            widget.add_class(f"kl-demo-{name}")
        self.widget = w.VBox([w.HTML(STYLE), self.keys, bar, self.say, self.outcome, main])
        self.widget.add_class("kl-demo")
        self.picker.value = scenario_info(first).slug if first else SCENARIOS[0].slug
        self.open(self.picker.value)
        self.picker.observe(lambda change: self.open(change["new"]), names="value")

    # ---- driving -----------------------------------------------------------------------

    def open(self, slug: str) -> None:
        """Leave the current scenario (what it left running stops) and set up ``slug``."""
        with self._lock:
            if self.stepper is not None and self.stepper.phase in (
                Phase.RUNNING,
                Phase.SETTING_UP,
            ):
                if self.scenario is not None:
                    self.picker.value = self.scenario.info.slug  # one thing at a time
                return
            if self.scenario is not None:
                self._worker.submit(self.scenario.close)
            try:
                self.scenario = scenario_class(slug)(self.lab)
            except ImportError as error:  # pyspark missing, say
                self.scenario, self.stepper = None, None
                self.say.value = escape(f"{scenario_info(slug).title}: cannot open ({error})")
                return
            self.stepper = Stepper(self.scenario.steps())
            self.model.shown_topics = self.scenario.topics
            self.model.feed = Feed()
            self._submit(self.stepper.start())

    def press(self, key: Key) -> None:
        with self._lock:
            if self.stepper is None:
                return
            command = self.stepper.press(key)
            if command is not None:
                self._submit(command)
            else:
                self._draw()

    def _submit(self, command: Command) -> None:
        scenario, stepper = self.scenario, self.stepper
        assert scenario is not None and stepper is not None
        self._draw()

        def carry_out() -> None:
            scenario.carry_out(stepper, command)
            with self._lock:
                if stepper is self.stepper:
                    self._draw()

        self._worker.submit(carry_out)

    def close(self) -> None:
        self.dashboard.close("the presenter closed")
        if self.scenario is not None:
            self._worker.submit(self.scenario.close)
        self._worker.shutdown(wait=True)

    # ---- drawing -----------------------------------------------------------------------

    def _blind(self) -> bool:
        """A question is on screen whose answer the dashboard would give away."""
        stepper = self.stepper
        step = stepper.step if stepper is not None else None
        return (
            stepper is not None and stepper.phase == Phase.READY and step is not None and step.blind
        )

    def _on_state(self, state: DashboardState) -> None:
        scenario = self.scenario
        if scenario is None:
            return
        blind = self._blind()
        table = _table(words.replica_table(state)) if blind else ""
        said = "" if blind else "".join(f"<p>{escape(line)}</p>" for line in scenario.words(state))
        for widget, html in ((self.table, table), (self.words, said)):
            if widget.value != html:
                widget.value = html

    def _draw(self) -> None:
        """Draw the stepper's state. The browser applies the widgets' changes in the order
        they are made, so what leaves the screen goes first (no frame shows the dashboard
        and the closing figure at once, past the projector's edges), then what comes, and
        the state element (``kl-demo-state``: the step and its phase, what a test waits
        for) last: once it says "ready", everything of that step is drawn."""
        stepper, scenario = self.stepper, self.scenario
        if stepper is None or scenario is None:
            return
        info = scenario.info
        step = stepper.step
        say, shown = self._said(stepper, info)
        blind = self._blind()
        visible = {self.picture: not blind and shown.figure_png is None, self.table: blind}
        for widget, on in visible.items():
            if not on:
                widget.layout.display = "none"
        self.say.value = say
        self._show(shown)
        if step is not None and step.question and stepper.phase == Phase.READY:
            self.say.add_class("kl-question")
        else:
            self.say.remove_class("kl-question")
        if stepper.phase == Phase.FAILED:
            self.outcome.value += f'<div class="kl-error">{escape(stepper.error or "")}</div>'
        for widget, on in visible.items():
            if on:
                widget.layout.display = ""
        if self.dashboard.state is not None:
            self._on_state(self.dashboard.state)
        self.head.value = self._state_element(stepper, info.slug)

    @staticmethod
    def _said(stepper: Stepper, info: ScenarioInfo) -> tuple[str, Outcome]:
        """The headline (HTML) and the outcome to show for the stepper's state."""
        step = stepper.step
        if stepper.phase == Phase.SETTING_UP:
            return escape(f"Setting up: {info.title}…"), Outcome(
                "Every broker back, healed and in sync; the topics created."
            )
        if stepper.phase == Phase.RUNNING and stepper.running is not None:
            return escape(stepper.running.say), Outcome("running on the cluster…")
        if step is None:
            return escape(info.title), Outcome(
                f"{info.summary}. ({info.lecture}.) Press → to start."
            )
        ask = '<span class="kl-ask">Ask the class:</span>' if step.question else ""
        return ask + escape(step.say), stepper.outcome or Outcome()

    def _show(self, outcome: Outcome) -> None:
        html = escape(outcome.text)
        if outcome.verdict is not None:
            kind = "kl-valid" if outcome.valid else "kl-anomaly"
            mark = "✔" if outcome.valid else "✘"
            html = (
                f'<div class="kl-verdict {kind}">{mark} checker: {escape(outcome.verdict)}</div>'
                + html
            )
        self.outcome.value = html
        shown = outcome.figure_png is not None
        if outcome.figure_png is not None:
            self.figure.value = outcome.figure_png
        self.figure.layout.display = "" if shown else "none"

    @staticmethod
    def _state_element(stepper: Stepper, slug: str) -> str:
        outcome = stepper.outcome
        facts = "".join(
            f' data-fact-{escape(name)}="{escape(value)}"'
            for name, value in (outcome.facts if outcome else ())
        )
        valid = "" if outcome is None or outcome.valid is None else str(outcome.valid).lower()
        shown = stepper.index + 1
        where = f"step {shown} of {len(stepper.steps)}" if shown else "title"
        if stepper.reviewing:
            where += f" (the cluster is at step {len(stepper.outcomes)})"
        return (
            f'<span class="kl-demo-state" data-scenario="{slug}" data-step="{stepper.index}" '
            f'data-steps="{len(stepper.steps)}" data-phase="{stepper.phase}" '
            f'data-valid="{valid}"{facts}>{escape(where)} · → next · ← back · R reset</span>'
        )


def _table(rows: list[tuple[str, str, str, str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in TABLE_HEAD)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="kl-demo-table"><tr>{head}</tr>{body}</table>'
