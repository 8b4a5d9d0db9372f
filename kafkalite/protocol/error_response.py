"""An error answer to any request: what a broker sends when its handler fails.

Kafka answers a request whose handling threw with UNKNOWN_SERVER_ERROR, shaped by the
API's ``getErrorResponse``: the response names the same topics and partitions the request
did, each carrying the error, so a client knows which of its partitions failed and retries
them (a client whose Produce got no partition back, or whose connection was closed,
cannot tell what happened to its batch).

The shape is derived from kio's schemas instead of being written per API:

- every ``error_code`` is the error, every error message says what happened;
- an array of the response mirrors the request's array at the same place (the only
  entity array of each, or the one with the same name): one element per element asked
  for, with its keys (topic name or id, partition index, group id...) copied across,
  ``partition`` and ``index`` being Kafka's other names of ``partition_index`` (and
  ``topic_data``/``partition_data`` of ``topics``/``partitions``);
  an array of plain names or indexes in the request (DeleteTopics' ``topic_names``)
  becomes one element per name;
- everything else is "unknown": -1 for numbers, empty for strings and bytes, null where
  null is allowed (records excepted: always empty, as librdkafka needs), false, a zero
  UUID.

Pure: no I/O; the handler table's server calls ``error_response``.
"""

from __future__ import annotations

import datetime
import types
import typing
import uuid
from dataclasses import MISSING, Field, fields, is_dataclass
from functools import cache
from typing import Any

from kafkalite.protocol.errors import ErrorCode

KEY_SYNONYMS = {
    "partition_index": ("partition_index", "partition", "index"),
    "partition": ("partition", "partition_index", "index"),
    "index": ("index", "partition_index", "partition"),
    "name": ("name", "topic"),
    "topic": ("topic", "name"),
}
ARRAY_SYNONYMS = {
    "responses": ("topics", "topic_data", "topic_names"),
    "topics": ("topic_data", "topic_names"),
    "results": ("topics", "topic_names"),
    "partition_responses": ("partitions", "partition_data"),
    "partitions": ("partition_data", "partition_indexes"),
}
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def error_response(response_cls: type, request: Any, error: ErrorCode, message: str) -> Any:
    """An instance of ``response_cls`` answering ``request`` with ``error`` everywhere."""
    return _entity(response_cls, request, error, message)


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _entity(cls: type, source: Any, error: ErrorCode, message: str) -> Any:
    hints = _hints(cls)
    pairs = _paired_arrays(cls, source)
    values = {}
    for f in fields(cls):
        values[f.name] = _value(f, hints[f.name], source, pairs.get(f.name), error, message)
    return cls(**values)


def _value(
    f: Field[Any], hint: Any, source: Any, mirrored: Any, error: ErrorCode, message: str
) -> Any:
    kafka_type = f.metadata.get("kafka_type")
    inner, nullable = _unwrap_optional(hint)
    element = _array_element(inner)
    if element is not None:
        if isinstance(element, type) and is_dataclass(element):
            return tuple(_element(element, item, error, message) for item in mirrored or ())
        return ()
    if isinstance(inner, type) and is_dataclass(inner):
        if f.default is not MISSING:
            return f.default
        return None if nullable else _entity(inner, None, error, message)
    if kafka_type == "error_code":
        return error
    if f.name == "error_message" or f.name.endswith("error_message"):
        return message
    key = _copied_key(f.name, source, kafka_type)
    if key is not None:
        return key
    if kafka_type == "records":
        return b""  # never null: librdkafka drops a connection on a null record set
    if f.default is not MISSING:
        return f.default
    return None if nullable else _unknown(kafka_type, inner)


def _element(cls: type, item: Any, error: ErrorCode, message: str) -> Any:
    if is_dataclass(item) or item is None:
        return _entity(cls, item, error, message)
    # a plain name or index asked for: it becomes the element's first key of that kind
    hints = _hints(cls)
    keyed = _KeyOnly(_first_key_field(cls, hints, item), item)
    return _entity(cls, keyed, error, message)


class _KeyOnly:
    """Stands for a request element that was just a name or an index."""

    def __init__(self, field: str | None, value: Any) -> None:
        if field is not None:
            setattr(self, field, value)


def _first_key_field(cls: type, hints: dict[str, Any], item: Any) -> str | None:
    want = str if isinstance(item, str) else int if isinstance(item, int) else uuid.UUID
    for f in fields(cls):
        inner, _ = _unwrap_optional(hints[f.name])
        if f.metadata.get("kafka_type") != "error_code" and _is_subclass(inner, want):
            return f.name
    return None


def _paired_arrays(cls: type, source: Any) -> dict[str, Any]:
    """Each entity array of ``cls`` with the request array it mirrors."""
    if source is None or not is_dataclass(source):
        return {}
    hints = _hints(cls)
    mine = [f.name for f in fields(cls) if _array_element(_unwrap_optional(hints[f.name])[0])]
    theirs = {
        f.name: getattr(source, f.name)
        for f in fields(source)
        if isinstance(getattr(source, f.name), tuple)
    }
    pairs = {}
    for name in mine:
        candidates = [n for n in (name, *ARRAY_SYNONYMS.get(name, ())) if n in theirs]
        if candidates:
            pairs[name] = theirs[candidates[0]]
    unpaired_mine = [n for n in mine if n not in pairs]
    unpaired_theirs = [n for n in theirs if theirs[n] not in pairs.values()]
    if len(unpaired_mine) == 1 and len(unpaired_theirs) == 1:
        pairs[unpaired_mine[0]] = theirs[unpaired_theirs[0]]
    return pairs


_KEY_TYPES: dict[str, type] = {
    "string": str,
    "int8": int,
    "int16": int,
    "int32": int,
    "int64": int,
    "uuid": uuid.UUID,
}


def _copied_key(name: str, source: Any, kafka_type: str | None) -> Any:
    """The request element's value for this field (a topic name, a partition index...)."""
    wanted = _KEY_TYPES.get(kafka_type or "")
    if source is None or wanted is None:
        return None
    for candidate in KEY_SYNONYMS.get(name, (name,)):
        value = getattr(source, candidate, None)
        if isinstance(value, wanted) and not isinstance(value, bool):
            return value
    return None


def _unknown(kafka_type: str | None, inner: Any) -> Any:
    if kafka_type in ("int8", "int16", "int32", "int64"):
        return -1
    if kafka_type == "uint16":
        return 0
    if kafka_type == "float64":
        return 0.0
    if kafka_type == "bool":
        return False
    if kafka_type == "string":
        return ""
    if kafka_type in ("bytes", "records"):
        return b""
    if kafka_type == "uuid":
        return uuid.UUID(int=0)
    if kafka_type in ("timedelta_i32", "timedelta_i64"):
        return datetime.timedelta(0)
    if kafka_type == "datetime_i64":
        return _EPOCH
    raise TypeError(f"no unknown value for {kafka_type!r} ({inner!r})")


def _unwrap_optional(hint: Any) -> tuple[Any, bool]:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return (args[0] if len(args) == 1 else hint), len(args) < len(typing.get_args(hint))
    return hint, False


def _array_element(hint: Any) -> Any:
    if typing.get_origin(hint) is tuple:
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return args[0]
    return None


def _is_subclass(hint: Any, want: type) -> bool:
    return isinstance(hint, type) and issubclass(hint, want) and not issubclass(hint, bool)
