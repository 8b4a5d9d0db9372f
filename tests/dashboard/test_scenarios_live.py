"""Each recorded scenario again, live: a fresh cluster, the same faults, and the dashboard
model must show the same as on the stored recording (``expectations.py``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kafkalite.cluster import Cluster
from tests.dashboard.expectations import EXPECTATIONS
from tests.dashboard.scenarios import SCENARIOS

pytestmark = [pytest.mark.labs, pytest.mark.slow]


@pytest.mark.parametrize("scenario", sorted(EXPECTATIONS))
def test_scenario_on_a_live_cluster(scenario: str, make_cluster3: Callable[..., Cluster]) -> None:
    EXPECTATIONS[scenario](SCENARIOS[scenario](make_cluster3()))
