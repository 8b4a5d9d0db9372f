"""The demo's presenter page in headless Chromium, as a projector shows it: what the browser
test of every scenario and the course stack's test through JupyterHub both drive. The page
names its state in ``.kl-demo-state``'s data attributes (scenario, step, phase, facts)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.chromium import CHROMIUM, CHROMIUM_FLAGS

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("KAFKALITE_ARTIFACTS", REPO / "test-artifacts")) / "browser"
STEP_TIMEOUT_MS = 120_000


@contextmanager
def projector() -> Iterator[Any]:
    """A page in headless Chromium at a projector's 1280x720; the browser closed after."""
    from playwright.sync_api import sync_playwright  # noqa: PLC0415  (browser lanes only)

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS, headless=True
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.set_default_timeout(STEP_TIMEOUT_MS)
            yield page
        finally:
            browser.close()


def facts(page: Any) -> dict[str, str]:
    found: dict[str, str] = page.locator(".kl-demo-state").evaluate(
        "e => Object.fromEntries(Object.entries(e.dataset))"
    )
    return found


def ready(page: Any, slug: str, step: int) -> dict[str, str]:
    """The page once ``slug``'s ``step`` is ready (-1: the scenario opened, no step yet)."""
    page.locator(
        f'.kl-demo-state[data-scenario="{slug}"][data-step="{step}"]'
        '[data-phase="ready"], .kl-demo-state[data-phase="failed"]'
    ).wait_for(timeout=STEP_TIMEOUT_MS)
    seen = facts(page)
    assert seen["phase"] == "ready", page.locator(".kl-demo-outcome").inner_text()
    return seen
