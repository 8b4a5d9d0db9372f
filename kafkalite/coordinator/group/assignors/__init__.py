"""Server-side assignors of KIP-848 consumer groups: the coordinator, not a member,
computes the target assignment. ``group.consumer.assignors`` names the ones a broker
offers, the first being the default; a member may ask for one by name."""

from __future__ import annotations

from kafkalite.coordinator.group.assignors.range import RangeAssignor
from kafkalite.coordinator.group.assignors.spec import PartitionAssignor
from kafkalite.coordinator.group.assignors.uniform import UniformAssignor

ASSIGNORS: dict[str, PartitionAssignor] = {a.name: a for a in (UniformAssignor(), RangeAssignor())}
