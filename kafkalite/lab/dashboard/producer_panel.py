"""The producer panel: a real kafka-python producer with the settings a lab varies.

``acks``, ``retries`` and ``enable_idempotence`` are the producer's own settings; the
panel builds a new ``KafkaProducer`` whenever they change and counts acknowledged and
failed sends from the producer's own callbacks. Sending runs on a worker thread, so a
producer blocked on a dead leader (up to ``max_block_ms``) never blocks the kernel.
"""

from __future__ import annotations

import threading
import time
from html import escape
from typing import Any

import ipywidgets as w
from kafka import KafkaProducer

from kafkalite.lab.recording import never_auto_create

CONTINUOUS_RATE_PER_S = 20
LABEL_WIDTH = {"description_width": "initial"}
MAX_BLOCK_MS = 5_000


class ProducerPanel(w.VBox):  # type: ignore[misc]
    def __init__(self, bootstrap_servers: str, topic: str = "") -> None:
        self.bootstrap_servers = bootstrap_servers
        self.topic = w.Dropdown(
            options=[topic] if topic else [],
            description="topic",
            style=LABEL_WIDTH,
            layout=w.Layout(width="240px"),
        )
        self.acks = w.Dropdown(
            options=["all", "1", "0"],
            value="all",
            description="acks",
            style=LABEL_WIDTH,
            layout=w.Layout(width="100px"),
        )
        self.retries = w.BoundedIntText(
            3,
            min=0,
            max=1000,
            description="retries",
            style=LABEL_WIDTH,
            layout=w.Layout(width="110px"),
        )
        self.idempotence = w.Checkbox(
            False, description="enable_idempotence", indent=False, layout=w.Layout(width="auto")
        )
        self.count = w.BoundedIntText(
            10,
            min=1,
            max=100_000,
            description="N",
            style=LABEL_WIDTH,
            layout=w.Layout(width="100px"),
        )
        # buttons as wide as their text: a fixed width cut "produce continuously" short
        self.produce = w.Button(description="produce N", layout=w.Layout(width="auto"))
        self.continuous = w.ToggleButton(
            False, description="produce continuously", layout=w.Layout(width="auto")
        )
        self.counts = w.HTML()
        for widget, name in ((self.produce, "produce"), (self.continuous, "continuous")):
            widget.add_class(f"kl-producer-{name}")
        self.produce.on_click(lambda _b: self._start(self._send_n))
        self.continuous.observe(self._toggle, names="value")
        self.acked = self.failed = 0
        self.last_error = ""
        self._lock = threading.Lock()
        self._producer: KafkaProducer | None = None
        self._settings: tuple[Any, ...] | None = None
        self._worker: threading.Thread | None = None
        super().__init__(
            [
                w.HBox([self.topic, self.acks, self.retries, self.idempotence]),
                w.HBox([self.count, self.produce, self.continuous, self.counts]),
            ]
        )
        self.show_counts()

    def show_topics(self, topics: list[str]) -> None:
        """At each refresh: the cluster's topics to choose from (the first by default)."""
        if list(self.topic.options) != topics:
            current = self.topic.value
            self.topic.options = topics
            self.topic.value = current if current in topics else (topics[0] if topics else None)

    def settings(self) -> dict[str, Any]:
        acks: int | str = self.acks.value if self.acks.value == "all" else int(self.acks.value)
        return {
            "acks": acks,
            "retries": int(self.retries.value),
            "enable_idempotence": bool(self.idempotence.value),
        }

    def _producer_for(self, settings: dict[str, Any]) -> KafkaProducer:
        key = tuple(sorted(settings.items()))
        if self._producer is None or key != self._settings:
            if self._producer is not None:
                self._producer.close(timeout=2)
            if settings["enable_idempotence"]:
                settings = {**settings, "max_in_flight_requests_per_connection": 5}
            self._producer = KafkaProducer(
                bootstrap_servers=self.bootstrap_servers,
                max_block_ms=MAX_BLOCK_MS,
                request_timeout_ms=5_000,
                client_id="kafkalite-dashboard",
                **settings,
            )
            never_auto_create(self._producer._metadata)
            self._settings = key
        return self._producer

    def _send(self, producer: KafkaProducer, index: int) -> None:
        value = f"dashboard-{time.time():.3f}-{index}".encode()
        try:
            future = producer.send(self.topic.value, value)
        except Exception as exc:  # e.g. no metadata within max_block_ms
            self._count(ok=False, error=exc)
            return
        future.add_callback(lambda _md: self._count(ok=True))
        future.add_errback(lambda exc: self._count(ok=False, error=exc))

    def _send_n(self) -> None:
        producer = self._producer_for(self.settings())
        for i in range(int(self.count.value)):
            self._send(producer, i)
        producer.flush(timeout=30)

    def _send_continuously(self) -> None:
        producer = self._producer_for(self.settings())
        i = 0
        while self.continuous.value:
            self._send(producer, i)
            i += 1
            time.sleep(1 / CONTINUOUS_RATE_PER_S)
        producer.flush(timeout=30)

    def _start(self, job: Any) -> None:
        if not self.topic.value:
            self.last_error = "choose a topic first"
            self.show_counts()
            return
        if self._worker is not None and self._worker.is_alive():
            return
        self._worker = threading.Thread(target=self._guarded, args=(job,), daemon=True)
        self._worker.start()

    def _guarded(self, job: Any) -> None:
        try:
            job()
        except Exception as exc:  # a producer that cannot start: say why on the panel
            self._count(ok=None, error=exc)

    def _toggle(self, change: dict[str, Any]) -> None:
        if change["new"]:
            self._start(self._send_continuously)

    def _count(self, ok: bool | None, error: BaseException | None = None) -> None:
        with self._lock:
            if ok is True:
                self.acked += 1
            elif ok is False:
                self.failed += 1
            if error is not None:
                self.last_error = f"{type(error).__name__}: {error}"

    def show_counts(self) -> None:
        """Called at each dashboard refresh, not per send: one browser update a refresh."""
        error = f' · last error: <span style="color:#c62828">{escape(self.last_error)}</span>'
        text = (
            f'<span class="kl-producer-counts">acknowledged <b class="kl-acked">{self.acked}'
            f'</b> · failed <b class="kl-failed">{self.failed}</b></span>'
            + (error if self.last_error else "")
        )
        if self.counts.value != text:
            self.counts.value = text

    def close(self) -> None:
        self.continuous.value = False
        if self._producer is not None:
            self._producer.close(timeout=2)
