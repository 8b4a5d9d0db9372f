"""A voter's quorum requests keep its broker's session, as a heartbeat does: every broker is
also a voter here, so the active controller hears from each several times a second without
a heartbeat round trip (which had been most of an idle cluster's CPU)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from kafkalite.broker.controller_service import ControllerService
from kafkalite.controller.heartbeats import Contact
from kafkalite.controller.quorum_controller import QuorumController
from kafkalite.events import EventType
from kafkalite.metadata.image import MetadataImage
from kafkalite.metadata.records import ConfigRecord
from kafkalite.raft import messages as m
from kafkalite.raft.config import RaftConfig
from tests.unit.broker.single_voter import single_voter_quorum

pytestmark = [pytest.mark.unit, pytest.mark.asyncio]

SESSION_MS = 800  # broker.session.timeout.ms's default
FETCH = m.FetchRequest(2, 0, 0, 0)


class ActiveQuorum:
    """The active controller's quorum, as the service sees it: hands out its listener."""

    is_active = True
    leader_id = node_id = 1
    config = RaftConfig()

    def __init__(self) -> None:
        self.request_listeners: list[Any] = []
        self.appended: list[Any] = []

    def on_activation(self, listener: Any) -> None:
        pass

    def on_request_from(self, listener: Any) -> None:
        self.request_listeners.append(listener)

    async def append(self, records: list[Any]) -> int:
        self.appended.extend(records)
        return len(self.appended)


def service_with_three_brokers(
    now: list[int], heartbeat_interval_ms: int | None = None
) -> tuple[ControllerService, ActiveQuorum]:
    image = MetadataImage()
    if heartbeat_interval_ms is not None:
        interval = str(heartbeat_interval_ms)
        image.replay(ConfigRecord("broker", "", "broker.heartbeat.interval.ms", interval), 0)
    controller = QuorumController(image)
    for broker in (1, 2, 3):
        for record in controller.register_broker(broker, "h", 9000 + broker, None, "x", 0).records:
            image.replay(record, 0)
    quorum = ActiveQuorum()
    service = ControllerService(
        quorum, controller, lambda: now[0], lambda coro, name: None, lambda t, **f: None
    )  # type: ignore[arg-type]
    service.heartbeats.reset([1, 2, 3], now[0])
    return service, quorum


async def test_a_voter_that_only_fetches_keeps_its_session() -> None:
    now = [0]
    service, quorum = service_with_three_brokers(now)
    for t in range(250, 2001, 250):  # broker 2's Fetches arrive; broker 3 is silent
        now[0] = t
        for listener in quorum.request_listeners:
            listener(2, FETCH)
    assert service.heartbeats.expired([2, 3], now[0]) == [3]


async def test_a_contact_read_as_the_sessions_run_out_counts_before_they_are_judged() -> None:
    """Under load one pass of the controller's loop can take long. A contact read from its
    socket in the pass whose timer ends the fence check's wait reaches the sessions a pass
    or more later (framing, its handler): judged before it arrives, live brokers were
    fenced for silence while their requests were already here."""
    now = [0]
    service, quorum = service_with_three_brokers(now)
    for broker in (2, 3):
        service.heartbeats.touch(broker, 0)  # heard: their sessions end at 800
    loop = asyncio.get_running_loop()

    async def contacts_handled() -> None:
        await asyncio.sleep(0)  # framed; the handler runs next pass
        for listener in quorum.request_listeners:
            listener(2, FETCH)
            listener(3, FETCH)

    def busy_pass() -> None:
        time.sleep(0.05)  # busy past the sessions' end (11 ms of real time away)...
        now[0] = 851  # ...though not for long enough to count as the controller's stall
        loop.call_soon(lambda: loop.create_task(contacts_handled()))  # contacts were read

    now[0] = 790
    fence_check = loop.create_task(service._fence_loop())
    loop.call_later(0.005, busy_pass)
    await asyncio.sleep(0.2)
    fence_check.cancel()
    await asyncio.gather(fence_check, return_exceptions=True)
    assert quorum.appended == [], "a broker was fenced though its contact was already read"
    assert service.heartbeats.silent_ms(2, now[0]) == 0


async def test_a_broker_heard_from_while_its_fence_waits_its_turn_is_not_fenced() -> None:
    """The controller runs one operation at a time. Under load the fence of a silent
    broker waited seconds behind others (a flood of AlterPartition), while that broker's
    contacts arrived again: it is judged when its turn comes, not before."""
    now = [0]
    service, quorum = service_with_three_brokers(now)
    for broker in (2, 3):
        service.heartbeats.touch(broker, 0)  # heard: their sessions end at 800
    loop = asyncio.get_running_loop()
    async with service._lock:  # another operation is under way
        now[0] = 1000  # the sessions ran out
        fence_check = loop.create_task(service._fence_loop())
        await asyncio.sleep(0.05)  # the fence check saw it: the fences wait for their turn
        now[0] = 3000
        for listener in quorum.request_listeners:
            listener(2, FETCH)
            listener(3, FETCH)
    await asyncio.sleep(0.05)
    fence_check.cancel()
    await asyncio.gather(fence_check, return_exceptions=True)
    assert quorum.appended == [], "a broker was fenced though it was heard from meanwhile"


async def run_the_fence_check(service: ControllerService, seconds: float = 0.01) -> None:
    """Let the fence check run for ``seconds``, then stop it."""
    fence_check = asyncio.get_running_loop().create_task(service._fence_loop())
    await asyncio.sleep(seconds)
    fence_check.cancel()
    await asyncio.gather(fence_check, return_exceptions=True)


async def test_a_silent_broker_is_fenced() -> None:
    """What the two tests above must not prevent: a broker silent for a session is
    fenced, one heard from is not."""
    now = [0]
    service, quorum = service_with_three_brokers(now)
    for broker in (2, 3):
        service.heartbeats.touch(broker, 0)
    for now[0] in (300, 600, 900):  # broker 2 is heard from; broker 3 stays silent
        quorum.request_listeners[0](2, FETCH)
    now[0] = 1000
    emitted: list[tuple[EventType, dict[str, Any]]] = []
    service.emit = lambda event_type, **fields: emitted.append((event_type, fields))
    await run_the_fence_check(service, 0.05)
    assert [type(r).__name__ for r in quorum.appended][:1] == ["FenceBrokerRecord"]
    assert quorum.appended[0].broker_id == 3
    # why, for students: the silence and the session it outlasted
    assert emitted[:1] == [
        (EventType.BROKER_SESSION_EXPIRED, {"broker_id": 3, "silent_ms": 1000, "session_ms": 800})
    ]


async def test_the_fence_check_judges_by_the_control_loops_lag() -> None:
    now = [0]
    service, _quorum = service_with_three_brokers(now)
    service.loop_lag_ms = lambda: 300
    await run_the_fence_check(service)
    assert service.heartbeats.effective_timeout_ms(now[0]) == SESSION_MS + 3 * 300


async def test_the_fence_check_judges_by_the_run_queue_and_shows_its_session() -> None:
    """Six runnable tasks per CPU: the session triples before any contact comes late, and
    ``/state`` shows the session judged by (``session_ms``) while the controller is active."""
    now = [0]
    service, _quorum = service_with_three_brokers(now)
    service.run_queue_per_cpu = lambda: 6.0
    await run_the_fence_check(service)
    assert service.session_ms == SESSION_MS * 3
    service._on_activation(False)
    assert service.session_ms is None


async def test_lateness_is_judged_against_the_quorum_fetch_not_the_heartbeat_interval() -> None:
    """Heartbeats every 2 s (Kafka's default) but Fetches every 500 ms: a Fetch 200 ms
    late is lateness, and stretches the session; judged against 2 s it would be none, and
    a busy machine's live brokers would be fenced."""
    now = [0]
    service, quorum = service_with_three_brokers(now, heartbeat_interval_ms=2000)
    assert service.heartbeats.intervals_ms[Contact.QUORUM_FETCH] == RaftConfig().fetch_max_wait_ms
    for t in (700, 1400):
        now[0] = t
        for listener in quorum.request_listeners:
            listener(2, FETCH)
    assert service.heartbeats.effective_timeout_ms(now[0]) == SESSION_MS + 3 * 200


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
