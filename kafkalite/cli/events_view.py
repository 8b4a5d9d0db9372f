"""``kafkalite events`` lines: one event per line, time, broker, type, then its fields.

Pure: events in (as ``/events`` gives them), text out. Events a starting broker re-emitted
while replaying the metadata log are marked ``(replay)``: history, not news.

``--follow`` opens with the last few events, not the hundreds a cluster has logged since it
started (a restarted broker alone re-emits one per metadata record it replays), so the
first screen shows where things stand and the news follows.
"""

from __future__ import annotations

import datetime
import json
from typing import Any

FRAME = ("seq", "time_ms", "broker", "type", "replay")
RECENT_EVENTS = 20
NOW_LINE = "-- the events above had happened; new ones follow as they happen (Ctrl-C stops) --"


def recent(events: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """The last ``count`` events that are news: a metadata replay re-tells older ones."""
    return [e for e in events if not e.get("replay")][-count:]


def event_line(event: dict[str, Any]) -> str:
    when = datetime.datetime.fromtimestamp(event["time_ms"] / 1000).strftime("%H:%M:%S.%f")
    fields = " ".join(f"{k}={_value(v)}" for k, v in event.items() if k not in FRAME)
    replay = " (replay)" if event.get("replay") else ""
    return f"{when[:-3]}  broker {event['broker']}  {event['type']}{replay}  {fields}".rstrip()


def _value(value: Any) -> str:
    if isinstance(value, list | dict):
        return json.dumps(value, separators=(",", ":"))
    return str(value)
