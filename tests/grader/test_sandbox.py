"""The sandbox against the submissions a grader meets: endless loops, fork bombs, floods of
output, writes outside the directory, attempts on the brokers. Each run must end within
its limits, say why, and leave no process behind."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from grader import sandbox
from grader.sandbox import Limits
from tests.support.waiting import wait_for

pytestmark = pytest.mark.grader

needs_root = pytest.mark.skipif(
    not sandbox.confined_by_uid(), reason="uid confinement needs root (this run is not root)"
)


def _run(tmp_path: Path, code: str, limits: Limits | None = None) -> sandbox.Outcome:
    with sandbox.UidSlot() as slot:
        uid = slot.uid if sandbox.confined_by_uid() else None
        with sandbox.sandbox_dir(tmp_path, uid) as workdir:
            (workdir / "main.py").write_text(textwrap.dedent(code))
            outcome = sandbox.run(
                [sys.executable, "main.py"],
                workdir,
                limits or Limits(time_s=10),
                {"PATH": os.environ["PATH"], "HOME": str(workdir)},
                uid,
            )
            if uid is not None:
                assert sandbox._processes_of(uid) == set(), "processes left behind"
    return outcome


def test_a_run_that_ends_normally_has_no_problem(tmp_path):
    outcome = _run(tmp_path, "print('hello')")
    assert outcome.exit_code == 0
    assert outcome.output.strip() == "hello"
    assert outcome.problem is None


def test_an_endless_loop_is_stopped_at_the_time_limit(tmp_path):
    started = time.monotonic()
    outcome = _run(tmp_path, "while True: pass", Limits(time_s=1.5))
    assert outcome.timed_out
    assert "time limit" in (outcome.problem or "")
    assert time.monotonic() - started < 10


def test_a_detached_child_does_not_outlive_the_run(tmp_path):
    outcome = _run(
        tmp_path,
        """
        import os, subprocess, sys
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                         start_new_session=True)
        print("spawned")
        """,
    )
    assert "spawned" in outcome.output
    assert outcome.leftover_processes >= 1


@needs_root
def test_a_fork_bomb_is_held_by_the_process_limit_and_cleaned_up(tmp_path):
    outcome = _run(
        tmp_path,
        """
        import os, time
        for _ in range(10_000):
            try:
                if os.fork() == 0:
                    time.sleep(600)
                    os._exit(0)
            except OSError:
                print("fork refused")
                break
        time.sleep(600)
        """,
        Limits(time_s=3, processes=32),
    )
    assert "fork refused" in outcome.output
    assert outcome.timed_out
    assert outcome.leftover_processes >= 1


@needs_root
def test_a_uid_whose_zombies_still_count_is_not_handed_out():
    """RLIMIT_NPROC counts a uid's zombies until they are reaped: a killed fork bomb's, by
    init, in its own time. A run given that uid would start with its limit spent."""
    with sandbox.UidSlot() as probe:
        uid = probe.uid  # the uid the next slot would be, were it not for the zombie
    ids = [f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    zombie = subprocess.Popen(["setpriv", *ids, "true"])  # not reaped until the end
    try:
        wait_for(
            lambda: psutil.Process(zombie.pid).status() == psutil.STATUS_ZOMBIE,
            timeout_s=30,
            what="the uid's process to end, unreaped",
        )
        with sandbox.UidSlot() as slot:
            assert slot.uid != uid
    finally:
        zombie.wait()


@needs_root
def test_the_run_after_a_fork_bomb_has_its_whole_process_limit(tmp_path):
    """The CI failure ("killed by SIGINT" right after fork_bomb.py): the next run got the
    bomb's uid while its zombies still counted, so its first thread failed (OpenBLAS,
    imported with numpy, then raises SIGINT at itself)."""
    limits = Limits(time_s=2, processes=32)
    _run(tmp_path, "import os\nwhile True:\n    try: os.fork()\n    except OSError: pass", limits)
    outcome = _run(
        tmp_path,
        "import threading\nt = threading.Thread(target=print, args=('thread ran',))\n"
        "t.start(); t.join()",
        limits,
    )
    assert outcome.exit_code == 0 and "thread ran" in outcome.output, outcome.output


def test_a_flood_of_output_is_stopped_and_truncated(tmp_path):
    outcome = _run(
        tmp_path,
        "import sys\nwhile True: sys.stdout.write('x' * 65536)\n",
        Limits(time_s=30, max_output_bytes=5 << 20, output_bytes=1000),
    )
    assert outcome.output_exceeded
    assert outcome.output_truncated
    assert len(outcome.output) < 2000
    assert "output" in (outcome.problem or "")


def test_running_out_of_memory_is_an_error_not_a_hang(tmp_path):
    outcome = _run(tmp_path, "x = bytearray(4 << 30)", Limits(time_s=10, memory_bytes=512 << 20))
    assert outcome.exit_code == 1
    assert "MemoryError" in outcome.output


@needs_root
@needs_root
def test_a_sandboxed_run_has_a_user_name(tmp_path):
    """Programs ask who they run as (Hadoop, under Spark's driver, refuses a nameless uid)."""
    outcome = _run(tmp_path, "import getpass; print('user', getpass.getuser())")
    assert outcome.exit_code == 0, outcome.output
    assert "user kafkalite-sandbox-" in outcome.output


@pytest.mark.skipif(shutil.which("java") is None, reason="no java on PATH (make setup installs it)")
def test_a_jvm_starts_within_the_memory_limit(tmp_path):
    """Spark's driver is a JVM: it reserves far more address space than it uses."""
    outcome = _run(
        tmp_path,
        """
        import subprocess
        subprocess.run(["java", "-Xmx512m", "-version"], check=True)
        print("jvm-ok")
        """,
        Limits(time_s=60),
    )
    assert outcome.problem is None and outcome.exit_code == 0, outcome.output
    assert "jvm-ok" in outcome.output


def test_files_written_outside_the_directory_are_reported_and_removed(tmp_path):
    outcome = _run(tmp_path, "open('/tmp/kafkalite-grader-escape.txt', 'w').write('x')")
    assert outcome.stray_files == ["/tmp/kafkalite-grader-escape.txt"]
    assert not Path("/tmp/kafkalite-grader-escape.txt").exists()
    assert "outside its directory" in (outcome.problem or "")


@needs_root
def test_the_brokers_cannot_be_signalled_or_their_files_written(tmp_path):
    broker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    data = tmp_path / "broker-data"
    data.mkdir()
    try:
        outcome = _run(
            tmp_path,
            f"""
            import os, signal
            for attempt in (lambda: os.kill({broker.pid}, signal.SIGKILL),
                            lambda: open({str(data / "x")!r}, "w")):
                try:
                    attempt()
                    print("allowed")
                except PermissionError:
                    print("refused")
            """,
        )
        assert outcome.output.split() == ["refused", "refused"]
        assert psutil.pid_exists(broker.pid) and broker.poll() is None
    finally:
        broker.kill()
        broker.wait()
