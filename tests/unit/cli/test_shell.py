"""Hints name the program as the user's shell can run it (kafkalite.cli.shell)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kafkalite.cli.shell import Shell, this_program

pytestmark = pytest.mark.unit


def test_a_hint_adds_the_cluster_folder_only_when_it_is_not_the_default() -> None:
    assert Shell().command("start", "2") == "kafkalite start 2"
    shell = Shell(".venv/bin/kafkalite", "/tmp/my lab")
    assert shell.command("down") == ".venv/bin/kafkalite down --dir '/tmp/my lab'"


def test_a_message_from_below_the_cli_names_the_program_as_run() -> None:
    shell = Shell(".venv/bin/kafkalite")
    assert shell.rewrite("run `kafkalite up --dir x` first") == (
        "run `.venv/bin/kafkalite up --dir x` first"
    )


def test_the_program_is_named_as_it_was_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "venv" / "bin" / "kafkalite"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert this_program(str(script)) == "venv/bin/kafkalite"
    assert this_program(
        "/elsewhere/python/kafkalite/__main__.py", str(script.parent / "python")
    ) == ("venv/bin/python -m kafkalite")
    monkeypatch.setenv("PATH", f"{script.parent}{os.pathsep}/usr/bin")
    assert this_program(str(script)) == "kafkalite"
