"""Debian's headless Chromium as this machine runs it: without the background-networking
flags it tries Google's hosts at every start (the network is closed), and as root it needs
``--no-sandbox``. Each run also needs a fresh ``--user-data-dir``."""

from __future__ import annotations

from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
