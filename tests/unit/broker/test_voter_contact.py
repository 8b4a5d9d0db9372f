"""The active controller's fence check: a voter's quorum requests keep its broker's session
as a heartbeat does; a broker silent for a session is fenced, and says why; the
controller's own stalls count against no one."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from kafkalite.broker.controller_service import ControllerService
from kafkalite.events import EventType
from kafkalite.raft import messages as m
from kafkalite.raft.clock import ResponsiveClock
from tests.unit.broker.controller_fakes import service_with_brokers
from tests.unit.broker.single_voter import single_voter_quorum

pytestmark = [pytest.mark.unit, pytest.mark.asyncio]

SESSION_MS = 3_000  # broker.session.timeout.ms's default
FETCH = m.FetchRequest(2, 0, 0, 0)


async def run_the_fence_check(service: ControllerService, seconds: float = 0.01) -> None:
    """Let the fence check run for ``seconds``, then stop it."""
    fence_check = asyncio.get_running_loop().create_task(service._fence_loop())
    await asyncio.sleep(seconds)
    fence_check.cancel()
    await asyncio.gather(fence_check, return_exceptions=True)


def fenced(quorum: Any) -> list[int]:
    return [r.broker_id for r in quorum.appended if type(r).__name__ == "FenceBrokerRecord"]


async def test_a_voter_that_only_fetches_keeps_its_session() -> None:
    now = [0]
    service, quorum = service_with_brokers(now)
    for t in range(500, 6_001, 500):  # broker 2's Fetches arrive; broker 3 is silent
        now[0] = t
        for listener in quorum.request_listeners:
            listener(2, FETCH)
    assert service.heartbeats.expired([2, 3], now[0]) == [3]


async def test_a_silent_broker_is_fenced_and_the_event_says_why() -> None:
    now = [0]
    emitted: list[tuple[EventType, dict[str, Any]]] = []
    service, quorum = service_with_brokers(now, emitted=emitted)
    for now[0] in (1_000, 2_000, 3_000):  # broker 2 is heard from; broker 3 stays silent
        quorum.request_listeners[0](2, FETCH)
    now[0] = 3_500
    await run_the_fence_check(service)
    assert fenced(quorum) == [3]
    assert service.image.brokers[3].fenced  # applied at once...
    assert emitted == []  # ...said once committed
    quorum.commit()
    await asyncio.sleep(0)
    assert emitted == [
        (
            EventType.BROKER_SESSION_EXPIRED,
            {
                "broker_id": 3,
                "broker_epoch": 2,
                "silent_ms": 3_500,
                "session_ms": SESSION_MS,
                "others_silent_ms": {1: 3_500, 2: 500},
            },
        )
    ]


async def test_a_contact_read_as_the_sessions_run_out_counts_before_they_are_judged() -> None:
    """Under load one pass of the controller's loop can take long. A contact read from its
    socket in the pass whose timer ends the fence check's wait reaches the sessions a pass
    or more later (framing, its handler): judged before it arrives, live brokers were
    fenced for silence while their requests were already here."""
    now = [0]
    service, quorum = service_with_brokers(now)
    loop = asyncio.get_running_loop()

    async def contacts_handled() -> None:
        await asyncio.sleep(0)  # framed; the handler runs next pass
        for listener in quorum.request_listeners:
            listener(2, FETCH)
            listener(3, FETCH)

    def busy_pass() -> None:
        time.sleep(0.05)  # busy past the sessions' end (11 ms of real time away)...
        now[0] = SESSION_MS + 51  # ...though not for long enough to count as a stall
        loop.call_soon(lambda: loop.create_task(contacts_handled()))  # contacts were read

    now[0] = SESSION_MS - 10
    fence_check = loop.create_task(service._fence_loop())
    loop.call_later(0.005, busy_pass)
    await asyncio.sleep(0.2)
    fence_check.cancel()
    await asyncio.gather(fence_check, return_exceptions=True)
    assert fenced(quorum) == [], "a broker was fenced though its contact was already read"
    assert service.heartbeats.silent_ms(2, now[0]) == 0


async def test_the_controllers_own_stall_counts_against_no_broker() -> None:
    """The controller's process could not run for 5 s (paused, or a starved machine): the
    brokers' heartbeats waiting in its sockets were never read. On the responsive clock the
    controller judges by (the quorum's, ``raft.clock``), that time does not pass."""
    real = [10_000]
    clock = ResponsiveClock(lambda: real[0], tolerance_ms=50)
    now = [0]
    service, quorum = service_with_brokers(now)
    service.now_ms = clock.now
    service.heartbeats.reset([1, 2, 3], clock.now())
    clock.expect(10_500)  # the quorum's driver sleeps until its next timer, 500 ms away
    real[0] = 10_100
    service._heard_from_voter(2, FETCH)  # a contact read in the meantime
    real[0] = 15_500  # then nothing ran for five seconds
    await run_the_fence_check(service)
    assert fenced(quorum) == [], "fenced for a silence the controller itself caused"
    real[0] = 13_050 + clock.stalled_ms  # the sessions do run on after the stall
    await run_the_fence_check(service)
    assert fenced(quorum) == [3]  # silent since 10,000; broker 2 since 10,100


async def test_the_session_is_shown_while_active_with_each_brokers_silence() -> None:
    """``/state`` on the active controller: the session and how long each broker has been
    silent; nothing on the others."""
    now = [0]
    service, quorum = service_with_brokers(now)
    now[0] = 1_200
    quorum.request_listeners[0](2, FETCH)
    now[0] = 1_500
    await run_the_fence_check(service)
    assert service.session_ms == SESSION_MS
    assert service.silences_ms == {1: 1_500, 2: 300, 3: 1_500}
    assert service.longest_silence_ms == 1_200
    service._on_activation(False)
    assert (service.session_ms, service.silences_ms, service.longest_silence_ms) == (None,) * 3


@pytest.mark.parametrize(
    "request_from_2",
    [m.FetchRequest(2, 0, 0, 0), m.VoteRequest(1, 2, 0, 0, pre_vote=True)],
    ids=["fetch", "pre-vote"],
)
async def test_a_request_reaching_the_quorum_is_reported_with_its_voter(
    tmp_path: Path, request_from_2: m.Message
) -> None:
    """A pre-vote too: a starved voter whose Fetch timed out asks for pre-votes instead of
    fetching, and that gap in its Fetches must not read as silence."""
    quorum = single_voter_quorum(tmp_path)
    heard: list[int] = []
    quorum.on_request_from(lambda voter, _request: heard.append(voter))
    request = asyncio.create_task(quorum.handle_request(2, 7, request_from_2))
    await asyncio.sleep(0)
    request.cancel()
    await asyncio.gather(request, return_exceptions=True)
    assert heard == [2]
