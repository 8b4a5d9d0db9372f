"""The dashboard in a real browser: JupyterLab in headless Chromium (Debian's package,
driven by Playwright), a notebook run from the Run menu against a fresh three-broker
cluster, a click on kill in the leader's card, and the new leader in the rendered page.

The notebook is lab 04 (leader failover), its master with the reference answers, which
ends with ``lab.dashboard()``. The screenshots are kept in ``test-artifacts/browser/``
(``KAFKALITE_ARTIFACTS`` changes where).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kafkalite.cluster import Cluster
from kafkalite.lab import jupyter
from tests.support.chromium import CHROMIUM, CHROMIUM_FLAGS
from tests.support.jupyterlab_page import (
    LEADER_CHANGED,
    PARTITION_LED_BY_A_RUNNING_BROKER,
    dismiss_news,
    run_all_cells,
)
from tests.support.ports import free_base_port

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("KAFKALITE_ARTIFACTS", REPO / "test-artifacts")) / "browser"
UI_TIMEOUT_MS = 90_000

playwright_api = pytest.importorskip("playwright.sync_api")
if not CHROMIUM.exists():
    pytest.skip(
        "Debian's chromium is not installed (scripts/install-system-deps.sh installs it)",
        allow_module_level=True,
    )


LAB04 = next((REPO / "grader" / "masters").glob("04-*.ipynb"))
"""Lab 04's master notebook: the lab with its reference answers, as a student who solved it
would run it (the student version stops at the first unsolved exercise)."""


@pytest.fixture
def jupyterlab(
    make_cluster3: Callable[..., Cluster], tmp_path: Path
) -> Iterator[tuple[jupyter.JupyterServer, str]]:
    cluster = make_cluster3()
    labs = tmp_path / "labs"
    labs.mkdir()
    shutil.copy(LAB04, labs / LAB04.name)
    port = free_base_port(1)
    server, _ = jupyter.start(Path(cluster.spec.root), labs, port=port)
    try:
        yield server, LAB04.name
    finally:
        jupyter.stop(Path(cluster.spec.root))


@pytest.mark.timeout(900)
def test_kill_the_leader_from_its_card_and_see_the_new_leader(jupyterlab) -> None:
    server, notebook = jupyterlab
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    profile = ARTIFACTS.parent / ".chromium-profile"
    shutil.rmtree(profile, ignore_errors=True)
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            args=CHROMIUM_FLAGS,
            headless=True,
            viewport={"width": 1400, "height": 1000},
        )
        try:
            page = browser.new_page()
            page.set_default_timeout(UI_TIMEOUT_MS)
            page.goto(f"{server.base_url}/lab/tree/{notebook}?token={server.token}")
            page.locator(".jp-Notebook").first.wait_for()
            run_all_cells(page)

            page.locator(".kl-card").first.wait_for()
            dismiss_news(page)
            topic, partition, leader = page.wait_for_function(
                PARTITION_LED_BY_A_RUNNING_BROKER
            ).json_value()
            # the static snapshot beside the live widget is hidden by the widget's view
            page.locator(".kl-static").first.wait_for(state="hidden")
            # the live cells are drawn by the widget's stylesheet, not inline styles
            committed = page.locator('.kl-live .kl-cell[data-kind="committed"]').first
            assert committed.get_attribute("style") is None
            assert committed.evaluate("c => getComputedStyle(c).backgroundColor") == (
                "rgb(46, 125, 50)"  # CELL_STYLE's #2e7d32
            )
            page.screenshot(path=str(ARTIFACTS / "dashboard-before-kill.png"), full_page=True)

            page.locator(f".kl-card-{leader} button.kl-verb-kill").click()
            new_leader = page.wait_for_function(
                LEADER_CHANGED, arg=[topic, partition, leader]
            ).json_value()
            # the killed broker's card is greyed: it reads dead and offers only start
            card = page.locator(f".kl-card-{leader}")
            card.locator(".kl-broker[data-state='dead']").wait_for()
            card.locator("button.kl-verb-start:not([disabled])").wait_for()
            assert card.locator("button:not([disabled])").all_inner_texts() == ["start"]
            page.screenshot(path=str(ARTIFACTS / "dashboard-after-kill.png"), full_page=True)
            # the widget alone: what docs/dashboard.png in the README shows
            page.locator(".kl-dashboard:not(.kl-static)").first.screenshot(
                path=str(ARTIFACTS / "dashboard.png")
            )
        except Exception:
            page.screenshot(path=str(ARTIFACTS / "dashboard-failure.png"), full_page=True)
            raise
        finally:
            browser.close()
    assert new_leader not in (None, "", leader)
