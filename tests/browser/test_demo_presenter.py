"""The instructor's presenter as a lecturer uses it: ``kafkalite demo``'s Voilà page in
headless Chromium at a projector's 1280x720, every scenario opened from the picker and
stepped with the keyboard (→, what a clicker sends) to its verdict, each step's state
checked against the live cluster, a screenshot per scenario kept in
``test-artifacts/browser/demo-<scenario>.png`` and each scenario's time in
``demo-times.json`` beside them.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient

from kafkalite.cluster import Cluster
from kafkalite.demo import server
from kafkalite.demo.catalog import SCENARIOS
from kafkalite.lab import jupyter
from kafkalite.lab.group_members import describe_groups
from tests.support.chromium import CHROMIUM
from tests.support.ports import free_base_port
from tests.support.presenter_page import ARTIFACTS, facts, projector, ready

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SCENARIO_BUDGET_S = {"spark": 180.0}
"""Each scenario's time in this test, set-up included: the issue's 60 s, but for spark, whose
two driver starts (a JVM and a SparkSession each) are CPU-bound: 44 s in all on an idle
two-core machine (``python -m kafkalite.demo.rehearse spark``), 88 s at load 13 in this
test. On a shared CI machine its budget only catches a hang."""

pytest.importorskip("playwright.sync_api")
if not CHROMIUM.exists():
    pytest.skip(
        "Debian's chromium is not installed (scripts/install-system-deps.sh installs it)",
        allow_module_level=True,
    )


@pytest.fixture
def presenter(make_cluster3: Callable[..., Cluster]) -> Iterator[tuple[Cluster, str]]:
    cluster = make_cluster3()
    root = Path(cluster.spec.root)
    voila, _ = server.start(root, port=free_base_port(1))
    try:
        yield cluster, server.url(voila)
    finally:
        server.stop(root)


def partition(cluster: Cluster, topic: str) -> dict[str, Any]:
    """The partition as the cluster reports it now (the presenter's kernel, another process,
    killed and started brokers: their pids are read again first)."""
    cluster.follow_other_shells()
    found: dict[str, Any] = next(p for p in cluster.status()["partitions"] if p["topic"] == topic)
    return found


def check_committed(cluster: Cluster, step: int, seen: dict[str, str]) -> None:
    """The quiz: the answer on screen is the live leader's high watermark."""
    if step == 4:
        hw = partition(cluster, "payments")["high_watermark"]
        assert seen["factHighWatermark"] == str(hw)
        for offset in (8, 10, 11):
            assert seen[f"factCommitted-{offset}"] == str(offset < hw).lower(), (offset, hw)
    if step == 6:
        p = partition(cluster, "payments")
        assert p["leader"] == int(seen["factLeader"]) != 1
        assert cluster.broker_states()[1].value in ("dead", "stopped")
    if step == 8:
        assert seen["valid"] == "false" and seen["factLost"] == "1"


def check_acks_1(cluster: Cluster, step: int, seen: dict[str, str]) -> None:
    if step == 2:
        assert partition(cluster, "clicks")["leader"] == int(seen["factLeader"]) != 1
    if step == 4:
        assert int(seen["factLost"]) > 0


def check_min_insync(cluster: Cluster, step: int, seen: dict[str, str]) -> None:
    if step == 4:
        assert seen["factAcksAll"] == "NotEnoughReplicasError"
        assert seen["factAcks-1"] == "acked"
        assert len(partition(cluster, "orders")["isr"]) == 2
    if step == 6:
        assert seen["valid"] == "true"


def check_unclean(cluster: Cluster, step: int, seen: dict[str, str]) -> None:
    if step == 4:
        assert seen["factUnclean"] == "true"
        assert partition(cluster, "ledger")["leader"] == 2
    if step == 7:
        assert int(seen["factLost"]) == 10 and int(seen["factVanished"]) > 0


def check_idempotence(cluster: Cluster, step: int, seen: dict[str, str]) -> None:
    if step == 1:
        assert seen["factCopiesTransfers"] == "2"
    if step == 2:
        assert seen["factCopiesTransfersIdempotent"] == "1"
    if step == 3:
        assert seen["factDuplicated"] == "1"


def check_transactions(cluster: Cluster, step: int, seen: dict[str, str]) -> None:
    if step == 2:
        assert seen["factReadCommitted"] == "0"
        assert partition(cluster, "accounts") is not None
    if step == 5:
        assert seen["valid"] == "true"


def check_consumer_group(cluster: Cluster, step: int, seen: dict[str, str]) -> None:
    """The replacement owns the dead member's partitions, as the group's coordinator says,
    and processed twice exactly what the dead one had not committed."""
    if step == 2:
        assert int(seen["factUncommitted"]) >= 2
    if step == 3:
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers, "log_level": 0})
        (view,) = describe_groups(admin, ["dashboards"], timeout_s=10)
        owners = {m.client_id: sorted(p for _, p in m.partitions) for m in view.members}
        assert owners == {"c2": [0, 1]} and seen["factC2Partitions"] == "0,1", owners
    if step == 4:
        assert seen["factRedone"] == "true"
        assert seen["factTwice"] == seen["factDuplicated"] != "0"


def check_spark(cluster: Cluster, step: int, seen: dict[str, str]) -> None:
    if step == 2:
        assert seen["factReplayPending"] == "true"
    if step == 4:
        assert seen["valid"] == "true" and seen["factCopies"] == seen["factDifferent"] != "0"


def check_controller(cluster: Cluster, step: int, seen: dict[str, str]) -> None:
    if step == 2:
        cluster.follow_other_shells()
        quorum = cluster.status()["quorum"]
        assert quorum["leader"] == int(seen["factController"])
        assert partition(cluster, "orders")["leader"] == int(seen["factLeader"])
    if step == 4:
        assert seen["valid"] == "true"


def check_replicated_service(cluster: Cluster, step: int, seen: dict[str, str]) -> None:
    if step == 3:
        assert seen["factSlowest"] == "c"
    if step == 5:
        assert seen["valid"] == "true" and seen["factAgree"] == "true"


CHECKS: dict[str, Callable[[Cluster, int, dict[str, str]], None]] = {
    "committed": check_committed,
    "acks-1": check_acks_1,
    "min-insync": check_min_insync,
    "unclean": check_unclean,
    "idempotence": check_idempotence,
    "transactions": check_transactions,
    "consumer-group": check_consumer_group,
    "spark": check_spark,
    "controller": check_controller,
    "replicated-service": check_replicated_service,
}


ON_SCREEN = """() => [...document.querySelectorAll(
    '.kl-demo-picture, .kl-demo-table, .kl-demo-left img, .kl-demo .kl-panels')]
  .filter(e => e.getClientRects().length)
  .map(e => [e.className, e.getBoundingClientRect()])
  .filter(([, box]) => box.bottom > window.innerHeight || box.right > window.innerWidth)
  .map(([name, box]) => [name, Math.round(box.right), Math.round(box.bottom)])"""
"""What is drawn but ends past the screen's bottom or right edge (a projector cannot
scroll)."""


@pytest.mark.timeout(1500)
def test_every_scenario_stepped_with_the_keyboard(presenter) -> None:
    cluster, url = presenter
    assert set(CHECKS) == {s.slug for s in SCENARIOS}, "every scenario is checked"
    times: dict[str, float] = {}
    with projector() as page:
        try:
            page.goto(url)
            for info in SCENARIOS:
                started = time.monotonic()
                if facts(page).get("scenario") != info.slug:
                    page.locator(".kl-demo-picker select").select_option(label=info.title)
                steps = int(ready(page, info.slug, -1)["steps"])
                for step in range(steps):
                    page.keyboard.press("ArrowRight")
                    CHECKS[info.slug](cluster, step, ready(page, info.slug, step))
                    assert not page.evaluate(ON_SCREEN), (info.slug, step)
                times[info.slug] = round(time.monotonic() - started, 1)
                page.screenshot(path=str(ARTIFACTS / f"demo-{info.slug}.png"))
                page.keyboard.press("ArrowLeft")
                assert ready(page, info.slug, steps - 2)["step"] == str(steps - 2)
        except Exception:
            page.screenshot(path=str(ARTIFACTS / "demo-failure.png"))
            raise
        finally:
            (ARTIFACTS / "demo-times.json").write_text(json.dumps(times, indent=2) + "\n")
    slow = {slug: t for slug, t in times.items() if t > SCENARIO_BUDGET_S.get(slug, 60.0)}
    assert not slow, f"scenarios over their budget: {slow}"


def test_the_presenter_notebook_is_shipped_and_clean() -> None:
    notebook = json.loads(server.PRESENTER.read_text())
    assert all(not c.get("outputs") for c in notebook["cells"])
    assert shutil.which("voila") or (Path(os.sys.executable).parent / "voila").exists()


@pytest.mark.timeout(600)
def test_kafkalite_demo_in_a_jupyter_terminal_is_shown_by_that_servers_voila(
    make_cluster3: Callable[..., Cluster], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lab container's and a JupyterHub instructor's own server, where no other port
    is reachable: ``kafkalite demo`` run in one of its terminals (whose environment names
    the server) puts the presenter in the server's folder, and the server's own Voilà
    extension shows it behind the server's login, at the address the command prints."""
    cluster = make_cluster3()
    cluster_dir = Path(cluster.spec.root)
    labs = tmp_path / "home"
    labs.mkdir()
    lab_server, _ = jupyter.start(cluster_dir, labs, port=free_base_port(1))
    try:
        monkeypatch.setenv(server.SERVER_ROOT, lab_server.root_dir)
        monkeypatch.setenv(server.SERVER_URL, lab_server.base_url + "/")
        said = server.open_demo(cluster_dir, "unclean", kafka_port=cluster.spec.brokers[0].port)
        address = next(line.split()[-1] for line in said.splitlines() if "open:" in line)
        assert address.startswith(lab_server.base_url), said
        assert (labs / server.IN_SERVER_NAME).exists()
        with projector() as page:
            page.goto(f"{lab_server.base_url}/lab?token={lab_server.token}")  # the login
            page.goto(address)
            ready(page, "unclean", -1)
            page.keyboard.press("ArrowRight")
            assert ready(page, "unclean", 0)["step"] == "0"
            page.screenshot(path=str(ARTIFACTS / "demo-in-jupyter-server.png"))
    finally:
        jupyter.stop(cluster_dir)
