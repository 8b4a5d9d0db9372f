"""What a streaming query's checkpoint says, read from its files: the lab shows these
offsets next to the brokers' own.

Spark writes, for micro-batch ``N``, ``offsets/N`` (the planned end offsets, written
before the batch runs) and then ``commits/N`` (written after the sink committed it). On
restart it replays the last batch that has offsets but no commit. Each ``offsets/N`` file
is a version line, a metadata line, then one JSON line per source, here Spark's Kafka
shape ``{"topic": {"partition": next offset}}``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True, slots=True)
class CheckpointState:
    """The last planned and the last committed micro-batch, and their source offsets."""

    planned_batch: int | None
    committed_batch: int | None
    planned: dict[str, dict[int, int]]
    committed: dict[str, dict[int, int]]

    @property
    def replay_pending(self) -> bool:
        """A batch was planned but not committed: a restart runs it again."""
        return self.planned_batch is not None and self.planned_batch != self.committed_batch


def _batches(directory: Path) -> list[int]:
    if not directory.is_dir():
        return []
    return sorted(int(p.name) for p in directory.iterdir() if p.name.isdigit())


def _source_offsets(path: Path) -> dict[str, dict[int, int]]:
    lines = path.read_text().splitlines()
    found: dict[str, Any] = json.loads(lines[2]) if len(lines) > 2 else {}
    return {t: {int(p): int(o) for p, o in parts.items()} for t, parts in found.items()}


def read_checkpoint(checkpoint: str | Path) -> CheckpointState:
    root = Path(checkpoint)
    planned = _batches(root / "offsets")
    committed = _batches(root / "commits")
    last_planned = planned[-1] if planned else None
    last_committed = committed[-1] if committed else None
    return CheckpointState(
        planned_batch=last_planned,
        committed_batch=last_committed,
        planned=_source_offsets(root / "offsets" / str(last_planned)) if planned else {},
        committed=(_source_offsets(root / "offsets" / str(last_committed)) if committed else {}),
    )
