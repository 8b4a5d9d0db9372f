"""A card per broker (ipywidgets): its state, its role, and the fault-verb buttons.

A button only does what makes sense in the broker's state (``model.VERBS_BY_STATE``);
while a verb runs (``stop`` waits for a controlled shutdown) the card's buttons stay
disabled. Each card carries the classes ``kl-card`` and ``kl-card-<id>``, and each button
``kl-verb-<verb>``, so a browser test finds "kill on broker 2".
"""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as w

from kafkalite.lab.dashboard.actions import VERBS
from kafkalite.lab.dashboard.model import BrokerCard
from kafkalite.lab.dashboard.render import render_broker_card

VERB_HELP = {
    "kill": "SIGKILL: a crash, no controlled shutdown",
    "stop": "controlled shutdown: leadership moves away first",
    "start": "start the broker again",
    "pause": "SIGSTOP: a hung broker that answers nothing",
    "resume": "SIGCONT: the paused broker carries on",
    "isolate": "cut it off from its peers and the controller quorum (its clients still reach it)",
    "partial_partition": "partial partition: cut its replication links to every peer; it "
    "still reaches the controller quorum, so as a leader it shrinks its ISR to itself",
    "heal": "undo isolate, partial partition and slow",
}
VERB_LABEL = {"partial_partition": "partial"}
"""A button's text where the verb's name would not fit it."""


class BrokerCardWidget(w.VBox):  # type: ignore[misc]
    def __init__(self, broker_id: int, on_verb: Callable[[str, int], None]) -> None:
        self.broker_id = broker_id
        self.title = w.HTML(f"broker {broker_id}")
        self.buttons = {
            verb: w.Button(
                description=VERB_LABEL.get(verb, verb),
                tooltip=VERB_HELP[verb],
                disabled=True,
                layout=w.Layout(width="60px", height="26px", padding="0", margin="1px"),
            )
            for verb in VERBS
        }
        for verb, button in self.buttons.items():
            button.add_class(f"kl-verb-{verb}")
            button.on_click(lambda _b, v=verb: on_verb(v, broker_id))
        rows = [list(self.buttons.values())[:4], list(self.buttons.values())[4:]]
        super().__init__(
            [self.title, *(w.HBox(r) for r in rows)],
            layout=w.Layout(margin="0 6px 0 0"),
        )
        self.add_class("kl-card")
        self.add_class(f"kl-card-{broker_id}")
        self._shown: tuple[BrokerCard, str | None] | None = None

    def show(self, card: BrokerCard, pending: str | None) -> None:
        """Redraw only on change: each widget update is a message to the browser."""
        if self._shown == (card, pending):
            return
        self._shown = (card, pending)
        html = render_broker_card(card)
        if pending:
            html += f'<div style="font:11px sans-serif;color:#555">{pending}…</div>'
        self.title.value = html
        for verb, button in self.buttons.items():
            button.disabled = pending is not None or verb not in card.verbs
