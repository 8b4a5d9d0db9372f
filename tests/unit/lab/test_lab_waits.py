"""The lab's waits wait for events, with a bound and a message that says for what."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from kafkalite.lab.history import History, Op, OpKind
from kafkalite.lab.lab import Lab, LabTimeoutError, fenced_by_all

pytestmark = pytest.mark.unit


def ack(at: float, value: bytes) -> Op:
    return Op(at, OpKind.ACK, "p", "t", 0, value, 0)


def test_wait_for_acks_counts_only_those_after_the_fault() -> None:
    lab = Lab(cluster=Any)  # type: ignore[arg-type]  (waits on a history only)
    history = History([ack(1.0, b"a"), ack(5.0, b"b")])
    later = threading.Timer(0.2, lambda: history.record(ack(time.time(), b"c")))
    later.start()
    assert lab.wait_for_acks(history, 2, timeout_s=5) == 2
    assert lab.wait_for_acks(history, 1, since=time.time() - 10, timeout_s=5) >= 1
    with pytest.raises(LabTimeoutError, match="3 acknowledged writes since the fault"):
        lab.wait_for_acks(history, 3, since=time.time() + 60, timeout_s=0.3)
    later.join()


def fence(applier: int, broker: int, fenced: bool = True) -> dict[str, Any]:
    kind = "broker_fenced" if fenced else "broker_unfenced"
    return {"broker": applier, "type": kind, "broker_id": broker}


def test_a_paused_broker_is_unlisted_once_every_running_broker_applied_its_fence() -> None:
    started = [fence(a, b, fenced=False) for a in (1, 2, 3) for b in (1, 2, 3)]
    assert not fenced_by_all(started, fenced={3}, by={1, 2})
    assert not fenced_by_all([*started, fence(2, 3)], fenced={3}, by={1, 2})  # 1 still lists it
    assert fenced_by_all([*started, fence(2, 3), fence(1, 3)], fenced={3}, by={1, 2})
    # fenced once, unfenced when it came back, paused again: the old fence does not count
    again = [*started, fence(1, 3), fence(2, 3), fence(1, 3, False), fence(2, 3, False)]
    assert not fenced_by_all(again, fenced={3}, by={1, 2})
    assert fenced_by_all([*again, fence(1, 3), fence(2, 3)], fenced={3}, by={1, 2})
