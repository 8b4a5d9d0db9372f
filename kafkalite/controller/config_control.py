"""Dynamic settings of topics, brokers and groups (Kafka's ``ConfigurationControlManager``):
validated, then written as ``ConfigRecord``s; a deleted override is a record with no value.
"""

from __future__ import annotations

from kafkalite.controller.replication_control import ReplicationControlManager
from kafkalite.controller.results import ApiResult, ControllerResult
from kafkalite.metadata.config_defs import (
    InvalidConfigError,
    validate_broker_configs,
    validate_group_configs,
    validate_topic_configs,
)
from kafkalite.metadata.image import MetadataImage
from kafkalite.metadata.records import ConfigRecord, MetadataRecord
from kafkalite.protocol.errors import ErrorCode


class ConfigurationControlManager:
    def __init__(self, image: MetadataImage, replication: ReplicationControlManager) -> None:
        self.image = image
        self.replication = replication

    def alter_configs(
        self,
        resource_type: str,
        resource_name: str,
        changes: dict[str, str | None],
        replace_all: bool,
        validate_only: bool = False,
    ) -> ControllerResult[ApiResult]:
        """Set (or, with ``None``, delete) overrides; ``replace_all`` is legacy AlterConfigs."""
        if resource_type == "topic" and self.image.topic(resource_name) is None:
            return ControllerResult(
                [],
                ApiResult(
                    ErrorCode.unknown_topic_or_partition, f"Topic {resource_name} does not exist"
                ),
            )
        if (
            resource_type == "broker"
            and resource_name
            and not (resource_name.isdigit() and int(resource_name) in self.image.brokers)
        ):
            return ControllerResult(
                [], ApiResult(ErrorCode.invalid_request, f"Unknown broker {resource_name!r}")
            )
        present = {k: v for k, v in changes.items() if v is not None}
        validate = {
            "topic": validate_topic_configs,
            "broker": validate_broker_configs,
            "group": validate_group_configs,
        }[resource_type]
        try:
            validate(present)
        except InvalidConfigError as exc:
            return ControllerResult([], ApiResult(ErrorCode.invalid_config, str(exc)))
        table = self.image.config_table(resource_type)
        current = table.get(resource_name, {})
        effective = dict(changes)
        if replace_all:
            effective.update({k: None for k in current if k not in changes})
        records: list[MetadataRecord] = [
            ConfigRecord(resource_type, resource_name, key, value)
            for key, value in effective.items()
            if not (value is None and key not in current)
        ]
        if resource_type == "topic" and effective.get("unclean.leader.election.enable") == "true":
            records.extend(self.replication.unclean_elections(resource_name))
        return ControllerResult([] if validate_only else records, ApiResult())
