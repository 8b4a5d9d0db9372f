"""One module per scenario, named for what it shows; ``scenario_class(slug)`` loads one.

A module is loaded only when its scenario is opened, so a lab image without pyspark shows
every other scenario (``spark`` fails to open with one clear line).
"""

from __future__ import annotations

import importlib

from kafkalite.demo.catalog import scenario_info
from kafkalite.demo.scenario import Scenario


def scenario_class(slug: str) -> type[Scenario]:
    info = scenario_info(slug)
    module = importlib.import_module(f"{__name__}.{slug.replace('-', '_')}")
    found: type[Scenario] = module.SCENARIO
    assert found.info == info, f"{module.__name__} is not the {slug} scenario"
    return found
