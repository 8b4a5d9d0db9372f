"""Every "to undo / to stop" hint the CLI prints works pasted into the shell it was printed
in: a shell that runs ``.venv/bin/kafkalite`` without having activated the virtual
environment (as ``make up`` does), so ``kafkalite`` alone is not on its PATH.

Each test runs a command the way a user types it (``bash -c`` in the clone, the venv off
the PATH), takes the hint from what it printed, and runs that the same way.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from kafkalite.cluster import Cluster
from tests.support.ports import free_base_port

pytestmark = [pytest.mark.interop, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = os.path.relpath(Path(sys.executable).with_name("kafkalite"), ROOT)
SHELL_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"  # no venv


def typed(command: str) -> subprocess.CompletedProcess[str]:
    """``command`` as a user types it in a shell in the clone, the venv not activated."""
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["PATH"] = SHELL_PATH
    return subprocess.run(
        ["bash", "-c", command],
        check=False,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def hint(output: str, pattern: str) -> str:
    found = re.search(pattern, output)
    assert found, f"no hint matching {pattern!r} in:\n{output}"
    return found.group(1)


def test_the_shell_of_these_tests_has_no_kafkalite_on_its_path() -> None:
    assert shutil.which("kafkalite", path=SHELL_PATH) is None


@pytest.mark.parametrize(
    ("verb", "undone"),
    [
        (["kill", "2"], "started"),
        (["stop", "2"], "started"),
        (["pause", "2"], "resumed"),
        (["isolate", "2"], "is healed"),
        (["slow", "2", "--delay-ms", "200"], "is healed"),
    ],
)
def test_each_undo_hint_runs_as_printed(
    make_cluster3: Callable[..., Cluster], verb: list[str], undone: str
) -> None:
    root = make_cluster3().spec.root
    done = typed(f"{PROGRAM} {' '.join(verb)} --dir {root}")
    assert done.returncode == 0, done.stderr
    undo = hint(done.stdout, r"\(`([^`]+)` undoes it\)")
    assert undo.startswith(f"{PROGRAM} ") and f"--dir {root}" in undo, undo
    undid = typed(undo)
    assert undid.returncode == 0, undid.stderr
    assert f"broker 2 {undone}" in undid.stdout, undid.stdout


def test_the_stop_hint_of_up_runs_as_printed(tmp_path: Path) -> None:
    root = tmp_path / "cluster"
    up = typed(f"{PROGRAM} up --brokers 1 --dir {root} --port {free_base_port(1)}")
    assert up.returncode == 0, up.stderr
    down = typed(hint(up.stderr, r"to stop it: (.+)"))
    assert down.returncode == 0, down.stderr
    assert "stopped broker 1 (controlled shutdown)" in down.stdout


@pytest.mark.parametrize(("served", "stopped"), [("lab", "JupyterLab"), ("demo", "Voilà")])
def test_the_stop_hint_of_a_served_app_runs_as_printed(
    tmp_path: Path, served: str, stopped: str
) -> None:
    """``make up`` and ``make demo`` run ``.venv/bin/kafkalite lab`` and ``... demo``: the
    stop line they print stops the app and the cluster from the same shell."""
    root, labs = tmp_path / "cluster", tmp_path / "labs"
    labs.mkdir()
    ports = f"--kafka-port {free_base_port(1)} --port {free_base_port(1)}"
    where = f"--labs {labs}" if served == "lab" else ""
    started = typed(f"{PROGRAM} {served} --brokers 1 --dir {root} {ports} {where}")
    stop = re.search(r"stop (?:both|all):\s+(.+)", started.stdout)
    down = typed(stop.group(1) if stop else f"{PROGRAM} down --dir {root}")  # cleaned up anyway
    assert started.returncode == 0, started.stderr
    assert stop, started.stdout
    assert stop.group(1) == f"{PROGRAM} down --dir {root}"
    assert down.returncode == 0, down.stderr
    assert f"{stopped} stopped" in down.stdout, down.stdout
    assert "stopped broker 1 (controlled shutdown)" in down.stdout, down.stdout


def test_an_error_names_a_program_the_shell_can_run(tmp_path: Path) -> None:
    missing = tmp_path / "nothing-here"
    failed = typed(f"{PROGRAM} status --dir {missing}")
    assert failed.returncode == 1
    suggested = hint(failed.stderr, r"run `([^`]+)` first")
    assert suggested == f"{PROGRAM} up --dir {missing}"
    assert typed(f"{suggested.split()[0]} --help").returncode == 0
