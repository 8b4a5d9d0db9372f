"""A container's health probe: does the broker answer ApiVersions on its client listener?

Docker runs this every few seconds in each broker container, so it must cost next to
nothing: it imports only the standard library and is run as a plain script
(``python -I -S healthcheck.py``, copied out of the package by the Dockerfile), because
importing ``kafkalite`` and kio would cost a second of CPU per probe. A broker opens its
client listener only after it has registered with the active controller, so an answer
means "this broker is in a working cluster", which is what ``depends_on: service_healthy``
waits for.

ApiVersions v0, the one request every Kafka client sends first, on the wire::

    request   int32 size | int16 api_key=18 | int16 api_version=0 | int32 correlation_id
              | int16 client_id length | client_id bytes            (request header v1, no body)
    response  int32 size | int32 correlation_id                       (response header v0)
              | int16 error_code | int32 n | n x (int16 api_key, int16 min, int16 max)
"""

from __future__ import annotations

import socket
import struct
import sys

API_VERSIONS = 18
CLIENT_ID = b"healthcheck"
_REQUEST = struct.Struct(">hhih")
_SIZE = struct.Struct(">i")
_RESPONSE_START = struct.Struct(">ih")


def api_versions_request(correlation_id: int) -> bytes:
    body = _REQUEST.pack(API_VERSIONS, 0, correlation_id, len(CLIENT_ID)) + CLIENT_ID
    return _SIZE.pack(len(body)) + body


def read_error_code(response: bytes, correlation_id: int) -> int:
    """The error code of an ApiVersions v0 response frame (without its size prefix)."""
    got_id, error_code = _RESPONSE_START.unpack_from(response)
    if got_id != correlation_id:
        raise ValueError(f"correlation id {got_id}, expected {correlation_id}")
    return int(error_code)


def probe(host: str, port: int, timeout_s: float = 3.0) -> str | None:
    """None when the broker answers ApiVersions without error, else why not."""
    try:
        with socket.create_connection((host, port), timeout_s) as sock:
            sock.sendall(api_versions_request(1))
            size = _SIZE.unpack(_read_exactly(sock, _SIZE.size))[0]
            error_code = read_error_code(_read_exactly(sock, size), 1)
    except (OSError, ValueError, struct.error) as exc:
        return f"no ApiVersions answer from {host}:{port}: {exc}"
    return None if error_code == 0 else f"ApiVersions answered with error code {error_code}"


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ValueError("connection closed mid-response")
        data += chunk
    return data


def main(argv: list[str]) -> int:
    host = argv[0] if argv else "127.0.0.1"
    port = int(argv[1]) if len(argv) > 1 else 9092
    problem = probe(host, port)
    if problem is not None:
        print(problem, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
