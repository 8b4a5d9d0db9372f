"""Sample requests built from kio's schemas alone (never from the broker's code): every
array empty, every nullable field null, or one of everything."""

from __future__ import annotations

import dataclasses
import datetime
import types
import typing
import uuid
from typing import Any

PRODUCE, API_VERSIONS = 0, 18
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def _is_nullable(hint: Any) -> bool:
    return isinstance(hint, types.UnionType) and type(None) in typing.get_args(hint)


def _without_none(hint: Any) -> Any:
    if _is_nullable(hint):
        (inner,) = [a for a in typing.get_args(hint) if a is not type(None)]
        return inner
    return hint


def _scalar(kafka_type: str, name: str) -> Any:
    match kafka_type:
        case "bool":
            return False
        case "string":
            return f"conformance-{name}"
        case "bytes" | "records":
            return b""
        case "uuid":
            return uuid.UUID(int=0)
        case "timedelta_i32" | "timedelta_i64":
            return datetime.timedelta(0)
        case "datetime_i64":
            return EPOCH
        case "float64":
            return 0.0
        case "error_code":
            return 0
    return 0  # every integer width


def build(cls: type, shape: str) -> Any:
    """An instance of a kio entity: arrays empty / nullables null / one of everything."""
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        nullable = _is_nullable(hint)
        if nullable and shape == "null":
            values[f.name] = None
            continue
        inner = _without_none(hint)
        kafka_type = f.metadata.get("kafka_type")
        if typing.get_origin(inner) is tuple:
            (element,) = typing.get_args(inner)[:1]
            if shape != "one":
                values[f.name] = ()
            elif dataclasses.is_dataclass(element):
                values[f.name] = (build(element, shape),)
            else:
                values[f.name] = (_scalar(kafka_type or "", f.name),)
        elif dataclasses.is_dataclass(inner):
            values[f.name] = build(inner, shape)
        else:
            values[f.name] = _scalar(kafka_type or "", f.name)
    if getattr(cls, "__api_key__", None) == PRODUCE and "acks" in values:
        values["acks"] = 1  # acks=0 is answered by silence, as Kafka does
    if getattr(cls, "__api_key__", None) == API_VERSIONS and "client_software_name" in values:
        values["client_software_name"] = "conformance"
        values["client_software_version"] = "1"
    return cls(**values)
