"""The states of a coordinator's partitions: Loading, then Loaded, in one leader epoch;
what a request gets in each."""

from __future__ import annotations

import pytest

from kafkalite.coordinator.partition_loads import LoadState, OwnedPartition, PartitionLoads
from kafkalite.protocol.errors import ErrorCode

pytestmark = pytest.mark.unit
E = ErrorCode


def test_a_partition_is_served_only_once_loaded_in_the_epoch_it_is_led_in() -> None:
    loads = PartitionLoads()
    assert loads.needs_loading(0, 3)
    loads.begin_loading(0, 3)
    assert not loads.needs_loading(0, 3)
    assert loads.error_for(0, 3) == E.coordinator_load_in_progress
    assert loads.loaded_epoch(0) is None and loads.any_loading()
    loads.complete_loading(0, 3)
    assert loads.error_for(0, 3) == E.none
    assert loads.loaded_epoch(0) == 3 and not loads.any_loading()
    assert loads.owned() == {0: OwnedPartition(3, LoadState.LOADED)}


def test_not_led_is_not_coordinator() -> None:
    loads = PartitionLoads()
    assert loads.error_for(0, None) == E.not_coordinator
    loads.begin_loading(0, 1)
    loads.complete_loading(0, 1)
    assert loads.error_for(0, None) == E.not_coordinator
    assert loads.resign(0) and not loads.resign(0)
    assert loads.owned() == {}


def test_a_newer_epoch_loads_again_and_supersedes_an_older_load() -> None:
    loads = PartitionLoads()
    loads.begin_loading(0, 1)
    loads.complete_loading(0, 1)
    assert loads.needs_loading(0, 2)  # another coordinator may have written in between
    loads.begin_loading(0, 2)
    assert loads.error_for(0, 2) == E.coordinator_load_in_progress
    assert not loads.is_loading(0, 1) and loads.is_loading(0, 2)
    with pytest.raises(RuntimeError):
        loads.complete_loading(0, 1)  # the older load may not complete the newer one


def test_a_resigned_load_cannot_complete() -> None:
    loads = PartitionLoads()
    loads.begin_loading(0, 1)
    loads.resign(0)
    assert not loads.is_loading(0, 1)
    with pytest.raises(RuntimeError):
        loads.complete_loading(0, 1)
