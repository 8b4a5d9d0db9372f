"""The active controller's fence check: a voter's quorum requests keep its broker's session
as a heartbeat does; a broker silent for a session is fenced, and says why; the
controller's own stalls count against no one.

On fake clocks only: the sessions' (``now``, or the responsive clock over a fake real
time) and the event loop's (``tests.support.virtual_time``), so no test depends on how
fast the machine runs."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from kafkalite.broker.control_plane.controller_service import ControllerService
from kafkalite.events import EventType
from kafkalite.raft import messages as m
from kafkalite.raft.clock import ResponsiveClock
from tests.support import virtual_time
from tests.unit.broker.controller_fakes import service_with_brokers
from tests.unit.broker.single_voter import single_voter_quorum

pytestmark = pytest.mark.unit

SESSION_MS = 3_000  # broker.session.timeout.ms's default
FETCH = m.FetchRequest(2, 0, 0, 0)


async def run_the_fence_check(service: ControllerService, seconds: float = 0.01) -> None:
    """Let the fence check run for ``seconds`` of the loop's (virtual) time, then stop it."""
    fence_check = asyncio.get_running_loop().create_task(service._fence_loop())
    await asyncio.sleep(seconds)
    fence_check.cancel()
    await asyncio.gather(fence_check, return_exceptions=True)


def fenced(quorum: Any) -> list[int]:
    return [r.broker_id for r in quorum.appended if type(r).__name__ == "FenceBrokerRecord"]


def test_a_voter_that_only_fetches_keeps_its_session() -> None:
    now = [0]
    service, quorum = service_with_brokers(now)
    for t in range(500, 6_001, 500):  # broker 2's Fetches arrive; broker 3 is silent
        now[0] = t
        for listener in quorum.request_listeners:
            listener(2, FETCH)
    assert service.heartbeats.expired([2, 3], now[0]) == [3]


def test_a_silent_broker_is_fenced_and_the_event_says_why() -> None:
    async def scenario() -> tuple[list[int], bool, list[Any], list[Any]]:
        now = [0]
        emitted: list[tuple[EventType, dict[str, Any]]] = []
        service, quorum = service_with_brokers(now, emitted=emitted)
        for now[0] in (1_000, 2_000, 3_000):  # broker 2 is heard from; broker 3 is silent
            quorum.request_listeners[0](2, FETCH)
        now[0] = 3_500
        await run_the_fence_check(service)
        before_commit = list(emitted)
        quorum.commit()
        await asyncio.sleep(0)
        return fenced(quorum), service.image.brokers[3].fenced, before_commit, emitted

    fenced_ids, applied, before_commit, emitted = virtual_time.run(scenario())
    assert fenced_ids == [3]
    assert applied  # applied at once...
    assert before_commit == []  # ...said once committed
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


def test_a_contact_read_as_the_sessions_run_out_counts_before_they_are_judged() -> None:
    """Under load one pass of the controller's loop can take long. A contact read from its
    socket in the pass whose timer ends the fence check's wait reaches the sessions a pass
    or more later (framing, its handler): judged before it arrives, live brokers were
    fenced for silence while their requests were already here."""

    async def scenario() -> tuple[list[int], int]:
        loop = virtual_time.loop()
        now = [0]
        service, quorum = service_with_brokers(now)
        service.now_ms = lambda: int(loop.time() * 1000)  # the loop's (virtual) time

        async def contacts_handled() -> None:
            await asyncio.sleep(0)  # framed; the handler runs next pass
            for listener in quorum.request_listeners:
                listener(2, FETCH)
                listener(3, FETCH)

        def busy_pass() -> None:
            loop.advance(0.06)  # busy past the sessions' end, 1 ms after this began...
            loop.call_soon(lambda: loop.create_task(contacts_handled()))  # ...contacts read

        loop.call_at((SESSION_MS - 1) / 1000, busy_pass)
        await run_the_fence_check(service, SESSION_MS / 1000 + 0.5)
        return fenced(quorum), service.heartbeats.silent_ms(2, service.now_ms())

    fenced_ids, silent_ms = virtual_time.run(scenario())
    assert fenced_ids == [], "a broker was fenced though its contact was already read"
    assert silent_ms < 500  # its contact counted, as the session ran out


def test_the_controllers_own_stall_counts_against_no_broker() -> None:
    """The controller's process could not run for 5 s (paused, or a starved machine): the
    brokers' heartbeats waiting in its sockets were never read. On the responsive clock the
    controller judges by (the quorum's, ``raft.clock``), that time does not pass."""

    async def scenario() -> tuple[list[int], list[int]]:
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
        after_the_stall = fenced(quorum)
        real[0] = 13_050 + clock.stalled_ms  # the sessions do run on after the stall
        await run_the_fence_check(service)
        return after_the_stall, fenced(quorum)

    after_the_stall, later = virtual_time.run(scenario())
    assert after_the_stall == [], "fenced for a silence the controller itself caused"
    assert later == [3]  # silent since 10,000; broker 2 since 10,100


def test_the_session_is_shown_while_active_with_each_brokers_silence() -> None:
    """``/state`` on the active controller: the session and how long each broker has been
    silent; nothing on the others."""

    async def scenario() -> tuple[Any, ...]:
        now = [0]
        service, quorum = service_with_brokers(now)
        now[0] = 1_200
        quorum.request_listeners[0](2, FETCH)
        now[0] = 1_500
        await run_the_fence_check(service)
        shown = (service.session_ms, service.silences_ms, service.longest_silence_ms)
        service._on_activation(False)
        return shown, (service.session_ms, service.silences_ms, service.longest_silence_ms)

    while_active, after = virtual_time.run(scenario())
    assert while_active == (SESSION_MS, {1: 1_500, 2: 300, 3: 1_500}, 1_200)
    assert after == (None,) * 3


@pytest.mark.parametrize(
    "request_from_2",
    [m.FetchRequest(2, 0, 0, 0), m.VoteRequest(1, 2, 0, 0, pre_vote=True)],
    ids=["fetch", "pre-vote"],
)
def test_a_request_reaching_the_quorum_is_reported_with_its_voter(
    tmp_path: Path, request_from_2: m.Message
) -> None:
    """A pre-vote too: a starved voter whose Fetch timed out asks for pre-votes instead of
    fetching, and that gap in its Fetches must not read as silence."""

    async def scenario() -> list[int]:
        quorum = single_voter_quorum(tmp_path)
        heard: list[int] = []
        quorum.on_request_from(lambda voter, _request: heard.append(voter))
        request = asyncio.create_task(quorum.handle_request(2, 7, request_from_2))
        await asyncio.sleep(0)
        request.cancel()
        await asyncio.gather(request, return_exceptions=True)
        return heard

    assert virtual_time.run(scenario()) == [2]
