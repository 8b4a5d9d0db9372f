"""A broker's life follows Kafka's ``BrokerState`` order, forward only; metadata applied
while STARTING is history being replayed."""

from __future__ import annotations

import pytest

from kafkalite.broker.broker_state import (
    BrokerState,
    BrokerStateMachine,
    IllegalBrokerStateTransition,
)

pytestmark = pytest.mark.unit


def test_a_broker_moves_through_kafkas_states_in_order() -> None:
    machine = BrokerStateMachine()
    seen = [machine.state]
    for state in list(BrokerState)[1:]:
        machine.move_to(state)
        seen.append(machine.state)
    assert seen == list(BrokerState)


def test_only_starting_replays_metadata() -> None:
    machine = BrokerStateMachine()
    replaying = []
    for state in list(BrokerState)[1:]:
        machine.move_to(state)
        replaying.append((state, machine.replaying_metadata))
    assert [s for s, r in replaying if r] == [BrokerState.STARTING]


@pytest.mark.parametrize(
    ("path", "illegal"),
    [
        ([], BrokerState.RUNNING),  # skipping the catch-up
        ([BrokerState.STARTING, BrokerState.RECOVERY], BrokerState.STARTING),  # back
        ([BrokerState.STARTING], BrokerState.STARTING),  # staying is no move
        ([BrokerState.SHUTTING_DOWN], BrokerState.RUNNING),  # after the end
    ],
)
def test_a_move_kafka_never_makes_is_refused(path: list[BrokerState], illegal: BrokerState) -> None:
    machine = BrokerStateMachine()
    for state in path:
        machine.move_to(state)
    with pytest.raises(IllegalBrokerStateTransition):
        machine.move_to(illegal)
    assert machine.state is (path[-1] if path else BrokerState.NOT_RUNNING)


def test_a_stop_asked_during_start_up_shuts_down_from_there() -> None:
    machine = BrokerStateMachine()
    machine.move_to(BrokerState.STARTING)
    machine.move_to(BrokerState.SHUTTING_DOWN)
    assert machine.state is BrokerState.SHUTTING_DOWN and not machine.replaying_metadata
