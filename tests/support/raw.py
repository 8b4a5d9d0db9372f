"""A raw Kafka connection for tests that must send exact (or deliberately broken) bytes.

Requests are encoded with kio's generated schemas, not with the broker's code, so a test
never checks the broker against itself.
"""

from __future__ import annotations

import datetime
import io
import socket
import struct
from typing import Any

from kio.index import load_response_schema
from kio.schema.fetch.v12 import request as fetch_req
from kio.schema.list_offsets.v7.request import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
)
from kio.schema.request_header.v1.header import RequestHeader as RequestHeaderV1
from kio.schema.request_header.v2.header import RequestHeader as RequestHeaderV2
from kio.schema.response_header.v0.header import ResponseHeader as ResponseHeaderV0
from kio.schema.response_header.v1.header import ResponseHeader as ResponseHeaderV1
from kio.serial import entity_reader, entity_writer


def encode_request(body: Any, correlation_id: int, client_id: str = "raw-test") -> bytes:
    header_cls = body.__header_schema__
    header = header_cls(
        request_api_key=body.__api_key__,
        request_api_version=body.__version__,
        correlation_id=correlation_id,
        client_id=client_id,
    )
    out = io.BytesIO()
    entity_writer(header_cls)(out, header)
    entity_writer(type(body))(out, body)
    payload = out.getvalue()
    return struct.pack(">i", len(payload)) + payload


class RawConnection:
    def __init__(self, address: str, timeout: float = 10) -> None:
        host, port = address.split(",", maxsplit=1)[0].rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.correlation_id = 0

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> RawConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send_bytes(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read_frame(self) -> bytes:
        size = struct.unpack(">i", self._read_exactly(4))[0]
        return self._read_exactly(size)

    def _read_exactly(self, n: int) -> bytes:
        chunks = []
        while n:
            chunk = self.sock.recv(n)
            if not chunk:
                raise ConnectionError("connection closed by broker")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def send(self, body: Any) -> int:
        self.correlation_id += 1
        self.send_bytes(encode_request(body, self.correlation_id))
        return self.correlation_id

    def receive(self, body_type: type[Any]) -> tuple[int, Any]:
        return self.decode(self.read_frame(), body_type)

    @staticmethod
    def decode(frame: bytes, body_type: type[Any]) -> tuple[int, Any]:
        """``(correlation id, response body)`` of a response to a ``body_type`` request."""
        api_key, version = body_type.__api_key__, body_type.__version__
        response_cls = load_response_schema(api_key, version)
        header_cls = (
            ResponseHeaderV1 if response_cls.__flexible__ and api_key != 18 else (ResponseHeaderV0)
        )
        header, header_size = entity_reader(header_cls)(frame, 0)
        body, _ = entity_reader(response_cls)(frame, header_size)
        return int(header.correlation_id), body

    def request(self, body: Any) -> Any:
        correlation_id = self.send(body)
        got, response = self.receive(type(body))
        assert got == correlation_id
        return response


def fetch_request(topic: str, replica_id: int = -1, partition: int = 0) -> fetch_req.FetchRequest:
    """Fetch v12 of one partition from offset 0, answered at once (max_wait 0)."""
    return fetch_req.FetchRequest(
        cluster_id=None,
        replica_id=replica_id,
        max_wait=datetime.timedelta(0),
        min_bytes=1,
        max_bytes=1 << 20,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        topics=(
            fetch_req.FetchTopic(
                topic=topic,
                partitions=(
                    fetch_req.FetchPartition(
                        partition=partition,
                        current_leader_epoch=-1,
                        fetch_offset=0,
                        last_fetched_epoch=-1,
                        log_start_offset=-1,
                        partition_max_bytes=1 << 20,
                    ),
                ),
            ),
        ),
        forgotten_topics_data=(),
        rack_id="",
    )


def list_offsets_request(topic: str, timestamp: int = -1, partition: int = 0) -> ListOffsetsRequest:
    """ListOffsets v7 for one partition (-1: latest, -2: earliest, -3: max timestamp)."""
    return ListOffsetsRequest(
        replica_id=-1,
        isolation_level=0,
        topics=(
            ListOffsetsTopic(
                name=topic,
                partitions=(
                    ListOffsetsPartition(
                        partition_index=partition, current_leader_epoch=-1, timestamp=timestamp
                    ),
                ),
            ),
        ),
    )


__all__ = [
    "RawConnection",
    "RequestHeaderV1",
    "RequestHeaderV2",
    "encode_request",
    "fetch_request",
    "list_offsets_request",
]
