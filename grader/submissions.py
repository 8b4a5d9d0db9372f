"""Where a submission's code is: the file given, or the one notebook (else the one script)
in the folder given, as Gradescope and otter-grader find it."""

from __future__ import annotations

from pathlib import Path


class SubmissionError(Exception):
    """No gradable file where the submission should be: a one-line reason."""


def resolve(path: Path) -> Path:
    path = Path(path)
    if path.is_file():
        if path.suffix not in (".ipynb", ".py"):
            raise SubmissionError(f"{path.name} is neither a notebook (.ipynb) nor a script (.py)")
        return path
    if not path.is_dir():
        raise SubmissionError(f"no submission at {path}")
    for pattern in ("*.ipynb", "*.py"):
        found = [p for p in sorted(path.glob(pattern)) if p.name != "__init__.py"]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            names = ", ".join(p.name for p in found)
            raise SubmissionError(f"more than one {pattern} in {path}: {names}")
    raise SubmissionError(f"no notebook (.ipynb) or script (.py) in {path}")
