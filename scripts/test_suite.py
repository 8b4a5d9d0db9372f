"""The whole test suite as ``make test`` runs it: the slow groups beside the rest.

Notebooks, the browser, the labs' lessons, Spark, containers and the autograder each run as
their own pytest process, in four lanes side by side: the main suite (on two xdist
workers), then the notebooks and the browser; the autograder; every lab three times in
order on one cluster (its lessons must hold each time: mostly waiting on the lab's own
timeouts, it keeps a third of a core busy, so it starts at once rather than after the
autograder, where it ran alone on an idle machine for ten minutes); containers, then Spark.
Then, alone, the heavy tests (CPU starvation on every core, a coordinator loading a
partition of 120,000 transactions: they load the machine on purpose, so never beside the
main suite's timing-bound tests or the labs' faults). More at once only made each slower:
on two cores, five groups at once drove the load average past 60 and timing-bound tests
(failure detection, Spark's start-up) failed for want of CPU. Every group's marker
expression excludes the groups before it, so no test runs twice. Each group's output goes
to ``.test-logs/<group>.log``; this prints a line as each group ends, then the summary of
every group that failed, and exits non-zero if any did (or ran past its time bound, or
collected nothing).

    python scripts/test_suite.py [GROUP ...]     # default: every group
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from kafkalite.cluster.ports import RANGE_VARIABLE, port_range, range_share

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / ".test-logs"
TIME_BOUND_S = 60 * 60  # a hung group, not a slow one: CI allows 90 min in all
HUNG = "ran past its time bound of"
LIBRDKAFKA_LINE = re.compile(r"%\d\|")  # librdkafka's log format: %level|time|facility|...
STACKS_S = 5  # for a hung group's processes to write their stacks before they are killed


@dataclass(frozen=True)
class Group:
    name: str
    markers: str  # this group's tests, before the earlier groups are excluded
    lane: int  # groups of one lane run one after the other; lanes run side by side
    workers: int = 0  # xdist workers; 0: one process
    alone: bool = False  # after every other group has ended, with the machine to itself


SLOW_GROUPS = [
    Group("grader", "grader", lane=1, workers=2),  # gradings wait on rebalances and kills
    Group("lessons", "lessons", lane=3),
    Group("heavy", "heavy", lane=1, alone=True),
    Group("containers", "containers", lane=2),
    Group("spark", "spark", lane=2),
]
NOTEBOOKS = Group("notebooks", "labs or browser", lane=0)
MAIN = Group("main", "", lane=0, workers=2)
ORDER = [*SLOW_GROUPS, NOTEBOOKS, MAIN]  # marker exclusion order; MAIN takes the rest
LANE_ORDER = [MAIN, NOTEBOOKS, *SLOW_GROUPS]  # a lane runs its groups in this order


def marker_expression(group: Group, earlier: list[Group]) -> str:
    """``group``'s tests and none of an earlier group's (the main group: everything else)."""
    excluded = " or ".join(f"({g.markers})" for g in earlier)
    if not group.markers:
        return f"not ({excluded})" if excluded else ""
    return f"({group.markers}) and not ({excluded})" if excluded else group.markers


def command(group: Group, earlier: list[Group]) -> list[str]:
    # the slowest tests at the end of each log: where the suite's time goes, run by run
    args = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--durations=15"]
    expression = marker_expression(group, earlier)
    if expression:
        args += ["-m", expression]
    if group.workers:
        args += ["-n", str(group.workers), "--dist", "loadgroup"]
    return args


@dataclass
class Running:
    group: Group
    process: subprocess.Popen[bytes]
    log: Path
    started: float


def start(group: Group, earlier: list[Group]) -> Running:
    LOGS.mkdir(exist_ok=True)
    log = LOGS / f"{group.name}.log"
    # each lane its share of the cluster ports: lanes start clusters at the same moments,
    # and a port one found free was taken by another's broker before it bound it (a
    # notebook test's broker failed with "address already in use"). The shares split
    # KAFKALITE_PORT_RANGE when it is set (a suite run beside other clusters on one machine)
    low, high = range_share(group.lane, 1 + max(g.lane for g in ORDER), *port_range())
    env = {**os.environ, RANGE_VARIABLE: f"{low}-{high}"}
    # Python writes each module's bytecode once, into the suite's own venv, even where the
    # machine turns that off (PYTHONDONTWRITEBYTECODE): otherwise every process compiles
    # every module it imports again, brokers, kernels and JVM workers alike (a documented
    # `python -m bench.grader --help` compiled otter's 6,000 modules: 12 s of CPU, and over
    # the docs test's 60-s bound beside the other lanes, CI 2026-11-29 17:21).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with log.open("wb") as out:
        process = subprocess.Popen(
            command(group, earlier),
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its brokers, kernels and JVMs can be stopped as one
        )
    return Running(group, process, log, time.monotonic())


def summary(log: Path) -> str:
    """The part of a pytest log that says what failed: from its short summary on, or for a
    group stopped past its time bound, the stacks it wrote (without librdkafka's own log
    lines, which a client left open writes every second while its cluster is gone)."""
    text = log.read_text(errors="replace")
    hung = text.rfind(HUNG)
    if hung >= 0:
        lines = text[hung:].splitlines(keepends=True)
        return "".join(line for line in lines if not LIBRDKAFKA_LINE.match(line))
    marker = text.rfind("short test summary info")
    return text[text.rfind("\n", 0, marker) + 1 :] if marker >= 0 else text[-4000:]


def run_lanes(groups: list[Group]) -> list[tuple[Running, int]]:
    """Run ``groups``: the first of each lane at once, each next one when its lane's
    previous group ends (a lane runs in ``LANE_ORDER``)."""
    queues: dict[int, list[Group]] = {}
    for group in sorted(groups, key=LANE_ORDER.index):
        queues.setdefault(group.lane, []).append(group)

    def start_next(lane: int) -> Running | None:
        if not queues[lane]:
            return None
        group = queues[lane].pop(0)
        return start(group, ORDER[: ORDER.index(group)])

    pending = [run for lane in queues if (run := start_next(lane)) is not None]
    running = list(pending)
    ended: list[tuple[Running, int]] = []
    try:
        while pending:
            time.sleep(1)
            for run in list(pending):
                code = _poll(run)
                if code is None:
                    continue
                pending.remove(run)
                ended.append((run, code))
                took = time.monotonic() - run.started
                verdict = "passed" if code == 0 else f"FAILED (pytest exit {code})"
                print(f"{run.group.name:>10}: {verdict} in {took:.0f} s  ({run.log})", flush=True)
                if (following := start_next(run.group.lane)) is not None:
                    pending.append(following)
                    running.append(following)
    except KeyboardInterrupt:
        for run in running:
            if run.process.poll() is None:
                os.killpg(run.process.pid, signal.SIGTERM)
        raise
    return ended


def _poll(run: Running) -> int | None:
    """The group's exit code once it ended; a group past its time bound is stopped."""
    code = run.process.poll()
    if code is None and time.monotonic() - run.started > TIME_BOUND_S:
        with run.log.open("a") as out:
            out.write(f"\n{HUNG} {TIME_BOUND_S} s: the stacks of its test processes follow\n")
        # tests/conftest.py has every pytest process write its threads' stacks on SIGUSR1
        os.killpg(run.process.pid, signal.SIGUSR1)
        time.sleep(STACKS_S)
        os.killpg(run.process.pid, signal.SIGKILL)
        code = run.process.wait()
        with run.log.open("a") as out:
            out.write(f"\nstopped: ran past {TIME_BOUND_S} s\n")
    return code


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    names = [g.name for g in ORDER]
    parser.add_argument("groups", nargs="*", metavar="GROUP", help=f"of {', '.join(names)}")
    args = parser.parse_args(argv)
    unknown = set(args.groups) - set(names)
    if unknown:
        parser.error(f"no such group: {', '.join(sorted(unknown))} (groups: {', '.join(names)})")
    args.groups = args.groups or names
    signal.signal(signal.SIGTERM, _interrupted)  # stopped from outside: stop the groups too
    groups = [g for g in ORDER if g.name in args.groups]
    print(f"running {', '.join(g.name for g in groups)} (logs in {LOGS})", flush=True)
    ended = run_lanes([g for g in groups if not g.alone])
    ended += run_lanes([g for g in groups if g.alone])
    failed = [(run, code) for run, code in ended if code != 0]
    for run, _ in failed:
        print(f"\n===== {run.group.name}: {run.log} =====\n{summary(run.log)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
