"""The presenter's keyboard (an ``anywidget``): key presses anywhere on the page arrive as
``Key`` values (``keys.js`` maps a clicker's keys)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anywidget

from kafkalite.demo.steps import Key


class KeyListener(anywidget.AnyWidget):
    _esm = Path(__file__).with_name("keys.js")

    def __init__(self, on_key: Callable[[Key], None]) -> None:
        super().__init__()
        self._on_key = on_key
        self.on_msg(self._message)

    def _message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        try:
            key = Key(content.get("key"))
        except (ValueError, AttributeError):
            return  # not a key this page sends
        self._on_key(key)
