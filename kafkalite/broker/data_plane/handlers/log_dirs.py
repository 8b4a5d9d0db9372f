"""DescribeLogDirs and AlterReplicaLogDirs: where a broker keeps its partitions on disk.

Each Kafka-Lite broker has one log directory (``<data dir>/logs``), so DescribeLogDirs
shows a student how big each replica's log is and how far it lags its high watermark,
and AlterReplicaLogDirs can only keep a replica where it is (any other directory is
LOG_DIR_NOT_FOUND, as on a Kafka broker that does not have that directory).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.data_plane.replica_manager import ReplicaManager
from kafkalite.broker.handler_registry import api
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.errors import ErrorCode


class LogDirApis:
    """The one log directory and the replicas the replica manager hosts in it."""

    def __init__(self, replicas: ReplicaManager, log_dir: Path) -> None:
        self._replicas = replicas
        self._log_dir = str(log_dir)

    @api(ApiKeys.DESCRIBE_LOG_DIRS, 1, 5)
    async def describe_log_dirs(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        hosted = self._replicas.partitions
        asked = (
            None
            if request.topics is None
            else {(t.topic, int(p)) for t in request.topics for p in t.partitions}
        )
        by_topic: dict[str, list[Any]] = {}
        for (topic, index), partition in sorted(hosted.items()):
            if asked is not None and (topic, index) not in asked:
                continue
            by_topic.setdefault(topic, []).append(
                s.DescribeLogDirsPartition(
                    partition_index=index,
                    partition_size=partition.log.size_in_bytes,
                    offset_lag=max(partition.high_watermark - partition.log_end_offset, 0),
                    is_future_key=False,
                )
            )
        directory = self._log_dir
        usage = shutil.disk_usage(directory)
        return s.DescribeLogDirsResponse(
            throttle_time=0,
            error_code=ErrorCode.none,
            results=(
                s.DescribeLogDirsResult(
                    error_code=ErrorCode.none,
                    log_dir=directory,
                    topics=tuple(
                        s.DescribeLogDirsTopic(name=name, partitions=tuple(parts))
                        for name, parts in by_topic.items()
                    ),
                    total_bytes=usage.total,
                    usable_bytes=usage.free,
                    is_cordoned=False,
                ),
            ),
        )

    @api(ApiKeys.ALTER_REPLICA_LOG_DIRS, 1, 2)
    async def alter_replica_log_dirs(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        hosted = self._replicas.partitions
        here = self._log_dir

        def outcome(path: str, topic: str, index: int) -> ErrorCode:
            if path != here:
                return ErrorCode.log_dir_not_found
            if (topic, index) not in hosted:
                return ErrorCode.replica_not_available
            return ErrorCode.none  # already there

        return s.AlterReplicaLogDirsResponse(
            throttle_time=0,
            results=tuple(
                s.AlterReplicaLogDirTopicResult(
                    topic_name=t.name,
                    partitions=tuple(
                        s.AlterReplicaLogDirPartitionResult(
                            partition_index=p, error_code=outcome(d.path, t.name, int(p))
                        )
                        for p in t.partitions
                    ),
                )
                for d in request.dirs
                for t in d.topics
            ),
        )
