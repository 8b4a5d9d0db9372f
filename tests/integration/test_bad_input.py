"""Hostile bytes against a running broker: it must answer or close, never crash or corrupt.

Hypothesis generates random frames, truncated and oversized frames, unknown API keys and
versions, valid headers with garbage bodies, and produce requests whose batches are
corrupted. After each, a separate connection must still be served, and at the end the log
must hold exactly what was acknowledged.
"""

from __future__ import annotations

import socket
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kio.schema.api_versions.v3.request import ApiVersionsRequest

from kafkalite.protocol.records import Record, build_batch
from tests.integration.test_protocol import create_topic, produce_request
from tests.support.raw import RawConnection, encode_request

pytestmark = [pytest.mark.interop, pytest.mark.slow]

FUZZ_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _probe(bootstrap: str) -> None:
    with RawConnection(bootstrap, timeout=5) as conn:
        response = conn.request(
            ApiVersionsRequest(client_software_name="probe", client_software_version="1")
        )
        assert response.error_code == 0


def _send_and_drain(bootstrap: str, data: bytes) -> None:
    with RawConnection(bootstrap, timeout=2) as conn:
        try:
            conn.send_bytes(data)
            conn.sock.shutdown(socket.SHUT_WR)
            while conn.sock.recv(65536):
                pass
        except (ConnectionError, TimeoutError, OSError):
            pass


def _framed(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


frames = st.one_of(
    st.binary(max_size=300),
    st.binary(max_size=300).map(_framed),
    st.tuples(st.integers(-5, 120), st.integers(-3, 40), st.binary(max_size=200)).map(
        lambda t: _framed(struct.pack(">hhi", t[0], t[1], 1) + t[2])
    ),
    st.tuples(st.integers(0, 2**31 - 1), st.binary(max_size=50)).map(
        lambda t: struct.pack(">i", t[0]) + t[1]
    ),
)


@FUZZ_SETTINGS
@given(data=frames)
def test_random_frames_never_hurt_the_broker(bootstrap: str, data: bytes) -> None:
    _send_and_drain(bootstrap, data)
    _probe(bootstrap)


@pytest.fixture(scope="module", autouse=True)
def fuzz_target(bootstrap: str) -> None:
    with RawConnection(bootstrap) as conn:
        create_topic(conn, "fuzz-target")


@FUZZ_SETTINGS
@given(cut=st.integers(0, 200), flips=st.lists(st.integers(0, 10_000), max_size=4))
def test_mangled_produce_requests(bootstrap: str, cut: int, flips: list[int]) -> None:
    batch = build_batch([Record(b"k", b"value" * 10, 0)] * 3)
    frame = bytearray(encode_request(produce_request("fuzz-target", batch, acks=1), 1))
    for flip in flips:
        frame[4 + flip % (len(frame) - 4)] ^= 0xA5
    _send_and_drain(bootstrap, bytes(frame[: max(4, len(frame) - cut)]))
    _probe(bootstrap)


def test_log_is_intact_after_the_fuzzing(bootstrap: str, topic: str) -> None:
    with RawConnection(bootstrap) as conn:
        create_topic(conn, topic)
        offsets = []
        for i in range(5):
            good = build_batch([Record(None, b"good-%d" % i, 0)])
            bad = bytearray(good)
            bad[70] ^= 1
            for attempt in (bytes(bad), good):
                response = conn.request(produce_request(topic, attempt, acks=1))
                part = response.responses[0].partition_responses[0]
                if attempt is good:
                    offsets.append(part.base_offset)
                else:
                    assert part.error_code == 2
    assert offsets == [0, 1, 2, 3, 4]


def test_batch_over_max_message_bytes_is_rejected(bootstrap: str, topic: str) -> None:
    with RawConnection(bootstrap) as conn:
        create_topic(conn, topic)
        huge = build_batch([Record(None, b"x" * 1_100_000, 0)])
        response = conn.request(produce_request(topic, huge, acks=1))
        assert response.responses[0].partition_responses[0].error_code == 10  # MESSAGE_TOO_LARGE
