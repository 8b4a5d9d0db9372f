"""The dashboard model driven by ``/state`` snapshots and events recorded from a real
three-broker cluster (``python -m tests.dashboard.scenarios`` re-records them): a killed
leader, a paused follower, an isolated ``acks=1`` leader whose writes are truncated, and
transactions committed, aborted and left open. What each must show is in
``tests/dashboard/expectations.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.dashboard.expectations import EXPECTATIONS

pytestmark = pytest.mark.unit

RECORDED = Path(__file__).parent / "recorded"


@pytest.mark.parametrize("scenario", sorted(EXPECTATIONS))
def test_recorded_scenario(scenario: str) -> None:
    EXPECTATIONS[scenario](json.loads((RECORDED / f"{scenario}.json").read_text()))


def test_recorded_replica_rows_carry_the_contract_fields() -> None:
    """Contract 2: each replica row has leader_epoch, log_start_offset, in_isr and state."""
    for path in RECORDED.glob("*.json"):
        for step in json.loads(path.read_text()):
            for p in step["status"]["partitions"]:
                for r in p["replicas"]:
                    assert {"leader_epoch", "log_start_offset", "in_isr", "state"} <= set(r)
