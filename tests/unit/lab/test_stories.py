"""What a failure story counts: acknowledgements during a fault, and the story's tally."""

from __future__ import annotations

from kafkalite.lab.history import History, Op, OpKind
from kafkalite.lab.stories import Story


def _story() -> Story:
    history = History()
    for t in (1.0, 2.0, 2.5, 4.0):
        history.record(Op(t, OpKind.ACK, "p", "t", 0, b"%.1f" % t, 0))
    history.record(Op(3.0, OpKind.ERROR, "p", "t", 0, b"e", error="KafkaTimeoutError"))
    history.record(Op(5.0, OpKind.SEND, "p", "t", None, b"unanswered"))
    return Story(history, {"fault": (2.0, 4.0)})


def test_acknowledgements_during_a_phase_include_its_start_not_its_end() -> None:
    assert _story().acked_during("fault") == 2


def test_the_tally_counts_answers_only() -> None:
    assert _story().tally(lost=1) == {"acked": 4, "failed": 1, "availability": 0.8, "lost": 1}


def test_a_story_without_answers_is_not_available() -> None:
    assert Story(History()).tally(lost=0)["availability"] == 0.0
