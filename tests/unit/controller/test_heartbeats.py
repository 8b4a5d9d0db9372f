"""The controller's rule for a silent broker, driven with a fake clock: fenced once it has
been silent for ``broker.session.timeout.ms`` (``controller.heartbeats``). The stalls of
the controller's own loop are taken out by the clock it passes in (``raft.clock``; see
``tests/unit/broker/test_voter_contact.py`` for the two together)."""

from __future__ import annotations

import pytest

from kafkalite.controller.heartbeats import BrokerHeartbeats

pytestmark = pytest.mark.unit

SESSION_MS = 3_000


def heartbeating(beats: BrokerHeartbeats, broker_id: int, every_ms: int, until_ms: int) -> None:
    for t in range(every_ms, until_ms + 1, every_ms):
        beats.touch(broker_id, t)


def test_a_broker_silent_for_longer_than_its_session_expires() -> None:
    beats = BrokerHeartbeats(SESSION_MS)
    beats.reset([1, 2, 3], now_ms=0)
    heartbeating(beats, 1, 400, 4_800)  # heartbeats every 400 ms
    beats.touch(2, 2_000)  # then nothing: paused at 2 s
    assert beats.expired([1, 2, 3], now_ms=3_000) == []  # 3 has a session from the reset
    assert beats.expired([1, 2, 3], now_ms=3_001) == [3]
    assert beats.expired([1, 2, 3], now_ms=5_000) == [3]  # 2: silent for exactly a session
    assert beats.expired([1, 2, 3], now_ms=5_001) == [2, 3]
    assert beats.silences_ms([1, 2, 3], 5_001) == {1: 201, 2: 3_001, 3: 5_001}


def test_any_long_silence_within_the_session_is_no_death_however_irregular() -> None:
    """A starved machine: contacts 2.9 s apart, then 100 ms, then 2.5 s. One rule, no
    stretching: within the session is alive."""
    beats = BrokerHeartbeats(SESSION_MS)
    beats.reset([1], now_ms=0)
    for t in (2_900, 3_000, 5_500, 8_400):
        assert beats.expired([1], now_ms=t) == []
        beats.touch(1, t)
    assert beats.longest_silence_ms == 2_900


def test_a_new_controller_starts_every_session_afresh() -> None:
    """Kept in memory only: a controller taking over has heard from no one yet, and fences
    no one for a silence it did not see."""
    beats = BrokerHeartbeats(SESSION_MS)
    beats.reset([1, 2], now_ms=0)
    beats.touch(1, 500)
    assert beats.expired([1, 2], now_ms=3_001) == [2]
    beats.reset([1, 2], now_ms=4_000)
    assert beats.expired([1, 2], now_ms=7_000) == []
    assert beats.expired([1, 2], now_ms=7_001) == [1, 2]


def test_the_controller_never_fences_its_own_broker() -> None:
    """A lone broker is its own controller: if the controller runs, its broker does."""
    beats = BrokerHeartbeats(SESSION_MS)
    beats.reset([1, 2], now_ms=0)
    assert beats.expired([1, 2], now_ms=9_000, own_id=1) == [2]


def test_the_fence_check_wakes_when_the_first_session_runs_out() -> None:
    beats = BrokerHeartbeats(SESSION_MS)
    beats.reset([1, 2], now_ms=0)
    beats.touch(1, 400)
    assert beats.next_expiry_ms([1, 2], now_ms=500) == 3_000  # 2's, from the reset
    beats.touch(2, 450)
    assert beats.next_expiry_ms([1, 2], now_ms=500) == 3_400
    assert beats.next_expiry_ms([], now_ms=500) == 3_500


def test_the_controllers_own_broker_sets_no_wake_up() -> None:
    """An expiry that fences no one would wake the fence check again and again."""
    beats = BrokerHeartbeats(SESSION_MS)
    beats.reset([1, 2], now_ms=0)
    beats.touch(2, 5_000)
    assert beats.next_expiry_ms([1, 2], now_ms=5_000) == 3_000  # broker 1 is overdue
    assert beats.next_expiry_ms([1, 2], now_ms=5_000, own_id=1) == 8_000


def test_the_longest_silence_counts_live_brokers_only() -> None:
    """How close a live broker came to being fenced; one back after its session ran out
    was fenced meanwhile, and its silence is no margin."""
    beats = BrokerHeartbeats(SESSION_MS)
    beats.reset([1, 2], now_ms=0)
    heartbeating(beats, 1, 400, 1_200)
    beats.touch(1, 2_400)  # 1.2 s of silence
    beats.touch(2, 9_000)  # back long after its session ran out
    assert beats.longest_silence_ms == 1_200
    beats.reset([1, 2], now_ms=10_000)  # a new controller's margin is its own
    assert beats.longest_silence_ms == 0


def test_a_session_changed_live_applies_at_once() -> None:
    """``broker.session.timeout.ms`` is a dynamic setting: the fence check sets it at every
    pass, and every broker is judged by the new one."""
    beats = BrokerHeartbeats(SESSION_MS)
    beats.reset([1], now_ms=0)
    beats.touch(1, 1_000)
    beats.session_timeout_ms = 9_000
    assert beats.expired([1], now_ms=9_000) == []
    assert beats.expired([1], now_ms=10_001) == [1]


def test_heartbeats_tell_which_live_brokers_have_not_replayed_an_offset() -> None:
    beats = BrokerHeartbeats(SESSION_MS)
    beats.reset([1, 2, 3], now_ms=0)
    beats.touch(1, 10, replayed_offset=42)
    beats.touch(2, 10, replayed_offset=40)
    assert beats.behind([1, 2, 3], 41) == [2, 3]
    assert beats.behind([1, 2], 40) == []
    beats.reset([1, 2, 3], now_ms=20)  # a new controller has heard nothing yet
    assert beats.behind([1], 0) == [1]
