"""Values across the sandbox boundary: JSON, with the few tagged types lab answers need.

The grader and the sandboxed submission exchange data only, never objects: what the
student's code returns is read here as a value and judged in the grader's process. JSON
alone cannot say bytes, tuples, sets, dicts with int keys or tables, which lab answers are
made of (record values, ``(partition, offset)`` pairs, ``{broker: count}``, a replica
table), so such a value travels as an object whose one key names its type:

    {"$bytes": "<base64>"}   {"$tuple": [...]}   {"$set": [...]}   {"$frozenset": [...]}
    {"$dict": [[key, value], ...]}      a dict whose keys are not all plain strings
    {"$tp": [topic, partition]}          a kafka-python TopicPartition
    {"$frame": {"columns": [...], "index": [...], "data": [[...], ...]}}   a DataFrame
    {"$history": [{op fields}, ...]}     a kafkalite.lab History (lab questions take one)

Decoding builds only these plain values and DataFrames; ``rich=True`` (the sandbox's
side, where the student's function expects them) also builds TopicPartition and History
objects, while the grader decodes with ``rich=False`` and gets ``(topic, partition)`` and a
list of op dicts: data it judges, nothing with behaviour. Anything else (a consumer, a
function, a class of the student's) is refused with a sentence that says what to return
instead.
"""

from __future__ import annotations

import base64
import json
import numbers
from collections.abc import Callable
from typing import Any

MAX_TEXT = 16 << 20  # a return value this long is not an answer
MAX_DEPTH = 64
TAGS = ("$bytes", "$tuple", "$set", "$frozenset", "$dict", "$tp", "$frame", "$history")
OP_FIELDS = ("time", "kind", "client", "topic", "partition", "value", "offset", "latency_ms",
             "error", "seek")  # fmt: skip


class WireError(ValueError):
    """A value that cannot cross the boundary: the message says why, in the student's terms."""


def dumps(value: Any) -> str:
    return json.dumps(encode(value), allow_nan=True, separators=(",", ":"))


def loads(text: str | bytes, rich: bool = False) -> Any:
    if len(text) > MAX_TEXT:
        raise WireError(f"the value is {len(text)} bytes long, over the {MAX_TEXT} allowed")
    try:
        return decode(json.loads(text), rich)
    except (ValueError, RecursionError) as exc:
        raise WireError(f"not a value the grader can read ({exc})") from None


def encode(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON data (raises :class:`WireError` for what is not plain data)."""
    if depth > MAX_DEPTH:
        raise WireError(f"the value is nested more than {MAX_DEPTH} levels deep")
    if value is None or isinstance(value, bool | str):
        return value
    if type(value).__name__ == "NAType":  # pandas' missing value, in a table's cell
        return None
    if type(value).__name__ == "bool_":  # numpy's bool, which is not a number
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return {"$bytes": base64.b64encode(bytes(value)).decode()}
    return _encode_container(value, depth + 1)


def _encode_container(value: Any, depth: int) -> Any:
    kind = type(value).__name__
    if kind == "TopicPartition":
        return {"$tp": [value.topic, int(value.partition)]}
    if isinstance(value, list):
        return [encode(v, depth) for v in value]
    if isinstance(value, tuple):  # a namedtuple travels as its values
        return {"$tuple": [encode(v, depth) for v in value]}
    if isinstance(value, set | frozenset):
        tag = "$set" if isinstance(value, set) else "$frozenset"
        return {tag: [encode(v, depth) for v in value]}
    if isinstance(value, dict):
        if all(isinstance(k, str) and not k.startswith("$") for k in value):
            return {k: encode(v, depth) for k, v in value.items()}
        return {"$dict": [[encode(k, depth), encode(v, depth)] for k, v in value.items()]}
    if kind == "DataFrame":
        return {"$frame": _frame_fields(value, depth)}
    if kind == "History":
        ops = [{f: _op_field(getattr(op, f)) for f in OP_FIELDS} for op in value.snapshot()]
        return {"$history": [encode(op, depth) for op in ops]}
    raise WireError(
        f"a {kind} cannot be sent to the grader: return plain values "
        "(numbers, strings, bytes, lists, tuples, sets, dicts, tables)"
    )


def _frame_fields(frame: Any, depth: int) -> dict[str, Any]:
    split = frame.to_dict(orient="split")
    return {
        "columns": [encode(c, depth) for c in split["columns"]],
        "index": [encode(i, depth) for i in split["index"]],
        "data": [[encode(cell, depth) for cell in row] for row in split["data"]],
    }


def _op_field(value: Any) -> Any:
    return value.value if type(value).__name__ == "OpKind" else value


def decode(data: Any, rich: bool = False, depth: int = 0) -> Any:
    """The value ``data`` (JSON) stands for; ``rich``: build the lab's objects too."""
    if depth > MAX_DEPTH:
        raise WireError(f"the value is nested more than {MAX_DEPTH} levels deep")
    if data is None or isinstance(data, bool | int | float | str):
        return data
    if isinstance(data, list):
        return [decode(v, rich, depth + 1) for v in data]
    if not isinstance(data, dict):
        raise WireError(f"unexpected {type(data).__name__}")
    if len(data) == 1 and next(iter(data)) in TAGS:
        ((tag, body),) = data.items()
        return _DECODERS[tag](body, rich, depth + 1)
    return {str(k): decode(v, rich, depth + 1) for k, v in data.items()}


def _items(body: Any, rich: bool, depth: int) -> list[Any]:
    if not isinstance(body, list):
        raise WireError("a tagged collection must hold a list")
    return [decode(v, rich, depth) for v in body]


def _bytes(body: Any, rich: bool, depth: int) -> bytes:
    if not isinstance(body, str):
        raise WireError("bytes must be base64 text")
    try:
        return base64.b64decode(body, validate=True)
    except ValueError as exc:
        raise WireError(f"bytes that are not base64 ({exc})") from None


def _set(body: Any, rich: bool, depth: int) -> set[Any]:
    try:
        return set(_items(body, rich, depth))
    except TypeError as exc:  # an unhashable member
        raise WireError(f"a set of unhashable values ({exc})") from None


def _dict(body: Any, rich: bool, depth: int) -> dict[Any, Any]:
    pairs = _items(body, rich, depth)
    if not all(isinstance(p, list) and len(p) == 2 for p in pairs):
        raise WireError("a dict must be a list of [key, value] pairs")
    try:
        return {_hashable(k): v for k, v in pairs}
    except TypeError as exc:
        raise WireError(f"a dict with an unhashable key ({exc})") from None


def _hashable(key: Any) -> Any:
    return tuple(key) if isinstance(key, list) else key


def _topic_partition(body: Any, rich: bool, depth: int) -> Any:
    if not (isinstance(body, list) and len(body) == 2):
        raise WireError("a TopicPartition is [topic, partition]")
    topic, partition = body
    if not (isinstance(topic, str) and isinstance(partition, int)):
        raise WireError("a TopicPartition is [topic (str), partition (int)]")
    if rich:
        from kafka import TopicPartition  # noqa: PLC0415  (the sandbox side only)

        return TopicPartition(topic, partition)
    return (topic, partition)


def _frame(body: Any, rich: bool, depth: int) -> Any:
    if not isinstance(body, dict) or set(body) != {"columns", "index", "data"}:
        raise WireError("a table is {columns, index, data}")
    import pandas as pd  # noqa: PLC0415  (only when a table crosses)

    columns, index, data = (_items(body[k], rich, depth) for k in ("columns", "index", "data"))
    if not all(isinstance(row, list) and len(row) == len(columns) for row in data):
        raise WireError("a table's rows must each have one cell per column")
    if len(index) != len(data):
        raise WireError("a table needs one index entry per row")
    return pd.DataFrame(data, columns=columns, index=index)


def _history(body: Any, rich: bool, depth: int) -> Any:
    ops = _items(body, False, depth)
    if not all(isinstance(op, dict) and set(op) == set(OP_FIELDS) for op in ops):
        raise WireError(f"a history is a list of ops with the fields {', '.join(OP_FIELDS)}")
    if not rich:
        return ops
    from kafkalite.lab.history import History, Op, OpKind  # noqa: PLC0415  (the sandbox side)

    return History(Op(**{**op, "kind": OpKind(op["kind"])}) for op in ops)


_DECODERS: dict[str, Callable[[Any, bool, int], Any]] = {
    "$bytes": _bytes,
    "$tuple": lambda body, rich, depth: tuple(_items(body, rich, depth)),
    "$set": _set,
    "$frozenset": lambda body, rich, depth: frozenset(_set(body, rich, depth)),
    "$dict": _dict,
    "$tp": _topic_partition,
    "$frame": _frame,
    "$history": _history,
}
