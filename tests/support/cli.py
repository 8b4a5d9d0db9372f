"""Run the ``kafkalite`` command as a user would, in a subprocess."""

from __future__ import annotations

import subprocess
import sys


def kafkalite(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafkalite", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
