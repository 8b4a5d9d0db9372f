"""Checks a test applies to a student's answer before using it in the grader's process.

A returned value is data, but some data is then *used*: producer settings become a
kafka-python producer the grader builds, topic configs a topic it creates. Each is checked
here first, and refused with a sentence the student can act on: a setting kafka-python
does not have, a value of the wrong kind, or a setting that would point the grader's
client somewhere else (its servers, its security, its serializers are the grader's own).
"""

from __future__ import annotations

import json
from typing import Any

from grader.student import StudentError

# The grader's to choose: where the client connects, who it says it is, how it encodes.
NOT_THE_STUDENTS = frozenset({
    "bootstrap_servers", "client_id", "key_serializer", "value_serializer", "partitioner",
    "security_protocol", "ssl_context", "ssl_check_hostname", "ssl_cafile", "ssl_certfile",
    "ssl_keyfile", "ssl_crlfile", "ssl_password", "ssl_ciphers", "sasl_mechanism",
    "sasl_plain_username", "sasl_plain_password", "sasl_kerberos_service_name",
    "sasl_kerberos_domain_name", "sasl_oauth_token_provider", "socks5_proxy",
    "metric_reporters", "selector", "api_version", "api_version_auto_timeout_ms",
    "kafka_client", "transactional_id", "sock_chunk_bytes", "sock_chunk_buffer_count",
    "socket_options",
})  # fmt: skip
SCALARS = (str, int, float, bool, type(None))


def producer_settings(value: Any, what: str) -> dict[str, Any]:
    """``value`` as keyword settings of a kafka-python ``KafkaProducer``."""
    from kafka import KafkaProducer  # noqa: PLC0415  (kafka-python loads on use)

    if not isinstance(value, dict):
        raise StudentError(f"{what} must be a dict of producer settings, not {_kind(value)}")
    known = set(KafkaProducer.DEFAULT_CONFIG)
    for key, setting in value.items():
        if not isinstance(key, str) or key not in known:
            raise StudentError(
                f"{what} has {key!r}, which is not a kafka-python producer setting "
                "(they are written with underscores: acks, enable_idempotence, retries, ...)"
            )
        if key in NOT_THE_STUDENTS:
            raise StudentError(f"{what} sets {key}, which the grader chooses itself: leave it out")
        if not isinstance(setting, SCALARS):
            raise StudentError(f"{what}[{key!r}] must be a plain value, not {_kind(setting)}")
    return dict(value)


def topic_configs(value: Any, what: str) -> dict[str, str]:
    """``value`` as a topic's configs: names as Kafka writes them, values as text."""
    if not isinstance(value, dict):
        raise StudentError(f"{what} must be a dict of topic configs, not {_kind(value)}")
    configs = {}
    for key, setting in value.items():
        if not isinstance(key, str) or "_" in key or not key:
            raise StudentError(
                f"{what} has {key!r}: topic configs are named as Kafka names them, with dots "
                "(min.insync.replicas, unclean.leader.election.enable)"
            )
        if not isinstance(setting, str | int | bool):
            raise StudentError(f"{what}[{key!r}] must be text or a number, not {_kind(setting)}")
        configs[key] = str(setting).lower() if isinstance(setting, bool) else str(setting)
    return configs


def pair(value: Any, what: str) -> tuple[Any, Any]:
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise StudentError(f"{what} must return a pair (two values), not {_kind(value)}")
    return value[0], value[1]


def _kind(value: Any) -> str:
    return f"{type(value).__name__} {value!r}"[:80]


def json_file(data: bytes | None, what: str) -> Any:
    """A file the student's code wrote, read as JSON (it is data: parsed, never run)."""
    if data is None:
        raise StudentError(f"{what} was not there")
    try:
        return json.loads(data)
    except ValueError as exc:
        shown = data[:60].decode(errors="replace")
        raise StudentError(f"{what} is not JSON ({exc}): it starts {shown!r}") from None


def producer(lab: Any, settings: dict[str, Any], what: str, **grader_settings: Any) -> Any:
    """``lab.producer(**settings)``, with kafka-python's refusal of a setting said as the
    student's mistake (it checks some combinations only when the producer is made)."""
    from kafka.errors import KafkaConfigurationError  # noqa: PLC0415

    try:
        return lab.producer(**grader_settings, **settings)
    except (KafkaConfigurationError, AssertionError, ValueError, TypeError) as exc:
        raise StudentError(f"kafka-python refuses {what}: {exc}") from None
