"""Grading one submission: the judge in the grader's process, the student's code in a sandbox.

The order of work, and why:
1. The submission is reduced to its definitions (``grader.extract``), so grading never
   runs a student's top-level cells against anything.
2. One sandbox (``grader.sandbox_session``) loads those definitions once for the whole
   grading; every call of the student's code is a fresh fork of it, with its own time
   limit, so a crash search's dozens of restarts stay affordable.
3. Each question (one otter-grader test file) gets a fresh cluster on free ports, and a
   Kafka proxy (``grader.kafka_proxy``) in front of it through which the sandbox reaches
   it: what one question's faults did cannot leak into another's score, and every
   durable request the submission makes is seen from outside it. A question whose cases
   ask for no cluster (``lab``, ``cluster``, ``bootstrap_servers``) is graded without one.
4. Each test case is a function run **here**, in the grader's process, never in the
   sandbox. Its parameters are resolved by name: ``student`` (``grader.student``: the
   submission, reached only as data through the sandbox), ``lab`` (a
   ``kafkalite.lab.Lab`` on the question's cluster, in this process), ``cluster`` and
   ``bootstrap_servers``. Its verdict is whether it returned; its feedback is the message
   of what it raised. Nothing the submission executes can reach either, except through
   the cluster's real state and the values it returns.
5. Between cases the cluster is put back as ``lab.reset()`` does: brokers healed, resumed
   and started again, every partition in sync.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import random
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from otter.test_files import GradingResults, create_test_file
from otter.test_files.abstract_test import TestCase, TestCaseResult, TestFile

from grader import sandbox
from grader.assignments import uses_spark
from grader.extract import Extracted, extract
from grader.kafka_proxy import KafkaProxy
from grader.sandbox_session import Session
from grader.student import SearchOptions, Student
from kafkalite.cluster import ClusterError
from kafkalite.cluster.ports import free_base_port
from kafkalite.lab.faults import ObservedCluster
from kafkalite.lab.lab import Lab

# The lab's settings: failure detection in about a second, as students see it.
GRADING_CONFIGS = {"group.min.session.timeout.ms": "500"}
CLUSTER_PARAMETERS = frozenset({"lab", "cluster", "bootstrap_servers"})
PARAMETERS = CLUSTER_PARAMETERS | {"student"}


def default_search(
    all_points: bool = False, seed: int | None = None, budget_s: float = 40.0, limit: int = 24
) -> SearchOptions:
    """Every crash point (``all_points``), or a seeded sample of at most ``limit`` points
    and ``budget_s`` seconds per search (the seed random unless given, and reported)."""
    chosen = random.SystemRandom().randrange(1, 1 << 31) if seed is None else seed
    if all_points:
        return SearchOptions(seed=chosen)
    return SearchOptions(seed=chosen, limit=limit, budget_s=budget_s)


@dataclass(frozen=True, slots=True)
class GradingOptions:
    limits: sandbox.Limits = field(default_factory=sandbox.Limits)
    brokers: int = 3
    # Where clusters and sandboxes live (the system's temporary dir if None). As root, the
    # sandbox users must be able to traverse it and its parents (o+x): Spark's file system
    # layer creates a checkpoint by walking its absolute path from /.
    workdir: Path | None = None
    crash_points: SearchOptions = field(default_factory=default_search)


@dataclass(frozen=True, slots=True)
class CaseVerdict:
    passed: bool
    message: str
    output: str = ""


Progress = Callable[[str, str, CaseVerdict], None]


def grade(
    test_files: list[Path],
    submission: Path | None,
    options: GradingOptions = GradingOptions(),
    progress: Progress | None = None,
    extracted: Extracted | None = None,
) -> GradingResults:
    """Grade ``submission`` (or definitions already ``extracted``) against otter-grader
    test files; never raises for the student's faults (those are failed cases with
    reasons)."""
    if extracted is None:
        assert submission is not None, "a submission, or its extracted definitions"
        extracted = extract(submission)
    with tempfile.TemporaryDirectory(prefix="kafkalite-grade-", dir=options.workdir) as tmp:
        root = Path(tmp)
        os.chmod(root, 0o755)
        module = root / "submission.py"
        module.write_text(extracted.source)
        session = Session(module, root, options.limits)
        session.start()
        try:
            graded = [
                _grade_question(path, session, extracted, root, options, progress)
                for path in test_files
            ]
        finally:
            session.close()
    return GradingResults(graded)


def _grade_question(
    path: Path,
    session: Session,
    extracted: Extracted,
    root: Path,
    options: GradingOptions,
    progress: Progress | None,
) -> TestFile:
    test_file = create_test_file(str(path), nbmeta_config=None)
    test_file.test_cases = [_named(case) for case in test_file.test_cases]
    time_s = options.limits.time_s
    if uses_spark(path):
        time_s = max(time_s, sandbox.SPARK_TIME_S)
    cluster, proxy = None, None
    if any(_needs_cluster(case) for case in test_file.test_cases):
        cluster = _fresh_cluster(root / f"cluster-{test_file.name}", options.brokers)
        brokers = {b.broker_id: (b.host, b.port) for b in cluster.spec.brokers}
        proxy = KafkaProxy(brokers, session.gate)
        proxy.start()
    session.attach(cluster, proxy)
    results = []
    try:
        for case in test_file.test_cases:
            student = Student(session, extracted, time_s, options.crash_points)
            verdict = _run_case(case, student, cluster, extracted)
            results.append(TestCaseResult(case, verdict.message, verdict.passed))
            if progress is not None:
                progress(test_file.name, case.name, verdict)
            if cluster is not None:
                Lab(cluster).reset()  # the next case starts with every broker back and in sync
    finally:
        session.attach(None, None)
        if proxy is not None:
            proxy.stop()
        if cluster is not None:
            cluster.down()
    test_file.test_case_results = results
    return test_file


def _test_function(case: TestCase) -> Callable[..., Any]:
    function = getattr(case.body, "test_func", None)
    if function is None:
        raise TypeError(f"{case.name}: not an exception-based otter test case")
    return function  # type: ignore[no-any-return]


def _needs_cluster(case: TestCase) -> bool:
    parameters = inspect.signature(_test_function(case)).parameters
    return not CLUSTER_PARAMETERS.isdisjoint(parameters)


def _run_case(
    case: TestCase, student: Student, cluster: ObservedCluster | None, extracted: Extracted
) -> CaseVerdict:
    function = _test_function(case)
    lab = Lab(cluster) if cluster is not None else None
    given: dict[str, Any] = {"student": student}
    if lab is not None and cluster is not None:
        given |= {"lab": lab, "cluster": cluster, "bootstrap_servers": cluster.bootstrap_servers}
    names = list(inspect.signature(function).parameters)
    unknown = [n for n in names if n not in given]
    if unknown:  # the lab's author's mistake, said to the staff who read the results
        known = ", ".join(sorted(PARAMETERS))
        message = f"❌ grader error: {case.name} asks for {unknown}; known: {known}"
        return CaseVerdict(False, message)
    try:
        function(**{n: given[n] for n in names})
    except AssertionError as failure:
        return CaseVerdict(False, _failed(str(failure), student, extracted))
    except Exception as exc:  # the grader's side broke: say so, for the staff
        trace = traceback.format_exc(limit=6)
        message = (
            f"the test could not finish ({type(exc).__name__}: {exc}); this is the grader's "
            "or the cluster's fault, not necessarily yours"
        )
        return CaseVerdict(False, _failed(message, student, extracted) + f"\n\n{trace}")
    finally:
        if lab is not None:
            lab.close_clients()
    unjudged = [reason for search in student.searches if (reason := search.unjudged())]
    if unjudged:  # its checks held, but on no crash: a crash-searched case cannot pass so
        return CaseVerdict(False, _failed(unjudged[0], student, extracted))
    return CaseVerdict(True, _passed(student))


def _failed(message: str, student: Student, extracted: Extracted) -> str:
    """The case's feedback: what went wrong first (never a bare "failed"), then the crash
    searches it ran and the notes on what of the submission could not be used."""
    text = message.strip() or "a check of this case did not hold (it gave no reason)"
    searches = [search.summary() for search in student.searches]
    lines = [f"❌ {text}", *searches, *(f"note: {p}" for p in extracted.problems)]
    return "\n".join(lines)


def _passed(student: Student) -> str:
    return "\n".join(["✅ passed", *(search.summary() for search in student.searches)])


def _named(case: TestCase) -> TestCase:
    """A case named by its test function ("test_nothing_lost_when_the_leader_dies"), which
    tells a student more than otter's "q2 - 1"."""
    name = getattr(_test_function(case), "__name__", "")
    return dataclasses.replace(case, name=name) if name.startswith("test_") else case


def _fresh_cluster(root: Path, brokers: int, attempts: int = 3) -> ObservedCluster:
    """A cluster on free ports; graders running side by side may pick the same ports
    between the check and the start, which ``Cluster.up`` refuses: then pick again."""

    def start() -> ObservedCluster:
        base_port = free_base_port(brokers)
        return ObservedCluster.up(root, brokers, base_port, configs=GRADING_CONFIGS)

    for _ in range(attempts - 1):
        try:
            return start()
        except ClusterError:
            continue
    return start()
