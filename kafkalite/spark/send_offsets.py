"""``send_offsets_to_transaction`` with its timeout kept, for librdkafka producers.

librdkafka (2.16 and older) does not check that call's timeout once AddOffsetsToTxn has
succeeded: the TxnOffsetCommit waits for the group coordinator it has cached, and when
that broker has left the cluster's metadata (stopped, killed), no state change of it will
ever wake the request again (confluentinc/librdkafka#5456 and #5511, both open). Seen here
when a chaos nemesis stopped the coordinator between the two requests: the call never
returned, its transaction timed out, and the consume-transform-produce loop stalled for
good. Kafka-Lite answers as Kafka does there (a stopped broker is not in Metadata), so the
way out is on the client side.

The call runs in a thread; if it has not returned ``GRACE_S`` after its own timeout, the
producer is declared wedged: a *fatal* error, as librdkafka would report one, so callers
replace the producer. A new producer with the same ``transactional.id`` fences the wedged
one and makes the coordinator abort its open transaction, so nothing it sent is ever
committed. The thread stays blocked in librdkafka (it cannot be interrupted); it is a
daemon, and it holds only the abandoned producer.

Used by the exactly-once Spark sink's tasks and by the exactly-once chaos test.
"""

from __future__ import annotations

import threading
from typing import Any

from confluent_kafka import KafkaError, KafkaException, TopicPartition

GRACE_S = 10.0
"""How long past its own timeout the call may still return by itself."""


def send_offsets_to_transaction(
    producer: Any, offsets: list[TopicPartition], group_metadata: Any, timeout_s: float
) -> None:
    """``producer.send_offsets_to_transaction``; raises ``KafkaException`` as it does, or
    with a fatal ``_TIMED_OUT`` error when librdkafka overran ``timeout_s`` by ``GRACE_S``."""
    done = threading.Event()
    raised: list[BaseException] = []

    def call() -> None:
        try:
            producer.send_offsets_to_transaction(offsets, group_metadata, timeout_s)
        except BaseException as exc:  # handed to the caller's thread
            raised.append(exc)
        finally:
            done.set()

    threading.Thread(target=call, name="send-offsets-to-transaction", daemon=True).start()
    if not done.wait(timeout_s + GRACE_S):
        raise KafkaException(
            KafkaError(
                KafkaError._TIMED_OUT,
                f"send_offsets_to_transaction did not return {timeout_s + GRACE_S:.0f} s "
                "after it was called (its group coordinator left the cluster while the "
                "request waited for it: librdkafka#5456); this producer must be replaced",
                fatal=True,
            )
        )
    if raised:
        raise raised[0]


def is_wedged(error: KafkaError) -> bool:
    """The error :func:`send_offsets_to_transaction` raises for a wedged producer."""
    return error.code() == KafkaError._TIMED_OUT and error.fatal()
