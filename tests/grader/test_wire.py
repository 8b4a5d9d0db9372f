"""Values cross the sandbox boundary as data: what lab answers are made of survives the
trip, and anything else is refused with a sentence, never run."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from kafka import TopicPartition

from grader import wire
from kafkalite.lab.history import History, Op, OpKind

pytestmark = [pytest.mark.grader, pytest.mark.unit]


def test_lab_answers_survive_the_trip() -> None:
    value = {
        1: 3,
        "acked": [b"\x00payment-1", (0, 12)],
        "keys": {b"a", b"b"},
        "frozen": frozenset({1}),
        "$tricky": "a key that looks like a tag",
        "nan": math.inf,
        "tp": TopicPartition("orders", 2),
    }
    back = wire.loads(wire.dumps(value))
    assert back == {**value, "tp": ("orders", 2)}
    assert isinstance(back["frozen"], frozenset)


def test_tables_and_histories_travel_and_histories_are_rebuilt_only_in_the_sandbox() -> None:
    table = pd.DataFrame({"broker": [1, 2], "leader": [True, False], "isr": [[1, 2], [2]]})
    assert wire.loads(wire.dumps(table)).equals(table)
    history = History([Op(1.5, OpKind.ACK, "p", "t", 0, b"v", 3, latency_ms=2.0)])
    plain = wire.loads(wire.dumps(history))
    assert plain[0]["kind"] == "ack" and plain[0]["value"] == b"v"
    rebuilt = wire.loads(wire.dumps(history), rich=True)
    assert isinstance(rebuilt, History) and rebuilt.of(OpKind.ACK)[0].offset == 3
    tp = wire.loads(wire.dumps(TopicPartition("t", 1)), rich=True)
    assert isinstance(tp, TopicPartition)


@pytest.mark.parametrize(
    ("value", "words"),
    [(object(), "a object cannot be sent"), (lambda: 1, "a function cannot be sent")],
)
def test_what_is_not_data_is_refused_with_a_sentence(value: object, words: str) -> None:
    with pytest.raises(wire.WireError, match=words):
        wire.dumps(value)


@pytest.mark.parametrize(
    "text",
    [
        '{"$bytes": 5}',
        '{"$dict": [[1]]}',
        '{"$set": [[1, 2]]}',
        '{"$frame": {"columns": ["a"], "index": [0], "data": [[1, 2]]}}',
        '{"$history": [{"time": 1}]}',
        "[" * 5000 + "]" * 5000,
        "not json",
    ],
)
def test_malformed_data_from_the_sandbox_is_refused(text: str) -> None:
    with pytest.raises(wire.WireError):
        wire.loads(text)
