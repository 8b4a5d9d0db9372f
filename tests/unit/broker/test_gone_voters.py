"""Which voters a broker takes for gone: found refused or reset, until a sign of life."""

from __future__ import annotations

import pytest

from kafkalite.broker.control_plane.gone_voters import GoneVoters

pytestmark = pytest.mark.unit


def test_a_voter_found_gone_stays_gone_until_heard_from() -> None:
    gone = GoneVoters(forget_after_ms=30_000)
    assert gone.found_gone(1, now_ms=100)
    assert not gone.found_gone(1, now_ms=200)  # not news
    assert gone.at(5_000) == {1}
    gone.heard_from(1)
    assert gone.at(5_000) == frozenset()


def test_hearing_from_a_voter_not_gone_changes_nothing() -> None:
    gone = GoneVoters()
    gone.found_gone(3, now_ms=0)
    gone.heard_from(2)
    assert gone.at(1) == {3}


def test_a_finding_expires_counted_from_the_last_failure() -> None:
    gone = GoneVoters(forget_after_ms=1_000)
    gone.found_gone(1, now_ms=0)
    gone.found_gone(1, now_ms=800)  # still refusing: the finding is renewed
    assert gone.at(1_700) == {1}
    assert gone.at(1_800) == frozenset()
    assert gone.found_gone(1, now_ms=1_900)  # news again
