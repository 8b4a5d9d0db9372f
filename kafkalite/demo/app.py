"""What the presenter notebook runs: ``present()`` finds the lab cluster and shows the
presenter, opened at the scenario the page's address names (``?scenario=committed``: Voilà
hands the query string to the kernel as ``QUERY_STRING``)."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import parse_qs

from IPython.display import display

from kafkalite.demo.presenter import Presenter


def scenario_asked(query: str) -> str | None:
    """The ``scenario`` parameter of a query string, if any."""
    values = parse_qs(query).get("scenario")
    return values[0] if values else None


def present(dir: str | Path | None = None) -> Presenter:
    from kafkalite import lab  # noqa: PLC0415  (starts nothing until called)

    presenter = Presenter(lab.connect(dir), scenario_asked(os.environ.get("QUERY_STRING", "")))
    display(presenter.widget)  # type: ignore[no-untyped-call]
    return presenter
