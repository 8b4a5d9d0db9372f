"""A replica fetcher on a fake leader connection and fake local replicas, for driving its
loop without sockets or logs."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from kafkalite.broker.data_plane.replica_fetcher import ReplicaFetcher
from kafkalite.metadata.config_defs import BROKER_CONFIGS
from kafkalite.metadata.image import MetadataImage

REQUEST_TIMEOUT_MS = int(BROKER_CONFIGS["request.timeout.ms"].default)


def empty_replica() -> Any:
    """A local replica of an empty log that follows broker 1 in epoch 0."""
    return SimpleNamespace(
        leader=1,
        leader_epoch=0,
        log_end_offset=0,
        log_start_offset=0,
        log=SimpleNamespace(leader_epoch_cache=SimpleNamespace(latest_epoch=-1)),
        append_as_follower=lambda records, high_watermark: 0,
        follow_log_start_offset=lambda offset: False,
    )


def follower_fetcher(connection: Any, replicas: dict[Any, Any]) -> ReplicaFetcher:
    """Broker 2's fetcher from leader 1 over ``connection``, its local replicas
    ``replicas`` (partition -> replica); started on the running loop."""
    return ReplicaFetcher(
        broker_id=2,
        leader_id=1,
        connection=connection,
        replicas=SimpleNamespace(partitions=replicas),  # type: ignore[arg-type]
        image=MetadataImage(),
        emit=lambda *args, **fields: None,
        spawn=lambda coro, name: asyncio.create_task(coro, name=name),
        request_timeout_s=REQUEST_TIMEOUT_MS / 1000,
    )
