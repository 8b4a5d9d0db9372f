"""DescribeConfigs, AlterConfigs and IncrementalAlterConfigs for topics, brokers and groups.

Each value says where it comes from (a topic override, a dynamic broker setting, a start-up
setting, or the default; see ``metadata.config_sources``), so a student who sets
``min.insync.replicas`` on a topic can see it win over the broker-wide value. Changes go
through the controller and apply live.

A client's change of a broker setting is refused where Kafka's broker refuses it
(``ConfigAdminManager``): a read-only one (``auto.create.topics.enable``...) or a
per-broker one set as every broker's default, INVALID_REQUEST with Kafka's message. A
broker's own request (client id ``kafkalite-broker-<id>``) is not: it promotes the
settings it was started with to every broker's default, which Kafka reads from each
broker's server.properties instead.
IncrementalAlterConfigs APPEND and SUBTRACT work on list settings from their current
value, or their default when they have none.
"""

from __future__ import annotations

from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.control_plane_api import BROKER_CLIENT_ID_PREFIX, Controller
from kafkalite.broker.handler_registry import api
from kafkalite.metadata.config_defs import (
    BROKER_CONFIGS,
    GROUP_CONFIGS,
    TOPIC_CONFIGS,
    ConfigDef,
    ConfigType,
    InvalidConfigError,
    UpdateMode,
    dynamic_broker_change_error,
    incremental_value,
)
from kafkalite.metadata.config_sources import (
    DescribedConfig,
    describe_broker,
    describe_cluster_defaults,
    describe_group,
    describe_topic,
)
from kafkalite.metadata.image import MetadataImage
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.errors import ErrorCode

TOPIC = 2
BROKER = 4
GROUP = 32
RESOURCE_KINDS = {TOPIC: "topic", BROKER: "broker", GROUP: "group"}
DEFINITIONS: dict[str, dict[str, ConfigDef]] = {
    "topic": TOPIC_CONFIGS,
    "broker": BROKER_CONFIGS,
    "group": GROUP_CONFIGS,
}
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def _read_only(definition: ConfigDef) -> bool:
    """Read-only as Kafka reports it (a start-up-only setting, in Kafka or here)."""
    return definition.read_only or definition.update_mode is UpdateMode.READ_ONLY


class ConfigApis:
    """Reads from this broker's metadata image; changes go to the controller."""

    def __init__(
        self,
        broker_id: int,
        image: MetadataImage,
        static_configs: dict[str, str],
        controller: Controller,
    ) -> None:
        self._broker_id = broker_id
        self._image = image
        self._static_configs = static_configs
        """What this broker was started with: its ``--config`` settings, its identity."""
        self._controller = controller

    def _described(self, rtype: int, rname: str) -> list[DescribedConfig] | None:
        """The resource's settings; None when there is no such resource here."""
        image = self._image
        if rtype == TOPIC and image.topic(rname) is not None:
            return describe_topic(image, rname, self._broker_id, self._static_configs)
        if rtype == BROKER and rname == str(self._broker_id):
            return describe_broker(image, self._broker_id, self._static_configs)
        if rtype == BROKER and rname == "":
            return describe_cluster_defaults(image)
        if rtype == GROUP and rname:
            return describe_group(image, rname)
        return None

    def _describe_one(self, ctx: RequestContext, resource: Any, synonyms: bool) -> Any:
        s = ctx.schema
        rtype, rname = int(resource.resource_type), resource.resource_name
        keys = resource.configuration_keys
        described = self._described(rtype, rname)
        if described is None:
            error = (
                ErrorCode.unknown_topic_or_partition
                if rtype == TOPIC
                else ErrorCode.invalid_request
            )
            return s.DescribeConfigsResult(
                error_code=error,
                error_message=f"Unknown resource {rname!r}",
                resource_type=rtype,
                resource_name=rname,
                configs=(),
            )
        configs = tuple(
            s.DescribeConfigsResourceResult(
                name=c.name,
                value=None if c.definition.type is ConfigType.PASSWORD else c.value,
                read_only=_read_only(c.definition),
                is_default=c.is_default,
                config_source=int(c.source),
                is_sensitive=c.definition.type is ConfigType.PASSWORD,
                synonyms=tuple(
                    s.DescribeConfigsSynonym(name=y.name, value=y.value, source=int(y.source))
                    for y in c.synonyms
                )
                if synonyms
                else (),
                config_type=c.definition.type.value,
                documentation=c.definition.doc,
            )
            for c in described
            if not keys or c.name in keys
        )
        return s.DescribeConfigsResult(
            error_code=ErrorCode.none,
            error_message=None,
            resource_type=rtype,
            resource_name=rname,
            configs=configs,
        )

    @api(ApiKeys.DESCRIBE_CONFIGS, 1, 4)
    async def describe_configs(self, ctx: RequestContext, request: Any) -> Any:
        synonyms = bool(getattr(request, "include_synonyms", False))
        return ctx.schema.DescribeConfigsResponse(
            throttle_time=0,
            results=tuple(self._describe_one(ctx, r, synonyms) for r in request.resources),
        )

    async def _alter(
        self,
        ctx: RequestContext,
        resource: Any,
        changes: dict[str, str | None],
        replace_all: bool,
        validate_only: bool,
    ) -> Any:
        s = ctx.schema
        kind = RESOURCE_KINDS.get(int(resource.resource_type))
        if kind is None:
            return s.AlterConfigsResourceResponse(
                error_code=ErrorCode.invalid_request,
                error_message="unsupported resource type",
                resource_type=resource.resource_type,
                resource_name=resource.resource_name,
            )
        from_broker = (ctx.request.client_id or "").startswith(BROKER_CLIENT_ID_PREFIX)
        if kind == "broker" and not from_broker:
            setting = [k for k, v in changes.items() if v is not None]
            refused = dynamic_broker_change_error(resource.resource_name, setting)
            if refused is not None:
                return s.AlterConfigsResourceResponse(
                    error_code=ErrorCode.invalid_request,
                    error_message=refused,
                    resource_type=resource.resource_type,
                    resource_name=resource.resource_name,
                )
        result = await self._controller.alter_configs(
            kind, resource.resource_name, changes, replace_all, validate_only
        )
        return s.AlterConfigsResourceResponse(
            error_code=result.error,
            error_message=result.message,
            resource_type=resource.resource_type,
            resource_name=resource.resource_name,
        )

    @api(ApiKeys.ALTER_CONFIGS, 0, 2, forward=True)
    async def alter_configs(self, ctx: RequestContext, request: Any) -> Any:
        responses = [
            await self._alter(
                ctx, r, {c.name: c.value for c in r.configs}, True, bool(request.validate_only)
            )
            for r in request.resources
        ]
        return ctx.schema.AlterConfigsResponse(throttle_time=0, responses=tuple(responses))

    def _incremental_changes(self, resource: Any) -> dict[str, str | None]:
        """Resolve SET/DELETE/APPEND/SUBTRACT into plain new values (InvalidConfigError for
        APPEND or SUBTRACT on an unknown or non-list setting)."""
        kind = RESOURCE_KINDS.get(int(resource.resource_type), "broker")
        current = self._image.config_table(kind).get(resource.resource_name, {})
        changes: dict[str, str | None] = {}
        for c in resource.configs:
            op = int(c.config_operation)
            if op == SET:
                changes[c.name] = c.value
            elif op == DELETE:
                changes[c.name] = None
            else:
                definition = DEFINITIONS[kind].get(c.name)
                if definition is None:
                    raise InvalidConfigError(c.name, c.value, f"unknown {kind} configuration")
                now = changes[c.name] if c.name in changes else current.get(c.name)
                changes[c.name] = incremental_value(definition, now, op == APPEND, c.value)
        return changes

    async def _alter_incrementally(
        self, ctx: RequestContext, resource: Any, validate_only: bool
    ) -> Any:
        try:
            changes = self._incremental_changes(resource)
        except InvalidConfigError as exc:
            return ctx.schema.AlterConfigsResourceResponse(
                error_code=ErrorCode.invalid_config,
                error_message=str(exc),
                resource_type=resource.resource_type,
                resource_name=resource.resource_name,
            )
        return await self._alter(ctx, resource, changes, False, validate_only)

    @api(ApiKeys.INCREMENTAL_ALTER_CONFIGS, 0, 1, forward=True)
    async def incremental_alter_configs(self, ctx: RequestContext, request: Any) -> Any:
        responses = [
            await self._alter_incrementally(ctx, r, bool(request.validate_only))
            for r in request.resources
        ]
        return ctx.schema.IncrementalAlterConfigsResponse(
            throttle_time=0, responses=tuple(responses)
        )
