"""Which voters a broker takes for gone: found refused or reset, until a sign of life."""

from __future__ import annotations

import pytest

from kafkalite.broker.control_plane.gone_voters import GoneVoters

pytestmark = pytest.mark.unit


def test_a_voter_found_gone_stays_gone_until_heard_from() -> None:
    gone = GoneVoters(forget_after_ms=30_000)
    assert gone.found_gone(1, now_ms=100, log_end_offset=0)
    assert not gone.found_gone(1, now_ms=200, log_end_offset=0)  # not news
    assert gone.at(5_000) == {1}
    gone.heard_from(1)
    assert gone.at(5_000) == frozenset()


def test_hearing_from_a_voter_not_gone_changes_nothing() -> None:
    gone = GoneVoters()
    gone.found_gone(3, now_ms=0, log_end_offset=0)
    gone.heard_from(2)
    assert gone.at(1) == {3}


def test_a_finding_expires_counted_from_the_last_failure() -> None:
    gone = GoneVoters(forget_after_ms=1_000)
    gone.found_gone(1, now_ms=0, log_end_offset=0)
    gone.found_gone(1, now_ms=800, log_end_offset=0)  # still refusing: the finding is renewed
    assert gone.at(1_700) == {1}
    assert gone.at(1_800) == frozenset()
    assert gone.found_gone(1, now_ms=1_900, log_end_offset=0)  # news again


def test_a_registration_replayed_from_before_the_finding_is_no_sign_of_life() -> None:
    """A broker that starts finds the killed controller gone when it asks for votes
    (its log then ends at 120), then replays the controller's unfencing of a few seconds
    before (offset 117): history. A registration appended after the finding is news."""
    gone = GoneVoters()
    gone.found_gone(1, now_ms=0, log_end_offset=120)
    assert not gone.registered(1, offset=117)
    assert gone.at(1) == {1}
    assert gone.registered(1, offset=120)
    assert gone.at(1) == frozenset()
    assert not gone.registered(1, offset=130)  # not gone: nothing to tell
