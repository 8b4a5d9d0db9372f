"""The presenter's state machine: what → ← R do in each state, as a clicker drives it."""

from __future__ import annotations

import pytest

from kafkalite.demo.steps import SET_UP, Command, Key, Outcome, Phase, Step, Stepper

pytestmark = pytest.mark.unit


def noop() -> Outcome:
    return Outcome("done")


STEPS = [
    Step("write nine records", noop),
    Step("which are committed?"),
    Step("crash the leader", noop),
]


def opened() -> Stepper:
    stepper = Stepper(STEPS)
    assert stepper.start() == SET_UP
    stepper.finished()
    return stepper


def test_opens_on_the_title_card_after_setting_up() -> None:
    stepper = Stepper(STEPS)
    assert stepper.phase == Phase.SETTING_UP
    assert stepper.press(Key.NEXT) is None, "keys wait for the set-up"
    stepper.start()
    stepper.finished()
    assert (stepper.phase, stepper.index, stepper.step) == (Phase.READY, -1, None)


def test_next_runs_each_action_once_and_a_question_needs_no_run() -> None:
    stepper = opened()
    assert stepper.press(Key.NEXT) == Command(0)
    assert stepper.phase == Phase.RUNNING and stepper.running == STEPS[0]
    assert stepper.press(Key.NEXT) is None, "one thing on the cluster at a time"
    stepper.finished(Outcome("nine written"))
    assert (stepper.index, stepper.outcome) == (0, Outcome("nine written"))
    assert stepper.press(Key.NEXT) is None, "a question runs nothing"
    assert stepper.index == 1 and stepper.step is not None and stepper.step.question
    assert stepper.press(Key.NEXT) == Command(2)
    stepper.finished(Outcome("crashed"))
    assert stepper.at_end and stepper.press(Key.NEXT) is None


def test_back_reviews_without_undoing_and_next_walks_forward_again() -> None:
    stepper = opened()
    stepper.press(Key.NEXT)
    stepper.finished(Outcome("nine written"))
    stepper.press(Key.NEXT)
    assert stepper.press(Key.BACK) is None
    assert stepper.index == 0 and stepper.reviewing
    assert stepper.outcome == Outcome("nine written")
    assert stepper.press(Key.NEXT) is None, "step 1 already ran: shown, not run again"
    assert stepper.index == 1 and not stepper.reviewing
    for _ in range(5):
        stepper.press(Key.BACK)
    assert stepper.index == -1


def test_a_failed_step_is_not_retried_and_reset_sets_up_again() -> None:
    stepper = opened()
    stepper.press(Key.NEXT)
    stepper.failed("TimeoutError: waited 30 s for a new leader")
    assert stepper.phase == Phase.FAILED and stepper.error is not None
    assert stepper.press(Key.NEXT) is None
    assert stepper.press(Key.RESET) == SET_UP
    assert stepper.press(Key.RESET) is None, "ignored while setting up"
    stepper.finished()
    assert (stepper.phase, stepper.index, stepper.outcomes, stepper.error) == (
        Phase.READY,
        -1,
        [],
        None,
    )


def test_a_scenario_has_steps() -> None:
    with pytest.raises(ValueError):
        Stepper([])
    with pytest.raises(RuntimeError):
        opened().finished()
