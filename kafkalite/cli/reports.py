"""What a command that changes the cluster says it did (pure: states in, sentences out).

Every verb answers in one line that names the broker, what happened to it in words a
student can act on, and how to undo it; a controlled shutdown that had to end in SIGKILL
says so, since the broker then lost what it had not written.
"""

from __future__ import annotations

from collections.abc import Mapping

from kafkalite.cli.shell import Shell
from kafkalite.cluster.backend import BrokerState

PLAIN = Shell()  # ``kafkalite`` on the PATH, the default cluster folder

UNDO = {
    "kill": "start",
    "stop": "start",
    "pause": "resume",
    "isolate": "heal",
    "partial-partition": "heal",
    "slow": "heal",
}


def fault_report(
    verb: str,
    broker_id: int,
    after: BrokerState,
    delay_ms: int | None = None,
    stop_grace_s: float = 10,
    shell: Shell = PLAIN,
) -> str:
    """The line ``kafkalite VERB N`` prints once the verb is done; its undo hint is
    written for ``shell``."""
    undo = f" (`{shell.command(UNDO[verb], str(broker_id))}` undoes it)" if verb in UNDO else ""
    if verb in ("stop", "restart") and after == BrokerState.DEAD:
        return (
            f"broker {broker_id} did not shut down within {stop_grace_s:.0f} s and was "
            f"killed (SIGKILL): no controlled shutdown happened"
        )
    said = {
        "kill": "was killed (SIGKILL): a crash, no shutdown",
        "stop": "stopped (controlled shutdown: its leaderships moved to other replicas first)",
        "start": "started",
        "restart": "restarted (controlled shutdown, then started)",
        "pause": "is paused (SIGSTOP): it holds its connections and answers nothing",
        "resume": "resumed",
        "isolate": "is isolated: it reaches no peer and no peer reaches it; "
        "its own clients still do",
        "partial-partition": "is cut from its replication peers (it fetches from no leader, "
        "no follower fetches from it) but still reaches the controller quorum",
        "slow": f"fetches from its leaders {delay_ms} ms late, each way",
        "heal": "is healed: no longer isolated, partitioned or slow",
    }[verb]
    return f"broker {broker_id} {said}; it is now {after.value}{undo}"


def restart_report(
    broker_id: int,
    before: BrokerState,
    stopped: BrokerState | None,
    after: BrokerState,
    shell: Shell = PLAIN,
) -> list[str]:
    """What ``kafkalite restart N`` did. ``before`` is the broker's state when asked;
    ``stopped`` its state after the stop, or None when it was not running (nothing was
    stopped: it was only started, and the line says so)."""
    if stopped is None:
        return [
            f"broker {broker_id} started (it was not running: it was {before.value}); "
            f"it is now {after.value}"
        ]
    if stopped == BrokerState.DEAD:
        return [
            fault_report("stop", broker_id, stopped, shell=shell),
            fault_report("start", broker_id, after, shell=shell),
        ]
    return [fault_report("restart", broker_id, after, shell=shell)]


def heal_all_report() -> str:
    return "every broker is healed: none is isolated, partitioned or slow"


def down_report(before: Mapping[int, BrokerState], after: Mapping[int, BrokerState]) -> list[str]:
    """What ``kafkalite down`` did, naming every broker of the cluster: those it stopped,
    any it had to kill, and those that were not running when it was asked."""
    stopped, killed, not_running = [], [], []
    for broker, state in sorted(before.items()):
        if state in (BrokerState.STOPPED, BrokerState.DEAD):
            not_running.append(f"{broker} ({state.value})")
        elif after[broker] == BrokerState.STOPPED:
            stopped.append(str(broker))
        else:
            killed.append(broker)
    lines = []
    if stopped:
        plural = "s" if len(stopped) > 1 else ""
        lines.append(f"stopped broker{plural} {', '.join(stopped)} (controlled shutdown)")
    lines.extend(f"broker {b} did not shut down in time and was killed (SIGKILL)" for b in killed)
    if not_running:
        plural = "s" if len(not_running) > 1 else ""
        lines.append(f"broker{plural} {', '.join(not_running)} already down")
    return lines
