"""``grader`` in a student's notebook: check an answer the way the autograder grades it,
without touching the student's own cluster.

The first cell of a lab sets ``grader = Notebook("04-leader-failover")``; each
``grader.check("question")`` cell then grades that question's *public* cases (the ones
the notebook carries in its metadata; the hidden ones are not in the student's copy)
against the definitions this kernel has run, exactly as ``python -m grader`` would: the
definitions extracted, loaded in a sandboxed process, and each case's judge in this
process on a **private cluster** started for the check and stopped after it. The
student's cluster, its topics and its dashboard are never touched: no topic of a check
appears there, no broker of theirs is killed.

``grader.export()`` writes the submission zip (otter-grader's export of the saved
notebook) and checks every question's public cases against what was saved: what a
student uploads is what was checked.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHECK_SEARCH_S = 20.0  # a check samples crash points briefly; the real grading tries more
CHECK_LIMIT = 6


@dataclass(frozen=True, slots=True)
class CaseResult:
    name: str
    passed: bool
    message: str


@dataclass(frozen=True, slots=True)
class CheckReport:
    """What a check shows in the notebook: one line per public case."""

    question: str
    cases: list[CaseResult]

    @property
    def passed(self) -> bool:
        return all(case.passed for case in self.cases)

    def __repr__(self) -> str:
        if not self.cases:
            return f"{self.question}: no public test to check (it is graded after submission)"
        head = f"{self.question}: " + ("all public tests passed" if self.passed else "not yet")
        lines = [head]
        for case in self.cases:
            lines.append(("  ✅ " if case.passed else "  ❌ ") + case.name)
            if not case.passed:
                lines.extend("     " + line for line in case.message.splitlines()[:12])
        return "\n".join(lines)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))


class Notebook:
    """The ``grader`` object of a student notebook."""

    def __init__(self, lab: str, notebook: str | None = None) -> None:
        self.lab = lab
        self.path = Path(notebook or f"{lab}.ipynb")

    def check(self, question: str) -> CheckReport:
        """Grade ``question``'s public cases against what this kernel has run."""
        return self._check([question], _kernel_definitions())[0]

    def check_all(self) -> list[CheckReport]:
        return self._check(sorted(self._public_tests()), _kernel_definitions())

    def export(self, pdf: bool = False, run_tests: bool = True) -> list[CheckReport]:
        """The submission zip of the saved notebook; with ``run_tests``, its public checks."""
        import otter  # noqa: PLC0415  (otter-grader loads on use)

        otter.Notebook(str(self.path)).export(pdf=pdf, run_tests=False)
        if not run_tests:
            return []
        from grader.extract import extract  # noqa: PLC0415

        return self._check(sorted(self._public_tests()), extract(self.path))

    def _public_tests(self) -> dict[str, str]:
        if not self.path.is_file():
            raise FileNotFoundError(
                f"{self.path} is not here: run the check from the folder of your notebook"
            )
        notebook = json.loads(self.path.read_text(encoding="utf-8"))
        tests = notebook.get("metadata", {}).get("otter", {}).get("tests", {})
        return {name: text for name, text in tests.items() if isinstance(text, str)}

    def _check(self, questions: list[str], definitions: Any) -> list[CheckReport]:
        from grader.runner import GradingOptions, default_search, grade  # noqa: PLC0415

        tests = self._public_tests()
        reports = []
        with tempfile.TemporaryDirectory(prefix="kafkalite-check-") as tmp:
            folder = Path(tmp)
            files = []
            for question in questions:
                if question not in tests:
                    reports.append(CheckReport(question, []))
                    continue
                path = folder / f"{question}.py"
                path.write_text(tests[question])
                files.append(path)
            if files:
                search = default_search(budget_s=CHECK_SEARCH_S, limit=CHECK_LIMIT)
                options = GradingOptions(workdir=folder, crash_points=search)
                results = grade(files, None, options, extracted=definitions)
                for name in results.test_files:
                    cases = [
                        CaseResult(r.test_case.name, r.passed, (r.message or "").strip())
                        for r in results.get_result(name).test_case_results
                    ]
                    reports.append(CheckReport(name, cases))
        return reports


def _kernel_definitions() -> Any:
    """What this kernel has run, cell by cell, reduced to definitions as when grading."""
    from IPython import get_ipython  # noqa: PLC0415

    from grader.extract import from_cells  # noqa: PLC0415

    shell = get_ipython()
    history = shell.user_ns.get("In", []) if shell is not None else []
    return from_cells([(f"In [{n}]", source) for n, source in enumerate(history) if source])
