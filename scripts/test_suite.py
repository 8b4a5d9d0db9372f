"""The whole test suite as ``make test`` runs it: the slow groups beside the rest.

Notebooks, the browser, Spark, containers and the autograder spend most of their time
waiting (on kernels, JVMs, image builds, sandboxes and brokers' failure detection), so each
runs as its own pytest process at the same time as the main suite, which itself runs on
two xdist workers. Every group's marker expression excludes the groups before it, so no
test runs twice. Each group's output goes to ``.test-logs/<group>.log``; this prints a line
as each group ends, then the summary of every group that failed, and exits non-zero if
any did (or ran past its time bound, or collected nothing).

    python scripts/test_suite.py [GROUP ...]     # default: every group
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / ".test-logs"
TIME_BOUND_S = 60 * 60  # a hung group, not a slow one: CI allows 90 min in all


@dataclass(frozen=True)
class Group:
    name: str
    markers: str  # this group's tests, before the earlier groups are excluded
    workers: int = 0  # xdist workers; 0: one process


# Slowest first: they start first and decide the suite's wall-clock time.
SLOW_GROUPS = [
    Group("containers", "containers"),
    Group("spark", "spark"),
    Group("notebooks", "labs or browser"),
    Group("grader", "grader"),
]
MAIN = Group("main", "", workers=2)


def marker_expression(group: Group, earlier: list[Group]) -> str:
    """``group``'s tests and none of an earlier group's (the main group: everything else)."""
    excluded = " or ".join(f"({g.markers})" for g in earlier)
    if not group.markers:
        return f"not ({excluded})" if excluded else ""
    return f"({group.markers}) and not ({excluded})" if excluded else group.markers


def command(group: Group, earlier: list[Group]) -> list[str]:
    args = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
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
    with log.open("wb") as out:
        process = subprocess.Popen(
            command(group, earlier),
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its brokers, kernels and JVMs can be stopped as one
        )
    return Running(group, process, log, time.monotonic())


def summary(log: Path) -> str:
    """The part of a pytest log that says what failed: from its short summary on."""
    text = log.read_text(errors="replace")
    marker = text.rfind("short test summary info")
    return text[text.rfind("\n", 0, marker) + 1 :] if marker >= 0 else text[-4000:]


def wait_all(running: list[Running]) -> list[tuple[Running, int]]:
    ended: list[tuple[Running, int]] = []
    pending = list(running)
    while pending:
        time.sleep(1)
        for run in list(pending):
            code = run.process.poll()
            if code is None and time.monotonic() - run.started > TIME_BOUND_S:
                os.killpg(run.process.pid, signal.SIGKILL)
                code = run.process.wait()
                with run.log.open("a") as out:
                    out.write(f"\nstopped: ran past {TIME_BOUND_S} s\n")
            if code is None:
                continue
            pending.remove(run)
            ended.append((run, code))
            took = time.monotonic() - run.started
            verdict = "passed" if code == 0 else f"FAILED (pytest exit {code})"
            print(f"{run.group.name:>10}: {verdict} in {took:.0f} s  ({run.log})", flush=True)
    return ended


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    names = [g.name for g in [*SLOW_GROUPS, MAIN]]
    parser.add_argument("groups", nargs="*", metavar="GROUP", help=f"of {', '.join(names)}")
    args = parser.parse_args(argv)
    unknown = set(args.groups) - set(names)
    if unknown:
        parser.error(f"no such group: {', '.join(sorted(unknown))} (groups: {', '.join(names)})")
    args.groups = args.groups or names
    signal.signal(signal.SIGTERM, _interrupted)  # stopped from outside: stop the groups too
    running = []
    for index, group in enumerate([*SLOW_GROUPS, MAIN]):
        if group.name in args.groups:
            running.append(start(group, SLOW_GROUPS[: min(index, len(SLOW_GROUPS))]))
    print(f"running {', '.join(r.group.name for r in running)} (logs in {LOGS})", flush=True)
    try:
        ended = wait_all(running)
    except KeyboardInterrupt:
        for run in running:
            if run.process.poll() is None:
                os.killpg(run.process.pid, signal.SIGTERM)
        raise
    failed = [(run, code) for run, code in ended if code != 0]
    for run, _ in failed:
        print(f"\n===== {run.group.name}: {run.log} =====\n{summary(run.log)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
