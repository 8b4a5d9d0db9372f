"""Predict, then observe: a student's prediction beside what the cluster did (pure).

Before a fault step a lab asks for a prediction in a small answer cell (``predicted_x =
...``); the cell after the step shows ``lab.beside(x=(predicted_x, observed_x), ...)``: one
row per question, what was predicted, what happened, and whether they agree. A prediction
left as ``...`` shows as not made. The reference run of a lab (its master notebook, with
the reference predictions) must agree on every row, every time: a row that disagrees there
is a lesson that did not hold (``MISMATCH_MARK`` lets a test find it in a notebook's
output).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from types import EllipsisType
from typing import Any

MISMATCH_MARK = "prediction-differs"
"""In the HTML and text of a row whose prediction differs from what was observed."""


@dataclass(frozen=True, slots=True)
class Row:
    question: str
    predicted: Any
    observed: Any

    @property
    def made(self) -> bool:
        return not isinstance(self.predicted, EllipsisType)

    @property
    def agrees(self) -> bool:
        return self.made and _same(self.predicted, self.observed)

    @property
    def verdict(self) -> str:
        if not self.made:
            return "no prediction yet (replace ... in the cell above)"
        return "as predicted" if self.agrees else f"not as predicted [{MISMATCH_MARK}]"


def _same(predicted: Any, observed: Any) -> bool:
    """Equal, with a number predicted as an int or a float, and a name in any case."""
    if isinstance(predicted, str) and isinstance(observed, str):
        return predicted.strip().lower() == observed.strip().lower()
    return bool(predicted == observed)


def _shown(value: Any) -> str:
    return "—" if isinstance(value, EllipsisType) else repr(value)


@dataclass(frozen=True, slots=True)
class Comparison:
    """What ``lab.beside`` returns: in a notebook, a table of the rows."""

    rows: tuple[Row, ...]

    @property
    def all_agree(self) -> bool:
        return all(r.agrees for r in self.rows)

    def __repr__(self) -> str:
        width = max((len(r.question) for r in self.rows), default=0)
        return "\n".join(
            f"{r.question:<{width}}  you predicted {_shown(r.predicted)}, observed "
            f"{_shown(r.observed)}: {r.verdict}"
            for r in self.rows
        )

    def _repr_html_(self) -> str:
        cells = "".join(
            f"<tr><td>{html.escape(r.question)}</td><td>{html.escape(_shown(r.predicted))}</td>"
            f"<td>{html.escape(_shown(r.observed))}</td><td>{html.escape(r.verdict)}</td></tr>"
            for r in self.rows
        )
        head = "<tr><th></th><th>you predicted</th><th>observed</th><th></th></tr>"
        return f'<table class="kl-prediction">{head}{cells}</table>'


def beside(**questions: tuple[Any, Any]) -> Comparison:
    """``beside(new_leader=(predicted_leader, 2))``: each question's prediction and what was
    observed, in the order given (a keyword's underscores read as spaces)."""
    rows = []
    for name, pair in questions.items():
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise TypeError(f"{name}= takes a pair: (your prediction, what was observed)")
        rows.append(Row(name.replace("_", " "), pair[0], pair[1]))
    return Comparison(tuple(rows))
