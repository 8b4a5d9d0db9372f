"""The Gradescope zip installs what grading a lab needs, and no more."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from grader import assignments, bundle

pytestmark = [pytest.mark.grader, pytest.mark.unit]


def _names(requirements: str) -> set[str]:
    return {line.split("==")[0] for line in requirements.splitlines()}


def test_a_lab_without_spark_installs_neither_spark_nor_the_test_tools() -> None:
    names = _names(bundle.grading_requirements(assignments.find_master("04")))
    assert {"kafka-python", "confluent-kafka", "otter-grader", "pandas"} <= names
    assert not names & {"pyspark", "pyarrow", "pytest", "jupyterlab", "playwright", "mypy"}


def test_the_spark_lab_gets_spark_and_java(tmp_path: Path) -> None:
    master = assignments.find_master("09")
    assert {"pyspark", "pyarrow"} <= _names(bundle.grading_requirements(master))
    with zipfile.ZipFile(bundle.build(master, tmp_path / "09.zip")) as archive:
        assert bundle.JAVA_SCRIPT in archive.namelist()


def test_setup_sh_without_a_new_enough_python_says_what_it_needs(tmp_path: Path) -> None:
    """A Gradescope base image whose only Python is too old, and whose package manager
    cannot install a newer one: setup.sh stops at once with what it needs, before any
    venv or pip step."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    old_python = bin_dir / "python3"
    old_python.write_text(
        '#!/bin/sh\nif [ "$1" = "--version" ]; then echo "Python 3.8.10"; exit 0; fi\nexit 1\n'
    )
    apt_get = bin_dir / "apt-get"
    apt_get.write_text("#!/bin/sh\nexit 0\n")  # "installs" nothing
    for script in (old_python, apt_get):
        script.chmod(0o755)
    (tmp_path / "source").mkdir()
    setup = tmp_path / "setup.sh"
    setup.write_text(bundle.SETUP_SH)
    bash = shutil.which("bash")
    assert bash is not None
    done = subprocess.run(
        [bash, str(setup)],
        check=False,
        env={"PATH": str(bin_dir), "AUTOGRADER_ROOT": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done
    assert "no Python >= 3.11 with venv here (Python 3.8.10)" in done.stderr, done.stderr
    assert not (tmp_path / "source" / ".venv").exists()
