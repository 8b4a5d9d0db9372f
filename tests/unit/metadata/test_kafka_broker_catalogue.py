"""Kafka-Lite knows every broker setting of Kafka 4.0 as Kafka documents it: name, type,
Kafka's default and update mode (tests/reference keeps Kafka 4.0's documentation list), and
refuses a live change where Kafka refuses it."""

from __future__ import annotations

import pytest

from kafkalite.metadata.broker_configs import IDENTITY_CONFIG_NAMES
from kafkalite.metadata.config_defs import (
    BROKER_CONFIGS,
    TOPIC_CONFIGS,
    InvalidConfigError,
    dynamic_broker_change_error,
    incremental_value,
)
from kafkalite.metadata.config_sources import IDENTITY_CONFIGS
from tests.docs.markdown import ROOT

pytestmark = pytest.mark.unit

REFERENCE = ROOT / "tests" / "reference" / "kafka_4_0_broker_configs.tsv"
KAFKA_LITE_OWN = {"replica.fetch.endpoints", "controller.listener.port"}
"""Start-up settings of Kafka-Lite's own (Kafka names listeners in ``listeners``)."""
EFFECTIVE_DEFAULTS = {"log.flush.interval.ms", "log.retention.ms", "log.roll.ms"}
"""Kafka documents "null" (the value then comes from log.flush.scheduler.interval.ms,
log.retention.hours, log.roll.hours); Kafka-Lite shows the value that results."""


def _documented() -> dict[str, tuple[str, str, str]]:
    rows = {}
    for line in REFERENCE.read_text().splitlines():
        if line.startswith("#"):
            continue
        name, kind, default, mode = line.split("\t")
        rows[name] = (kind, "" if default in ("null", '""') else default, mode)
    return rows


DOCUMENTED = _documented()


def test_the_documentation_list_is_whole() -> None:
    assert len(DOCUMENTED) == 289


@pytest.mark.parametrize("name", sorted(DOCUMENTED.keys() - IDENTITY_CONFIG_NAMES))
def test_every_kafka_4_0_broker_setting_is_known_as_kafka_documents_it(name: str) -> None:
    kind, default, mode = DOCUMENTED[name]
    definition = BROKER_CONFIGS[name]
    assert definition.type.name.lower() == kind
    assert definition.update_mode.value == mode
    if name not in EFFECTIVE_DEFAULTS:
        assert definition.kafka_default == default


def test_who_a_broker_is_is_reported_as_it_was_started() -> None:
    """node.id, listeners, log.dirs...: Kafka-Lite's broker takes them from its command line
    (--id, --port, --data-dir) and reports them as start-up settings, read-only."""
    assert IDENTITY_CONFIGS.keys() == IDENTITY_CONFIG_NAMES <= DOCUMENTED.keys()
    assert all(d.read_only for d in IDENTITY_CONFIGS.values())
    assert not IDENTITY_CONFIG_NAMES & BROKER_CONFIGS.keys()


def test_the_settings_kafka_lite_adds_are_its_own_start_up_settings() -> None:
    known = BROKER_CONFIGS.keys() | IDENTITY_CONFIG_NAMES
    assert known - DOCUMENTED.keys() == KAFKA_LITE_OWN
    assert all(BROKER_CONFIGS[name].read_only for name in KAFKA_LITE_OWN)


def test_a_setting_kafka_reads_at_start_up_only_is_refused_live() -> None:
    assert dynamic_broker_change_error("1", ["auto.create.topics.enable", "num.io.threads"]) == (
        "Cannot update these configs dynamically: Set(auto.create.topics.enable)"
    )
    assert dynamic_broker_change_error("", ["log.retention.ms", "num.io.threads"]) is None
    assert dynamic_broker_change_error("1", ["node.id"]) == (
        "Cannot update these configs dynamically: Set(node.id)"
    )


def test_a_per_broker_setting_is_refused_as_every_brokers_default() -> None:
    name = "sasl.kerberos.min.time.before.relogin"
    assert dynamic_broker_change_error("1", [name]) is None
    assert dynamic_broker_change_error("", [name]) == (
        "Cannot update these configs at default cluster level, broker id must be "
        f"specified: Set({name})"
    )


def test_append_and_subtract_start_from_the_default() -> None:
    policy = TOPIC_CONFIGS["cleanup.policy"]
    assert incremental_value(policy, None, True, "compact") == "delete,compact"
    assert incremental_value(policy, "delete,compact", False, "delete") == "compact"
    assert incremental_value(policy, "compact", True, "compact") == "compact"
    with pytest.raises(InvalidConfigError, match="because its type is not LIST"):
        incremental_value(TOPIC_CONFIGS["retention.ms"], None, True, "1")
