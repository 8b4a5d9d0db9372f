"""The "Kafka APIs" table: the versions Kafka-Lite serves beside Kafka 4.0's.

Read off the handlers (``served_apis``, the client listener's, which is what ApiVersions
lists) and Kafka 4.0.0's ranges (``protocol.kafka_versions``), never written by hand:
``docs/kafka-apis.md`` holds its output, and a test fails when the two differ.

    python -m kafkalite.broker.api_table
"""

from __future__ import annotations

from kafkalite.broker.apis import served_apis
from kafkalite.broker.handler_registry import Listener
from kafkalite.protocol.codec import api_name
from kafkalite.protocol.kafka_versions import KAFKA_4_0

HEADER = "| API | key | Kafka-Lite | Kafka 4.0 | |\n|---|---:|---|---|---|"


def _span(low: int, high: int) -> str:
    return f"{low}" if low == high else f"{low}-{high}"


def _note(ours: tuple[int, int] | None, kafka: tuple[int, int] | None) -> str:
    if ours is None:
        return "not served"
    if kafka is None:
        return "not in Kafka 4.0"
    if ours[1] > kafka[1]:
        return "newer than 4.0"
    if ours[1] < kafka[1]:
        return "**below 4.0**"
    return ""


def rows() -> list[tuple[str, int, str, str, str]]:
    """(API, key, Kafka-Lite's versions, Kafka 4.0's, note) for every API either serves."""
    ours = {
        s.api_key: (s.min_version, s.max_version)
        for s in served_apis()
        if s.listener is Listener.CLIENT
    }
    table = []
    for api_key in sorted(ours.keys() | KAFKA_4_0.keys()):
        served, kafka = ours.get(api_key), KAFKA_4_0.get(api_key)
        table.append(
            (
                api_name(api_key),
                api_key,
                _span(*served) if served else "—",
                _span(*kafka) if kafka else "—",
                _note(served, kafka),
            )
        )
    return table


def render() -> str:
    """The table as Markdown."""
    lines = [HEADER]
    lines += [
        f"| {name} | {key} | {ours} | {kafka} | {note} |" for name, key, ours, kafka, note in rows()
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(), end="")
