"""Settings as Kafka reports and accepts them, through kafka-python's and confluent-kafka's
admin clients: every broker setting with its source (start-up settings such as
``advertised.listeners`` and ``broker.rack`` are STATIC_BROKER_CONFIG), topic settings
Kafka accepts but Kafka-Lite does not act on, and settings of consumer groups."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewTopic,
)
from kafka import KafkaAdminClient
from kafka.admin import ConfigResource as KConfigResource
from kafka.admin import ConfigResourceType
from kafka.admin import NewTopic as KNewTopic
from kio.schema.incremental_alter_configs.v1 import request as iac

from kafkalite.cluster import Cluster
from kafkalite.metadata.config_defs import BROKER_CONFIGS
from kafkalite.metadata.group_configs import GROUP_CONFIGS
from tests.conftest import LAB_CONFIGS
from tests.docs.test_not_applied_settings import NOT_APPLIED
from tests.support.ports import free_base_port
from tests.support.raw import RawConnection

pytestmark = pytest.mark.interop

KAFKA_ACCEPTS = {
    "message.format.version": "2.8-IV1",  # deprecated: Kafka 3.x accepts and ignores it
    "delete.retention.ms": "1000",
    "flush.ms": "1000",
    "min.compaction.lag.ms": "0",
    "segment.index.bytes": "1048576",
    "compression.zstd.level": "9",  # Kafka 3.8's KIP-390
}


@pytest.fixture(scope="module")
def started(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One broker started with a rack, its advertised address and a non-default setting."""
    port = free_base_port(1)
    cluster = Cluster.up(
        tmp_path_factory.mktemp("configs"),
        base_port=port,
        configs={
            **LAB_CONFIGS,
            "broker.rack": "rack-a",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "log.retention.ms": "3600000",
        },
    )
    try:
        yield cluster
    finally:
        cluster.down()


def _kafka_python_broker_configs(bootstrap: str) -> dict[str, dict]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        described = admin.describe_configs(
            [KConfigResource(ConfigResourceType.BROKER, "1")],
            include_synonyms=True,
            config_filter="all",
        )
    finally:
        admin.close()
    return described["broker"]["1"]


def test_every_broker_setting_with_its_source_in_kafka_python(started: Cluster) -> None:
    port = started.spec.broker(1).port
    configs = _kafka_python_broker_configs(started.bootstrap_servers)
    assert set(BROKER_CONFIGS) <= set(configs)
    assert configs["advertised.listeners"]["value"] == f"PLAINTEXT://127.0.0.1:{port}"
    assert configs["advertised.listeners"]["config_source"] == "STATIC_BROKER_CONFIG"
    assert configs["broker.rack"]["value"] == "rack-a"
    assert configs["broker.rack"]["config_source"] == "STATIC_BROKER_CONFIG"
    assert (configs["node.id"]["value"], configs["node.id"]["config_source"]) == (
        "1",
        "STATIC_BROKER_CONFIG",
    )
    assert configs["log.segment.bytes"]["config_source"] == "DEFAULT_CONFIG"
    assert "not applied" in configs["num.io.threads"]["documentation"]  # accepted, for tools
    # a start-up setting that may change live is every broker's dynamic default; the
    # synonyms show the start-up value beneath it and Kafka-Lite's default beneath that
    retention = configs["log.retention.ms"]
    assert (retention["value"], retention["config_source"]) == (
        "3600000",
        "DYNAMIC_DEFAULT_BROKER_CONFIG",
    )
    assert [(s["value"], s["source"]) for s in retention["synonyms"]] == [
        ("3600000", "DYNAMIC_DEFAULT_BROKER_CONFIG"),
        ("3600000", "STATIC_BROKER_CONFIG"),
        ("604800000", "DEFAULT_CONFIG"),
    ]


def test_broker_sources_in_confluent_kafka_and_a_live_change_wins(started: Cluster) -> None:
    admin = AdminClient({"bootstrap.servers": started.bootstrap_servers})
    broker = ConfigResource(ConfigResource.Type.BROKER, "1")
    configs = admin.describe_configs([broker])[broker].result(10)
    assert configs["advertised.listeners"].source == ConfigSource.STATIC_BROKER_CONFIG.value
    assert configs["broker.rack"].source == ConfigSource.STATIC_BROKER_CONFIG.value
    assert configs["log.roll.ms"].source == ConfigSource.DEFAULT_CONFIG.value
    change = ConfigResource(
        ConfigResource.Type.BROKER,
        "1",
        incremental_configs=[
            ConfigEntry("log.roll.ms", "7200000", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    admin.incremental_alter_configs([change])[change].result(10)
    configs = admin.describe_configs([broker])[broker].result(10)
    assert configs["log.roll.ms"].value == "7200000"
    assert configs["log.roll.ms"].source == ConfigSource.DYNAMIC_BROKER_CONFIG.value


def test_the_rack_is_in_describe_cluster(started: Cluster) -> None:
    admin = AdminClient({"bootstrap.servers": started.bootstrap_servers})
    nodes = admin.describe_cluster(request_timeout=10).result(10).nodes
    assert [(n.id, n.rack) for n in nodes] == [(1, "rack-a")]
    kadmin = KafkaAdminClient(bootstrap_servers=started.bootstrap_servers)
    try:
        assert [b["rack"] for b in kadmin.describe_cluster()["brokers"]] == ["rack-a"]
    finally:
        kadmin.close()


def test_topic_settings_kafka_accepts_are_accepted(bootstrap: str, topic: str) -> None:
    kadmin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        kadmin.create_topics([KNewTopic(topic, 1, 1, topic_configs=KAFKA_ACCEPTS)])
    finally:
        kadmin.close()
    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    configs = admin.describe_configs([resource])[resource].result(10)
    for name, value in KAFKA_ACCEPTS.items():
        assert configs[name].value == value
        assert configs[name].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    second = f"{topic}-confluent"
    admin.create_topics([NewTopic(second, 1, 1, config=KAFKA_ACCEPTS)])[second].result(10)
    with pytest.raises(KafkaException, match="unknown topic configuration"):
        admin.create_topics([NewTopic(f"{topic}-bad", 1, 1, config={"no.such.setting": "1"})])[
            f"{topic}-bad"
        ].result(10)


def test_group_settings_with_both_admin_clients(bootstrap: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    change = ConfigResource(
        ConfigResource.Type.GROUP,
        "configured-group",
        incremental_configs=[
            ConfigEntry(
                "consumer.session.timeout.ms", "50000", incremental_operation=AlterConfigOpType.SET
            )
        ],
    )
    admin.incremental_alter_configs([change])[change].result(10)
    group = ConfigResource(ConfigResource.Type.GROUP, "configured-group")
    configs = admin.describe_configs([group])[group].result(10)
    assert configs["consumer.session.timeout.ms"].value == "50000"
    assert configs["consumer.session.timeout.ms"].source == ConfigSource.GROUP_CONFIG.value
    assert configs["consumer.heartbeat.interval.ms"].is_default
    bad = ConfigResource(
        ConfigResource.Type.GROUP,
        "configured-group",
        incremental_configs=[
            ConfigEntry("session.timeout.ms", "1", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    with pytest.raises(KafkaException, match="unknown group configuration"):
        admin.incremental_alter_configs([bad])[bad].result(10)
    kadmin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        kadmin.alter_configs(
            [
                KConfigResource(
                    ConfigResourceType.GROUP,
                    "configured-group",
                    configs={"consumer.heartbeat.interval.ms": "6000"},
                )
            ],
            incremental=True,
        )
        described = kadmin.describe_configs(
            [KConfigResource(ConfigResourceType.GROUP, "configured-group")], config_filter="all"
        )["group"]["configured-group"]
    finally:
        kadmin.close()
    assert described["consumer.heartbeat.interval.ms"]["value"] == "6000"
    # source 8 (GROUP_CONFIG), which kafka-python calls DYNAMIC_GROUP_CONFIG
    assert described["consumer.heartbeat.interval.ms"]["config_source"] == "DYNAMIC_GROUP_CONFIG"
    assert described["consumer.session.timeout.ms"]["value"] == "50000"


def test_describe_configs_says_not_applied_of_exactly_the_accepted_settings(
    started: Cluster,
) -> None:
    """The documentation DescribeConfigs returns, through kafka-python: "accepted, not
    applied here" for exactly the settings ``tests/docs/test_not_applied_settings`` holds
    the README and docs/ to (read from the definitions, as this is)."""
    topic = "not-applied"
    admin = KafkaAdminClient(bootstrap_servers=started.bootstrap_servers)
    try:
        admin.create_topics([KNewTopic(topic, 1, 1)])
        described = admin.describe_configs(
            [
                KConfigResource(ConfigResourceType.BROKER, "1"),
                KConfigResource(ConfigResourceType.TOPIC, topic),
            ],
            config_filter="all",
        )
    finally:
        admin.close()
    said = {
        name
        for resources in described.values()
        for configs in resources.values()
        for name, config in configs.items()
        if "accepted, not applied here" in (config["documentation"] or "")
    }
    assert said == NOT_APPLIED - GROUP_CONFIGS.keys()


def _incremental(
    admin: AdminClient, kind: ConfigResource.Type, name: str, *entries: ConfigEntry
) -> None:
    change = ConfigResource(kind, name, incremental_configs=list(entries))
    admin.incremental_alter_configs([change])[change].result(10)


def test_append_and_subtract_work_from_the_default(bootstrap: str, topic: str) -> None:
    """APPEND ``compact`` to a topic without an override: Kafka appends to the default
    ``delete`` (``delete,compact``), then SUBTRACT ``delete`` leaves ``compact``."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(10)
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    seen = []
    for op, value in (
        (AlterConfigOpType.APPEND, "compact"),
        (AlterConfigOpType.SUBTRACT, "delete"),
    ):
        entry = ConfigEntry("cleanup.policy", value, incremental_operation=op)
        _incremental(admin, ConfigResource.Type.TOPIC, topic, entry)
        seen.append(admin.describe_configs([resource])[resource].result(10)["cleanup.policy"].value)
    assert seen == ["delete,compact", "compact"]
    append_to_a_number = ConfigEntry(
        "retention.ms", "1", incremental_operation=AlterConfigOpType.APPEND
    )
    with pytest.raises(KafkaException, match="because its type is not LIST"):
        _incremental(admin, ConfigResource.Type.TOPIC, topic, append_to_a_number)


def test_every_kafka_broker_setting_is_taken_and_read_only_ones_are_refused(
    started: Cluster,
) -> None:
    """A per-broker setting Kafka-Lite does not act on is accepted for a broker (with both
    admin clients) and listed as not applied; a start-up-only one
    (auto.create.topics.enable) is refused as Kafka refuses it, and so is a per-broker one
    set as every broker's default (resource "", which only Kafka's own tools send)."""
    admin = AdminClient({"bootstrap.servers": started.bootstrap_servers})
    relogin = "sasl.kerberos.min.time.before.relogin"
    set_relogin = ConfigEntry(relogin, "120000", incremental_operation=AlterConfigOpType.SET)
    _incremental(admin, ConfigResource.Type.BROKER, "1", set_relogin)
    broker = ConfigResource(ConfigResource.Type.BROKER, "1")
    configs = admin.describe_configs([broker])[broker].result(10)
    assert configs[relogin].value == "120000"
    assert configs["auto.create.topics.enable"].is_read_only
    no_auto_create = ConfigEntry(
        "auto.create.topics.enable", "false", incremental_operation=AlterConfigOpType.SET
    )
    with pytest.raises(KafkaException, match="Cannot update these configs dynamically") as no:
        _incremental(admin, ConfigResource.Type.BROKER, "1", no_auto_create)
    assert no.value.args[0].name() == "INVALID_REQUEST"
    kadmin = KafkaAdminClient(bootstrap_servers=started.bootstrap_servers)
    try:
        answer = kadmin.alter_configs(
            [KConfigResource(ConfigResourceType.BROKER, "1", {relogin: "180000"})],
            raise_on_unknown=False,
        )
    finally:
        kadmin.close()
    assert answer == {"broker": {"1": "OK"}}
    with RawConnection(started.bootstrap_servers) as conn:
        response = conn.request(
            iac.IncrementalAlterConfigsRequest(
                resources=(
                    iac.AlterConfigsResource(
                        resource_type=4,
                        resource_name="",
                        configs=(iac.AlterableConfig(name=relogin, config_operation=0, value="1"),),
                    ),
                ),
                validate_only=False,
            )
        )
    (result,) = response.responses
    assert result.error_code == 42  # INVALID_REQUEST
    assert "broker id must be specified" in (result.error_message or "")
