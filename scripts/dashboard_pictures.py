"""Pictures of the dashboard for the README, drawn from the recorded real-cluster
snapshots (``tests/unit/lab/dashboard/recorded/``) by the dashboard's own renderer and
photographed by headless Chromium: ``python scripts/dashboard_pictures.py``.

The live widget's picture (``docs/dashboard.png``) comes from the browser test instead.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kafkalite.lab.dashboard.model import DashboardModel  # noqa: E402
from kafkalite.lab.dashboard.render import render_html  # noqa: E402
from tests.support.chromium import CHROMIUM, CHROMIUM_FLAGS  # noqa: E402

RECORDED = REPO / "tests" / "unit" / "lab" / "dashboard" / "recorded"
PICTURES = {"isolated_leader_truncation": "dashboard-truncation.png"}


def main() -> None:
    for scenario, picture in PICTURES.items():
        steps = json.loads((RECORDED / f"{scenario}.json").read_text())
        model = DashboardModel()
        states = [model.update(s["status"], s["events"], s["time_ms"]) for s in steps]
        pages = "".join(
            f'<h4 style="font:13px sans-serif">{s["name"]}</h4>{render_html(state)}'
            for s, state in zip(steps, states, strict=True)
        )
        with tempfile.TemporaryDirectory() as tmp:
            page = Path(tmp) / "page.html"
            page.write_text(f"<html><body style='margin:8px'>{pages}</body></html>")
            subprocess.run(
                [
                    str(CHROMIUM),
                    *CHROMIUM_FLAGS,
                    "--hide-scrollbars",
                    f"--user-data-dir={tmp}/profile",
                    f"--screenshot={REPO / 'docs' / picture}",
                    "--window-size=980,860",
                    page.as_uri(),
                ],
                check=True,
                capture_output=True,
                timeout=60,
            )
        print(REPO / "docs" / picture)


if __name__ == "__main__":
    main()
