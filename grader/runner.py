"""Grading one submission: a fresh cluster per question, each test case in its own sandbox.

The order of work, and why:
1. The submission is reduced to its definitions (``grader.extract``), so grading never
   runs a student's top-level cells against anything.
2. Each question (one otter-grader test file) gets a fresh cluster on free ports: what one
   question's faults did to a cluster cannot leak into another's score. It is started at
   the first case that asks for ``lab``, ``cluster`` or ``bootstrap_servers``; a question
   whose cases hand the data in (a pure function's) is graded without one.
3. Each test case runs in a sandbox (``grader.sandbox``) with its own time, memory,
   process and output limits; faults it asks for are done by the grader on its behalf
   (``grader.channel``). Between cases the cluster is put back as ``lab.reset()`` does:
   brokers healed, resumed and started again, every partition in sync.
4. The verdict of a case is otter-grader's (its test runner and messages); a case whose run
   broke a limit fails with the limit's one-line reason instead.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import json
import os
import socket
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from otter.test_files import GradingResults, create_test_file
from otter.test_files.abstract_test import TestCase, TestCaseResult, TestFile

from grader import sandbox
from grader.assignments import uses_spark
from grader.channel import READY, ClusterServer
from grader.extract import Extracted, extract
from kafkalite.cluster import Cluster, ClusterError
from kafkalite.cluster.ports import free_base_port
from kafkalite.lab.faults import ObservedCluster
from kafkalite.lab.lab import Lab

REPO_ROOT = Path(__file__).resolve().parent.parent
# The lab's settings: failure detection in about a second, as students see it.
GRADING_CONFIGS = {"group.min.session.timeout.ms": "500"}
CLUSTER_PARAMETERS = frozenset({"lab", "cluster", "bootstrap_servers"})


@dataclass(frozen=True, slots=True)
class GradingOptions:
    limits: sandbox.Limits = field(default_factory=sandbox.Limits)
    brokers: int = 3
    # Where clusters and sandboxes live (the system's temporary dir if None). As root, the
    # sandbox users must be able to traverse it and its parents (o+x): Spark's file system
    # layer creates a checkpoint by walking its absolute path from /.
    workdir: Path | None = None


@dataclass(frozen=True, slots=True)
class CaseVerdict:
    passed: bool
    message: str
    output: str


Progress = Callable[[str, str, CaseVerdict], None]


def grade(
    test_files: list[Path],
    submission: Path,
    options: GradingOptions = GradingOptions(),
    progress: Progress | None = None,
) -> GradingResults:
    """Grade ``submission`` against otter-grader test files; never raises for the
    student's faults (those are failed cases with reasons)."""
    extracted = extract(submission)
    with tempfile.TemporaryDirectory(prefix="kafkalite-grade-", dir=options.workdir) as tmp:
        root = Path(tmp)
        os.chmod(root, 0o755)
        module = root / "submission.py"
        module.write_text(extracted.source)
        graded = []
        for path in test_files:
            test_file = create_test_file(str(path), nbmeta_config=None)
            graded.append(
                _grade_question(test_file, path, module, extracted, root, options, progress)
            )
    return GradingResults(graded)


def _grade_question(
    test_file: TestFile,
    path: Path,
    module: Path,
    extracted: Extracted,
    root: Path,
    options: GradingOptions,
    progress: Progress | None,
) -> TestFile:
    cluster: ObservedCluster | None = None
    limits = options.limits
    if uses_spark(path):
        limits = dataclasses.replace(limits, time_s=max(limits.time_s, sandbox.SPARK_TIME_S))
    results = []
    test_file.test_cases = [_named(case) for case in test_file.test_cases]
    try:
        for index, case in enumerate(test_file.test_cases):
            needs = _needs_cluster(case)
            if needs and cluster is None:
                cluster = _fresh_cluster(root / f"cluster-{test_file.name}", options.brokers)
            given = cluster if needs else None
            verdict = _run_case(path, index, module, extracted, given, root, limits)
            results.append(TestCaseResult(case, verdict.message, verdict.passed))
            if progress is not None:
                progress(test_file.name, case.name, verdict)
            if given is not None:
                Lab(given).reset()  # the next case starts with every broker back and in sync
    finally:
        if cluster is not None:
            cluster.down()
    test_file.test_case_results = results
    return test_file


def _needs_cluster(case: TestCase) -> bool:
    """Whether the case asks for the cluster by parameter name; a case otter-grader does
    not run as a function (an OK-format doctest) is assumed to."""
    function = getattr(case.body, "test_func", None)
    if function is None:
        return True
    return not CLUSTER_PARAMETERS.isdisjoint(inspect.signature(function).parameters)


def _fresh_cluster(root: Path, brokers: int, attempts: int = 3) -> ObservedCluster:
    """A cluster on free ports; graders running side by side may pick the same ports
    between the check and the start, which ``Cluster.up`` refuses: then pick again."""

    def start() -> ObservedCluster:
        base_port = free_base_port(brokers)
        return ObservedCluster.up(root, brokers, base_port, configs=GRADING_CONFIGS)

    for _ in range(attempts - 1):
        with contextlib.suppress(ClusterError):
            return start()
    return start()


def _run_case(
    test_path: Path,
    index: int,
    module: Path,
    extracted: Extracted,
    cluster: Cluster | None,
    root: Path,
    limits: sandbox.Limits,
) -> CaseVerdict:
    grader_end, test_end = socket.socketpair()
    verdict_read, verdict_write = os.pipe()
    if cluster is not None:
        ClusterServer(cluster, grader_end).start()
    reader = _VerdictReader(verdict_read)
    reader.start()
    try:
        with sandbox.UidSlot() as slot:
            uid = slot.uid if sandbox.confined_by_uid() else None
            with sandbox.sandbox_dir(root, uid) as workdir:
                job = workdir / "job.json"
                job.write_text(
                    json.dumps(
                        {
                            "submission": str(module),
                            "test_file": str(test_path),
                            "case": index,
                            "cluster_dir": None if cluster is None else str(cluster.spec.root),
                            "channel_fd": test_end.fileno(),
                            "result_fd": verdict_write,
                        }
                    )
                )
                outcome = sandbox.run(
                    [sys.executable, "-m", "grader.child", str(job)],
                    workdir,
                    limits,
                    _child_env(workdir),
                    uid,
                    pass_fds=(test_end.fileno(), verdict_write),
                    ready=reader.ready,
                )
    finally:
        os.close(verdict_write)
        test_end.close()
        reader.join(timeout=5)
        grader_end.close()
    return _verdict(outcome, reader.verdict, extracted)


def _verdict(
    outcome: sandbox.Outcome, reported: dict[str, object] | None, extracted: Extracted
) -> CaseVerdict:
    notes = "".join(f"\nnote: {p}" for p in extracted.problems)
    if outcome.problem is not None:
        return CaseVerdict(False, f"❌ {outcome.problem}{notes}", outcome.output)
    if reported is None:
        reason = f"exited with code {outcome.exit_code} before the test finished"
        return CaseVerdict(False, f"❌ the test {reason}{notes}", outcome.output)
    passed = bool(reported.get("passed"))
    message = str(reported.get("message", ""))
    return CaseVerdict(passed, message + ("" if passed else notes), outcome.output)


def _named(case: TestCase) -> TestCase:
    """A case named by its test function ("test_nothing_lost_when_the_leader_dies"), which
    tells a student more than otter's "q2 - 1"."""
    function = getattr(case.body, "test_func", None)
    name = getattr(function, "__name__", "")
    return dataclasses.replace(case, name=name) if name.startswith("test_") else case


def _child_env(workdir: Path) -> dict[str, str]:
    """The sandbox's environment: nothing of the grader's but what Python needs."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(workdir),
        "PYTHONPATH": str(REPO_ROOT),
        "MPLBACKEND": "Agg",
    }


class _VerdictReader(threading.Thread):
    """Reads the child's pipe: ``ready`` once it has loaded, then its verdict (one JSON
    object), until the pipe closes."""

    def __init__(self, fd: int) -> None:
        super().__init__(daemon=True)
        self._fd = fd
        self.ready = threading.Event()
        self.verdict: dict[str, object] | None = None

    def run(self) -> None:
        with os.fdopen(self._fd, "rb") as pipe:
            if pipe.readline().strip() == READY.encode():
                self.ready.set()
            data = pipe.read(1 << 20)
        try:
            parsed = json.loads(data)
        except ValueError:
            return
        if isinstance(parsed, dict):
            self.verdict = parsed
