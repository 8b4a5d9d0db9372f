"""DescribeConfigs, AlterConfigs and IncrementalAlterConfigs for topics and brokers.

Each value says where it comes from (a topic override, a dynamic broker setting, or the
default), so a student who sets ``min.insync.replicas`` on a topic can see it win over
the broker-wide value. Changes go through the controller and apply live.
"""

from __future__ import annotations

from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.handlers.registry import handles
from kafkalite.metadata.config_defs import BROKER_CONFIGS, TOPIC_CONFIGS
from kafkalite.metadata.image import MetadataImage
from kafkalite.protocol.errors import ErrorCode

TOPIC = 2
BROKER = 4
DYNAMIC_TOPIC_CONFIG = 1
DYNAMIC_BROKER_CONFIG = 2
DYNAMIC_DEFAULT_BROKER_CONFIG = 3
DEFAULT_CONFIG = 5
_TOPIC_SOURCES = {
    "topic": DYNAMIC_TOPIC_CONFIG,
    "broker": DYNAMIC_DEFAULT_BROKER_CONFIG,
    "default": DEFAULT_CONFIG,
}
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def _broker_value(image: MetadataImage, broker: str, name: str) -> tuple[str, int]:
    if broker and name in image.broker_configs.get(broker, {}):
        return image.broker_configs[broker][name], DYNAMIC_BROKER_CONFIG
    if name in image.broker_configs.get("", {}):
        return image.broker_configs[""][name], DYNAMIC_DEFAULT_BROKER_CONFIG
    return BROKER_CONFIGS[name].default, DEFAULT_CONFIG


def _describe_one(ctx: RequestContext, resource: Any) -> Any:
    s = ctx.schema
    image = ctx.broker.image
    rtype, rname = int(resource.resource_type), resource.resource_name
    keys = resource.configuration_keys
    entries: list[tuple[str, str, int, Any]] = []
    if rtype == TOPIC and image.topic(rname) is not None:
        for name, definition in TOPIC_CONFIGS.items():
            value, source = image.topic_config_source(rname, name)
            entries.append((name, value, _TOPIC_SOURCES[source], definition))
    elif rtype == BROKER and (rname == "" or rname == str(ctx.broker.broker_id)):
        for name, definition in BROKER_CONFIGS.items():
            value, source_code = _broker_value(image, rname, name)
            entries.append((name, value, source_code, definition))
    else:
        error = (
            ErrorCode.unknown_topic_or_partition if rtype == TOPIC else ErrorCode.invalid_request
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
            name=name,
            value=value,
            read_only=definition.read_only,
            is_default=source == DEFAULT_CONFIG,
            config_source=source,
            is_sensitive=False,
            synonyms=(),
            config_type=definition.type.value,
            documentation=definition.doc,
        )
        for name, value, source, definition in entries
        if keys is None or name in keys
    )
    return s.DescribeConfigsResult(
        error_code=ErrorCode.none,
        error_message=None,
        resource_type=rtype,
        resource_name=rname,
        configs=configs,
    )


@handles(32, 1, 4)
async def describe_configs(ctx: RequestContext, request: Any) -> Any:
    return ctx.schema.DescribeConfigsResponse(
        throttle_time=0, results=tuple(_describe_one(ctx, r) for r in request.resources)
    )


def _kind(rtype: int) -> str | None:
    return {TOPIC: "topic", BROKER: "broker"}.get(rtype)


async def _alter(
    ctx: RequestContext,
    resource: Any,
    changes: dict[str, str | None],
    replace_all: bool,
    validate_only: bool,
) -> Any:
    s = ctx.schema
    kind = _kind(int(resource.resource_type))
    if kind is None:
        return s.AlterConfigsResourceResponse(
            error_code=ErrorCode.invalid_request,
            error_message="unsupported resource type",
            resource_type=resource.resource_type,
            resource_name=resource.resource_name,
        )
    result = await ctx.broker.controller.alter_configs(
        kind, resource.resource_name, changes, replace_all, validate_only
    )
    return s.AlterConfigsResourceResponse(
        error_code=result.error,
        error_message=result.message,
        resource_type=resource.resource_type,
        resource_name=resource.resource_name,
    )


@handles(33, 0, 2, forward=True)
async def alter_configs(ctx: RequestContext, request: Any) -> Any:
    responses = [
        await _alter(
            ctx, r, {c.name: c.value for c in r.configs}, True, bool(request.validate_only)
        )
        for r in request.resources
    ]
    return ctx.schema.AlterConfigsResponse(throttle_time=0, responses=tuple(responses))


def _incremental_changes(ctx: RequestContext, resource: Any) -> dict[str, str | None]:
    """Resolve SET/DELETE/APPEND/SUBTRACT into plain new values."""
    image = ctx.broker.image
    current: dict[str, str] = (
        image.topic_configs if int(resource.resource_type) == TOPIC else image.broker_configs
    ).get(resource.resource_name, {})
    changes: dict[str, str | None] = {}
    for c in resource.configs:
        op = int(c.config_operation)
        if op == SET:
            changes[c.name] = c.value
        elif op == DELETE:
            changes[c.name] = None
        else:
            items = [x for x in current.get(c.name, "").split(",") if x]
            delta = [x for x in (c.value or "").split(",") if x]
            merged = (
                items + [x for x in delta if x not in items]
                if op == APPEND
                else [x for x in items if x not in delta]
            )
            changes[c.name] = ",".join(merged) if merged else None
    return changes


@handles(44, 0, 1, forward=True)
async def incremental_alter_configs(ctx: RequestContext, request: Any) -> Any:
    responses = [
        await _alter(ctx, r, _incremental_changes(ctx, r), False, bool(request.validate_only))
        for r in request.resources
    ]
    return ctx.schema.IncrementalAlterConfigsResponse(throttle_time=0, responses=tuple(responses))
