"""``kafkalite status --watch`` and ``kafkalite events --follow`` follow the cluster while
other shells break it: the watch runs in a real terminal (tmux), the fault verbs are
separate ``kafkalite`` commands, as a student runs them in a second terminal."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
from confluent_kafka import Producer

from kafkalite.cluster import Cluster
from kafkalite.cluster.spec import ClusterSpec
from tests.support.cli import kafkalite
from tests.support.topics import create_topic
from tests.support.waiting import wait_for

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

SHOWN_WITHIN_S = 2.0
FENCED = "broker_fenced"


class Terminal:
    """One command running in a detached tmux session; ``screen()`` is what it shows."""

    def __init__(self, command: list[str], columns: int = 220) -> None:
        self.name = f"kafkalite-{uuid.uuid4().hex[:8]}"
        size = ["-x", str(columns), "-y", "60"]
        subprocess.run(["tmux", "new-session", "-d", "-s", self.name, *size, *command], check=True)

    def screen(self) -> str:
        shown = subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", self.name],
            capture_output=True,
            text=True,
            check=False,
        )
        return shown.stdout

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], check=False)


@pytest.fixture
def terminal() -> Iterator[Callable[..., Terminal]]:
    opened: list[Terminal] = []

    def open_terminal(command: list[str], columns: int = 220) -> Terminal:
        opened.append(Terminal(command, columns))
        return opened[-1]

    try:
        yield open_terminal
    finally:
        for t in opened:
            t.close()


def broker_row(screen: str, address: str) -> str:
    return next((line for line in screen.splitlines() if address in line), "")


def test_status_watch_shows_each_fault_within_two_seconds(
    make_cluster3: Callable[..., Cluster], terminal: Callable[..., Terminal]
) -> None:
    cluster = make_cluster3()
    root = str(cluster.spec.root)
    address = cluster.spec.broker(3).address
    watch = terminal([sys.executable, "-m", "kafkalite", "status", "--watch", "--dir", root])
    wait_for(lambda: "running" in broker_row(watch.screen(), address), 30, "the first frame")

    steps = [
        (["kill", "3"], "dead"),
        (["start", "3"], "running"),
        (["pause", "3"], "paused"),
        (["resume", "3"], "running"),
        (["isolate", "3"], "isolated"),
        (["heal", "3"], "running"),
        (["slow", "3", "--delay-ms", "300"], "300 ms"),
        (["heal", "3"], "running"),
    ]
    for verb, shown in steps:
        done = kafkalite(*verb, "--dir", root)
        assert done.returncode == 0, done.stderr
        told = time.monotonic()

        def seen(shown: str = shown, verb: list[str] = verb) -> bool:
            row = broker_row(watch.screen(), address)
            healed = verb[0] != "heal" or "300 ms" not in row
            return shown in row and healed

        wait_for(seen, SHOWN_WITHIN_S, f"`{' '.join(verb)}` in the watch")
        assert time.monotonic() - told <= SHOWN_WITHIN_S

    # broker 3 now runs as the process `kafkalite start 3` started: down() stops it too
    restarted = psutil.Process(ClusterSpec.load(Path(root)).broker(3).pid or 0)
    cluster.down()
    assert not restarted.is_running() or restarted.status() == psutil.STATUS_ZOMBIE


@pytest.mark.parametrize("columns", [80, 120])
def test_status_fits_the_terminal_with_every_offset_shown(
    make_cluster3: Callable[..., Cluster], terminal: Callable[..., Terminal], columns: int
) -> None:
    """A student's terminal is often 80 columns wide: nothing is cut short (rich marks a
    cut with an ellipsis), and each replica's LEO/HW is there whole."""
    cluster = make_cluster3()
    topic = "a-topic-with-a-rather-long-name"
    create_topic(cluster.bootstrap_servers, topic, 3, 3)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all"})
    for n in range(123):
        producer.produce(topic, f"record-{n}".encode(), partition=n % 3)
    assert producer.flush(30) == 0
    end = {p: 41 for p in range(3)}
    root = str(cluster.spec.root)
    for command in (["status"], ["status", "--watch"]):
        shown = terminal(
            [
                "bash",
                "-c",
                f"{sys.executable} -m kafkalite {' '.join(command)} --dir {root}; sleep 60",
            ],
            columns,
        )

        def settled(shown: Terminal = shown) -> str | None:
            screen = shown.screen()
            return screen if screen.count(f"{end[0]}/{end[0]}") >= 9 else None

        screen = wait_for(settled, 30, f"`{' '.join(command)}` with every replica at 41/41")
        assert "…" not in screen, screen
        assert max(map(len, screen.splitlines())) <= columns
        assert "HW" in screen and "LSO" in screen and "leader" in screen


def test_status_watch_without_a_terminal_prints_a_table_every_interval(
    make_cluster3: Callable[..., Cluster], tmp_path: Path
) -> None:
    root = str(make_cluster3().spec.root)
    out = tmp_path / "watch.txt"
    with out.open("w") as piped:
        watch = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kafkalite",
                "status",
                "--watch",
                "--interval",
                "0.2",
                "--dir",
                root,
            ],
            stdout=piped,
        )
    try:
        wait_for(lambda: out.read_text().count("partitions") >= 3, 30, "three tables")
    finally:
        watch.terminate()
        watch.wait(10)
    frames = out.read_text().split("\n-- ")
    assert len(frames) >= 3 and all("brokers" in f and "quorum" in f for f in frames[:3])


def test_events_follow_prints_an_election_and_commands_say_what_they_did(
    make_cluster3: Callable[..., Cluster], terminal: Callable[..., Terminal]
) -> None:
    cluster = make_cluster3()
    root = str(cluster.spec.root)
    created = kafkalite("events", "--dir", root)
    assert created.returncode == 0 and "broker_started" in created.stdout, created.stderr

    follow = terminal(
        [sys.executable, "-m", "kafkalite", "events", "--follow", "--dir", root, "--type", FENCED]
    )
    killed = kafkalite("kill", "2", "--dir", root)
    assert killed.stdout.strip() == (
        "broker 2 was killed (SIGKILL): a crash, no shutdown; it is now dead "
        f"(`{os.path.relpath(sys.executable)} -m kafkalite start 2 --dir {root}` undoes it)"
    )
    wait_for(lambda: FENCED in follow.screen(), 30, "the fence in events --follow")
    stopped = kafkalite("stop", "1", "--dir", root)
    assert stopped.stdout.startswith("broker 1 stopped (controlled shutdown"), stopped.stdout
    down = kafkalite("down", "--dir", root)
    assert down.stdout.strip().splitlines() == [
        "stopped broker 3 (controlled shutdown)",
        "brokers 1 (stopped), 2 (dead) already down",
    ]


def test_up_starts_the_make_up_cluster_and_help_is_plain_text(tmp_path: Path) -> None:
    makefile = Path(__file__).parents[2] / "Makefile"
    assert "BROKERS ?= 3" in makefile.read_text()
    help_texts = [kafkalite("--help").stdout, kafkalite("slow", "--help").stdout]
    assert all("``" not in text for text in help_texts)
    assert "(default: 500)" in help_texts[1]
    assert "(default: 3)" in kafkalite("up", "--help").stdout
