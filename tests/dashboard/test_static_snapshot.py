"""Where widgets are not live: a notebook that shows the dashboard, executed by nbclient
(as the labs' tests and the grader run notebooks) and exported by nbconvert, carries a
static HTML snapshot of the cluster and a text one, beside the widget."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest
from kafka import KafkaProducer
from nbclient import NotebookClient
from nbconvert import HTMLExporter

from kafkalite.cluster import Cluster
from tests.support.topics import create_topic
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.labs, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


def test_executed_and_exported_notebook_shows_the_snapshot(
    make_cluster3: Callable[..., Cluster],
) -> None:
    cluster = make_cluster3()
    create_topic(cluster.bootstrap_servers, "orders", 1, 3)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all")
    for i in range(5):
        producer.send("orders", f"order-{i}".encode()).get(timeout=30)
    producer.close()
    wait_for(
        lambda: all(
            r["high_watermark"] == 5 for r in cluster.status()["partitions"][0]["replicas"]
        ),
        what="every replica's high watermark at 5",
    )
    cells = [
        "from pathlib import Path\n"
        "from kafkalite.cluster import Cluster\n"
        "from kafkalite.lab.dashboard import Dashboard\n"
        f"dashboard = Dashboard(Cluster.attach(Path({cluster.spec.root!r})))",
        "dashboard",
        "dashboard.close()",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(REPO)}}
    ).execute()

    static, live = (o["data"] for o in nb.cells[1].outputs)
    assert "application/vnd.jupyter.widget-view+json" in live
    assert 'class="kl-dashboard kl-static"' in static["text/html"]
    assert 'data-topic="orders"' in static["text/html"]
    assert "<script" not in static["text/html"]
    assert static["text/plain"].startswith("brokers: 1 running")
    assert "orders-0: leader" in static["text/plain"]

    html, _ = HTMLExporter().from_notebook_node(nb)
    assert 'class="kl-dashboard kl-static"' in html
    assert html.count('data-kind="committed"') == 15  # 5 records on each of 3 replicas
    assert 'data-topic="orders"' in html
