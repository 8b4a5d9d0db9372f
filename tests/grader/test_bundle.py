"""The Gradescope zip installs what grading a lab needs, and no more."""

from __future__ import annotations

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
