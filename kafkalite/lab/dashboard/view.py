"""The live drawing of the offset strips and the event feed (an ``anywidget``).

State flows one way: Python renders the model to HTML (``render.py``) and sets the
traitlets; the small ES module beside this file swaps it in and flashes changed cells.
No build step, no state kept in the browser.
"""

from __future__ import annotations

from pathlib import Path

import anywidget
import traitlets

from kafkalite.lab.dashboard.render import STRIPS_CSS


class StripsView(anywidget.AnyWidget):
    _esm = Path(__file__).with_name("strips.js")
    _css = STRIPS_CSS
    strips_html = traitlets.Unicode("").tag(sync=True)
    feed_html = traitlets.Unicode("").tag(sync=True)
