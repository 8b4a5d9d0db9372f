"""``kafkalite events --follow`` opens at the present: the last 20 events that are news,
then what happens next; ``--replay`` opens with every event the brokers hold, a restarted
broker's metadata replays marked ``(replay)``. A line on stderr divides the two."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from kafkalite.cli.events_view import NOW_LINE, RECENT_EVENTS
from kafkalite.cluster import Cluster
from tests.support.cli import kafkalite
from tests.support.topics import create_topic
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.interop, pytest.mark.slow]


@contextmanager
def following(root: str, tmp_path: Path, *options: str) -> Iterator[Callable[[], list[str]]]:
    """``kafkalite events --follow`` running; yields what it has printed once the history
    is out (stdout lines: the events, history first, then the news)."""
    out, err = tmp_path / f"out{len(options)}", tmp_path / f"err{len(options)}"
    with out.open("w") as stdout, err.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "kafkalite", "events", "--follow", "--dir", root, *options],
            stdout=stdout,
            stderr=stderr,
        )
    try:
        wait_for(lambda: NOW_LINE in err.read_text(), 30, "the history to be printed")
        yield lambda: out.read_text().splitlines()
    finally:
        process.terminate()
        process.wait(10)


def test_follow_opens_at_the_present_and_replay_with_the_history(
    make_cluster3: Callable[..., Cluster], tmp_path: Path
) -> None:
    cluster = make_cluster3()
    root = str(cluster.spec.root)
    for n in range(10):  # a topic_created on each broker: 30 events of news
        create_topic(cluster.bootstrap_servers, f"news-{n}", 1, 3)
    restarted = kafkalite("restart", "3", "--dir", root)  # its replay re-tells them all
    assert restarted.returncode == 0, restarted.stderr
    history = kafkalite("events", "--dir", root).stdout.splitlines()
    assert len(history) > RECENT_EVENTS + 30 and any("(replay)" in e for e in history)

    with following(root, tmp_path) as printed:
        opening = printed()
        assert len(opening) == RECENT_EVENTS
        assert not any("(replay)" in line for line in opening), opening
        # the last news when it opened: later than any news before it (leaders may move
        # meanwhile, so the history read again may have grown)
        news_then, news_now = news(history), news(kafkalite("events", "--dir", root).stdout)
        start = news_now.index(opening[0])
        assert news_now[start : start + RECENT_EVENTS] == opening
        assert start + RECENT_EVENTS >= len(news_then)
        create_topic(cluster.bootstrap_servers, "fresh", 1, 3)
        wait_for(
            lambda: any("topic_created" in e and "fresh" in e for e in printed()[RECENT_EVENTS:]),
            30,
            "the new topic's events after the history",
        )

    with following(root, tmp_path, "--replay") as printed:
        replayed = printed()
        assert replayed[: len(history)] == history
        assert any("(replay)" in line for line in replayed)


def news(lines: list[str] | str) -> list[str]:
    """The event lines that are not a metadata replay's."""
    if isinstance(lines, str):
        lines = lines.splitlines()
    return [line for line in lines if "(replay)" not in line]
