"""One test case, inside the sandbox: load the student's definitions, run the case, report.

``python -m grader.child JOB`` is what ``grader.runner`` starts under ``grader.sandbox``.
The job (a JSON file) names the student's module, the otter-grader test file and which
of its cases to run, the grading cluster's directory and two inherited descriptors: the
cluster channel (``grader.channel``) and the pipe the verdict is written to. The test
case gets, by parameter name as in otter-grader, the student's definitions plus ``lab``
(a ``kafkalite.lab.Lab`` on the grading cluster), ``cluster`` and ``bootstrap_servers``;
a case that asks for none of them runs without a cluster (``cluster_dir`` is null).
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import socket
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grader.channel import READY, RemoteCluster
from kafkalite.lab.faults import ObservedCluster
from kafkalite.lab.lab import Lab

if TYPE_CHECKING:
    from otter.test_files.abstract_test import TestFile


def load_test_file(path: str) -> TestFile:
    """otter-grader's reading of a test file, imported here rather than at the top: otter
    imports nbformat, whose validator imports jsonschema's format checkers, and the IRI
    one (``rfc3987_syntax``) compiles a grammar at import — about 2 s of CPU in every
    sandboxed case, for a validation no test case does. Without it, jsonschema leaves
    that one format unchecked."""
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]  # None: "not installed"
    from otter.test_files import create_test_file  # noqa: PLC0415 (see above)

    return create_test_file(path, nbmeta_config=None)


class GradingCluster(ObservedCluster, RemoteCluster):
    """What ``lab.cluster`` is in a graded test: the lab's cluster (fault windows for
    ``lab.timeline``) whose verbs the grader carries out."""


class NoCluster:
    """``lab``, ``cluster`` and ``bootstrap_servers`` in a case graded without a cluster
    (its test hands the data in): a student's function that reaches for one anyway is
    told why, instead of failing on a missing name."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(
            f"this question is graded without a cluster (its tests pass you the data), "
            f"so `lab.{name}` is not available: use the arguments your function is given"
        )


def cluster_names(lab: Lab | None) -> dict[str, Any]:
    """What a notebook has before the student's code runs: ``lab`` and its cluster."""
    if lab is None:
        absent = NoCluster()
        return {"lab": absent, "cluster": absent, "bootstrap_servers": absent}
    return {"lab": lab, "cluster": lab.cluster, "bootstrap_servers": lab.bootstrap_servers}


def load_submission(path: Path, names: dict[str, Any]) -> dict[str, Any]:
    """The student's module namespace, which the tests run in: a name a test sets (a
    notebook's ``PAYMENTS = TopicPartition(...)``) is one the student's functions see.
    ``names`` (``lab`` and its cluster) are there before the student's code runs, as in
    the notebook. Raises whatever the student's code raises at import."""
    spec = importlib.util.spec_from_file_location("submission", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(names)
    sys.modules["submission"] = module
    spec.loader.exec_module(module)
    return module.__dict__


def run_case(test_file: TestFile, index: int, env: dict[str, Any]) -> tuple[bool, str]:
    """Run one case of an otter-grader test file with otter's own runner and messages."""
    test_file.test_cases = [test_file.test_cases[index]]
    test_file.run(env)
    result = test_file.test_case_results[0]
    message = result.message or ""
    return result.passed, message if result.passed else f"{failure_line(message)}\n\n{message}"


def failure_line(message: str) -> str:
    """The line a student reads first: what was raised (an assertion's own words), not
    the doctest transcript otter-grader reports for OK-format tests, which starts with
    "Trying:"."""
    lines = message.splitlines()
    raised = [i for i, line in enumerate(lines) if line.strip() == "Exception raised:"]
    if raised:
        block = itertools.takewhile(lambda line: line[:1].isspace(), lines[raised[-1] + 1 :])
        last = [line.strip() for line in block if line.strip()]
        if last:
            return f"❌ {last[-1]}"
    if any(line.strip() == "Expected:" for line in lines):
        return "❌ a value differs from the one expected"
    return "❌ failed"


def main(job_path: str) -> int:
    job = json.loads(Path(job_path).read_text())
    test_file = load_test_file(job["test_file"])
    verdict = os.fdopen(job["result_fd"], "w")
    verdict.write(READY + "\n")  # loaded: the case's time starts now
    verdict.flush()
    channel = socket.socket(fileno=job["channel_fd"])
    cluster_dir = job["cluster_dir"]
    lab = None if cluster_dir is None else Lab(GradingCluster.over(Path(cluster_dir), channel))
    try:
        env = load_submission(Path(job["submission"]), cluster_names(lab))
    except BaseException as exc:
        traceback.print_exc()
        message = f"your code raised {type(exc).__name__} when it was loaded: {exc}"
        verdict.write(json.dumps({"passed": False, "message": message}))
        verdict.flush()
        return 1
    passed, message = run_case(test_file, job["case"], env)
    verdict.write(json.dumps({"passed": passed, "message": message}))
    verdict.flush()
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # threads the student started must not keep the test alive
