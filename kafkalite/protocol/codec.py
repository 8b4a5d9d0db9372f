"""Request decoding and response encoding through kio's generated schemas. No I/O here.

A Kafka frame on the wire is ``int32 size`` followed by ``size`` bytes; this module works
on the bytes after the size. A request starts with ``api_key:int16, api_version:int16``,
which is enough to pick the header version: v2 (with tagged fields) for the flexible
versions of an API, v1 otherwise. Responses use header v1 for flexible versions and v0
otherwise, except ApiVersions, which always answers with header v0 so that a client that
does not yet know what the broker speaks can read the reply.

Handlers build responses with :class:`VersionedSchema`, which hides the field churn
between versions: a field a version lacks is dropped, and millisecond integers become the
timedelta/datetime values kio's writers expect.
"""

from __future__ import annotations

import datetime
import io
import struct
import sys
from collections.abc import Sized
from dataclasses import dataclass, fields
from functools import cache
from types import ModuleType
from typing import Any

from kio.index import UnknownAPIKey, UnknownEntity, load_request_schema, load_response_schema
from kio.schema.errors import ErrorCode
from kio.schema.index import api_key_map
from kio.schema.response_header.v0.header import ResponseHeader as ResponseHeaderV0
from kio.schema.response_header.v1.header import ResponseHeader as ResponseHeaderV1
from kio.serial import entity_reader, entity_writer
from kio.static.protocol import RequestPayload, ResponsePayload

from kafkalite.protocol.framing import ReceivedFrame

API_VERSIONS_KEY = 18
_API_KEY_AND_VERSION = struct.Struct(">hh")
_SIZE = struct.Struct(">i")
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_MILLISECOND = datetime.timedelta(milliseconds=1)
"""Dividing by it gives whole milliseconds exactly, where ``total_seconds() * 1000`` goes
through a float and may end one below (527555401 ms read back as 527555400)."""


def api_name(api_key: int) -> str:
    """Kafka's name of an API (``CreateTopics``), or ``api_key=N`` for a key kio does not
    know: what a log line says about a request, so that its cause is visible."""
    name = api_key_map.get(api_key)
    if name is None:
        return f"api_key={api_key}"
    return "".join(part.capitalize() for part in name.split("_"))


class UnsupportedApiError(ValueError):
    """The API key or version is not one kio (and so Kafka-Lite) can decode."""

    def __init__(self, api_key: int, api_version: int, correlation_id: int | None) -> None:
        super().__init__(f"{api_name(api_key)} v{api_version} is not a version kio can decode")
        self.api_key = api_key
        self.api_version = api_version
        self.correlation_id = correlation_id


class MalformedRequestError(ValueError):
    """The frame does not decode as the request its header names."""


@dataclass(slots=True)
class Request:
    """A request as read: its header's fields and its body (kio's entity). Not frozen:
    one is made per request, and a frozen dataclass's ``__init__`` (``object.__setattr__``
    per field) was a twentieth of a Heartbeat's cost; nothing changes one."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    body: Any
    trailing_bytes: int = 0


REPEATED_APIS = frozenset({3, 12})
"""Metadata and Heartbeat: the requests a client sends again and again with the same bytes
but the correlation id (each member of a group heartbeats every few seconds). kio reads
each such request once; ``decode_request`` then reuses its reading, kept for the last
``REPEATED_KEPT`` distinct ones (kio's entities are frozen: a handler cannot change them)."""
REPEATED_KEPT = 1024
_read_before: dict[bytes, tuple[str | None, Any, int]] = {}


def peek_api(frame: ReceivedFrame) -> tuple[int, int, int | None]:
    """``(api_key, api_version, correlation_id)`` from the first 8 bytes, when present."""
    if len(frame) < 4:
        raise MalformedRequestError(f"frame of {len(frame)} bytes has no request header")
    api_key, api_version = _API_KEY_AND_VERSION.unpack_from(frame, 0)
    correlation_id = _SIZE.unpack_from(frame, 4)[0] if len(frame) >= 8 else None
    return api_key, api_version, correlation_id


@cache
def _request_schema(api_key: int, api_version: int) -> type[RequestPayload] | None:
    try:
        return load_request_schema(api_key, api_version)
    except (UnknownAPIKey, UnknownEntity):
        return None


@cache
def _response_schema(api_key: int, api_version: int) -> type[ResponsePayload]:
    return load_response_schema(api_key, api_version)


def response_class(api_key: int, api_version: int) -> type[ResponsePayload]:
    """The kio class of this API version's response body."""
    return _response_schema(api_key, api_version)


def decode_request(frame: ReceivedFrame) -> Request:
    """Decode one frame (without its size prefix)."""
    api_key, api_version, correlation_id = peek_api(frame)
    if api_key not in REPEATED_APIS or correlation_id is None:
        return _decode_request(frame, api_key, api_version, correlation_id)
    same = b"".join((frame[:4], frame[8:]))  # all but the correlation id
    known = _read_before.get(same)
    if known is not None:
        return Request(api_key, api_version, correlation_id, *known)
    request = _decode_request(frame, api_key, api_version, correlation_id)
    if len(_read_before) >= REPEATED_KEPT:
        del _read_before[next(iter(_read_before))]  # the first kept
    _read_before[same] = (request.client_id, request.body, request.trailing_bytes)
    return request


def _decode_request(
    frame: ReceivedFrame, api_key: int, api_version: int, correlation_id: int | None
) -> Request:
    schema = _request_schema(api_key, api_version)
    if schema is None:
        raise UnsupportedApiError(api_key, api_version, correlation_id)
    header_schema = schema.__header_schema__
    try:
        # kio readers return (value, bytes consumed), not an end position.
        readable = _kio_readable(frame)
        header, header_size = entity_reader(header_schema)(readable, 0)
        body, body_size = entity_reader(schema)(readable, header_size)
    except Exception as exc:  # kio raises many types on garbage; all mean "malformed"
        raise MalformedRequestError(f"cannot decode {schema.__name__}: {exc}") from exc
    # Bytes after the body are ignored, as Kafka ignores them: librdkafka 2.0 ended its
    # flexible requests with one tagged-field section too many, and Kafka answered them.
    trailing = len(frame) - header_size - body_size
    return Request(api_key, api_version, header.correlation_id, header.client_id, body, trailing)


@dataclass(frozen=True, slots=True)
class EncodedResponse:
    """A response its handler encoded itself (Fetch: ``fetch_response``): the whole frame,
    size prefix included, in parts sent one after the other: byte strings, and records
    objects the server sends as they are (a file slice goes by ``sendfile``)."""

    parts: list[bytes | Sized]


@cache
def _flexible_response(api_key: int, api_version: int) -> bool:
    """Whether this response's header is v1 (with a tagged-field section). ApiVersions'
    is always v0, so that a client that asked in a version it does not know can read it."""
    return bool(_response_schema(api_key, api_version).__flexible__) and api_key != API_VERSIONS_KEY


def response_header(api_key: int, api_version: int, correlation_id: int) -> bytes:
    """The response header's bytes: the correlation id, and in header v1 an empty
    tagged-field section. Packed here rather than by kio's writer, which builds and
    validates a header object per response (two thirds of encoding a Heartbeat's answer);
    ``tests/unit/protocol/test_codec.py`` checks these are kio's bytes."""
    return _SIZE.pack(correlation_id) + (b"\0" if _flexible_response(api_key, api_version) else b"")


def encode_response(api_key: int, api_version: int, correlation_id: int, body: Any) -> bytes:
    """The whole frame, size prefix included."""
    out = io.BytesIO()
    out.write(b"\0\0\0\0")
    out.write(response_header(api_key, api_version, correlation_id))
    entity_writer(type(body))(out, body)
    frame = out.getbuffer()
    _SIZE.pack_into(frame, 0, len(frame) - 4)
    return bytes(frame)


def encode_body(body: Any) -> bytes:
    """A response body alone, without header or size: what a handler may keep and send
    again with another correlation id (``frame_with_body``)."""
    out = io.BytesIO()
    entity_writer(type(body))(out, body)
    return out.getvalue()


def frame_with_body(api_key: int, api_version: int, correlation_id: int, body: bytes) -> bytes:
    """The whole frame of a response whose body was encoded before (``encode_body``):
    the same bytes ``encode_response`` writes."""
    header = response_header(api_key, api_version, correlation_id)
    return _SIZE.pack(len(header) + len(body)) + header + body


def encode_request(body: Any, correlation_id: int, client_id: str) -> bytes:
    """A whole request frame, size prefix included (brokers calling the controller)."""
    header_cls = body.__header_schema__
    header = build(
        header_cls,
        {
            "request_api_key": body.__api_key__,
            "request_api_version": body.__version__,
            "correlation_id": correlation_id,
            "client_id": client_id,
        },
    )
    out = io.BytesIO()
    out.write(b"\0\0\0\0")
    entity_writer(header_cls)(out, header)
    entity_writer(type(body))(out, body)
    frame = out.getbuffer()
    _SIZE.pack_into(frame, 0, len(frame) - 4)
    return bytes(frame)


def response_correlation_id(frame: ReceivedFrame) -> int:
    """Every response header starts with the correlation id (frame without its size)."""
    return int(_SIZE.unpack_from(frame, 0)[0])


def decode_response(api_key: int, api_version: int, frame: ReceivedFrame | memoryview) -> Any:
    """The body of a response frame (without its size prefix)."""
    schema = _response_schema(api_key, api_version)
    header_cls = ResponseHeaderV1 if _flexible_response(api_key, api_version) else ResponseHeaderV0
    readable = _kio_readable(frame)
    _, header_size = entity_reader(header_cls)(readable, 0)
    body, _ = entity_reader(schema)(readable, header_size)
    return body


def _kio_readable(frame: ReceivedFrame | memoryview) -> bytes | memoryview:
    """kio reads bytes, or a read-only view: a big frame's buffer is writable."""
    if isinstance(frame, bytes) or (isinstance(frame, memoryview) and frame.readonly):
        return frame
    return memoryview(frame).toreadonly()


def _convert(kafka_type: str | None, value: Any) -> Any:
    if kafka_type in ("timedelta_i32", "timedelta_i64") and isinstance(value, int):
        return datetime.timedelta(milliseconds=value)
    if kafka_type == "datetime_i64" and isinstance(value, int):
        return None if value < 0 else _EPOCH + datetime.timedelta(milliseconds=value)
    if kafka_type == "error_code" and type(value) is int:  # an ErrorCode already is one
        return ErrorCode(value)
    return value


_CONVERTED = frozenset({"timedelta_i32", "timedelta_i64", "datetime_i64", "error_code"})


@cache
def _field_types(cls: type) -> dict[str, str | None]:
    return {f.name: f.metadata.get("kafka_type") for f in fields(cls)}


@cache
def _conversions(cls: type) -> dict[str, str]:
    """The fields of ``cls`` whose values ``build`` may convert, with their kafka types:
    most fields need none, and are passed as they are."""
    return {name: t for name, t in _field_types(cls).items() if t in _CONVERTED}


def build(cls: type, values: dict[str, Any]) -> Any:
    """Instantiate ``cls`` from the values it has fields for, converting time and errors."""
    types = _field_types(cls)
    converted = _conversions(cls)
    return cls(
        **{
            k: _convert(converted[k], v) if k in converted else v
            for k, v in values.items()
            if k in types
        }
    )


class VersionedSchema:
    """The response classes of one API version: ``schema.ProduceResponse(**fields)``."""

    def __init__(self, api_key: int, api_version: int) -> None:
        self.api_key = api_key
        self.api_version = api_version
        self._module: ModuleType = sys.modules[_response_schema(api_key, api_version).__module__]

    def has_field(self, class_name: str, field_name: str) -> bool:
        return field_name in _field_types(getattr(self._module, class_name))

    def __getattr__(self, class_name: str) -> Any:
        """Called once per class: the maker is then kept as an attribute."""
        cls = getattr(self._module, class_name)

        def make(**values: Any) -> Any:
            return build(cls, values)

        self.__dict__[class_name] = make

        return make


@cache
def response_schema(api_key: int, api_version: int) -> VersionedSchema:
    return VersionedSchema(api_key, api_version)


def millis(value: datetime.timedelta | datetime.datetime | None) -> int:
    """Milliseconds from kio's decoded time fields (-1 for null, as on the wire)."""
    if value is None:
        return -1
    if isinstance(value, datetime.timedelta):
        return value // _MILLISECOND
    return (value - _EPOCH) // _MILLISECOND
