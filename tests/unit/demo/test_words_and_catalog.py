"""The words under the picture, the quiz's answer, the catalog and the page's address
(pure): what the presenter says must agree with the state it is computed from."""

from __future__ import annotations

from typing import Any

import pytest

from kafkalite.cli import main
from kafkalite.demo import server
from kafkalite.demo.app import scenario_asked
from kafkalite.demo.catalog import SCENARIOS, listing, scenario_info
from kafkalite.demo.scenarios import scenario_class
from kafkalite.demo.scenarios.committed import answer, answer_in_words
from kafkalite.demo.words import brokers, group, partitions, replica_table, span
from kafkalite.lab.dashboard.model import DashboardModel, DashboardState
from kafkalite.lab.group_members import GroupMember, GroupView

pytestmark = pytest.mark.unit

NOW = 1_800_000_000_000


def replica(broker: int, leo: int, hw: int, in_isr: bool = True) -> dict[str, Any]:
    return {
        "broker": broker,
        "state": "running",
        "in_isr": in_isr,
        "leader_epoch": 0,
        "log_start_offset": 0,
        "log_end_offset": leo,
        "high_watermark": hw,
    }


def lecture_picture() -> dict[str, Any]:
    """The lecture's partition: 0-8 everywhere, 9-10 on brokers 1 and 2, 11 on 1 alone."""
    return {
        "brokers": [
            {"id": b, "address": f"h:{b}", "state": "running", "controller": b == 2}
            for b in (1, 2, 3)
        ],
        "partitions": [
            {
                "topic": "payments",
                "partition": 0,
                "leader": 1,
                "leader_epoch": 0,
                "isr": [1, 2],
                "high_watermark": 11,
                "last_stable_offset": 11,
                "log_start_offset": 0,
                "replicas": [replica(1, 12, 11), replica(2, 11, 11), replica(3, 9, 9, False)],
            }
        ],
        "quorum": {"leader": 2, "epoch": 3},
    }


def test_the_lectures_question_answered_by_the_high_watermark() -> None:
    assert answer(11) == {8: True, 10: True, 11: False}
    assert answer(9) == {8: True, 10: False, 11: False}
    said = answer_in_words(11, [1, 2])
    assert said.startswith("8 committed, 10 committed, 11 NOT committed")
    assert "brokers 1 and 2" in said


def test_the_words_name_what_is_committed_and_who_lacks_the_rest() -> None:
    state = DashboardModel().update(lecture_picture(), [], NOW)
    lines = partitions(state)
    assert lines[0] == "broker 2 is the active controller."
    assert "high watermark 11: offsets 0-10 are committed." in lines[1]
    assert lines[2] == "offset 11 is not committed: broker 2 (in the ISR) has not fetched it."
    assert lines[3] == "broker 3 is out of the ISR: it has offsets 0-8."


def test_the_quiz_table_gives_no_answer_away() -> None:
    rows = replica_table(DashboardModel().update(lecture_picture(), [], NOW))
    assert rows == [
        ("payments-0", "broker 1", "leader, in the ISR", "offsets 0-11"),
        ("payments-0", "broker 2", "follower, in the ISR", "offsets 0-10"),
        ("payments-0", "broker 3", "follower, out of the ISR", "offsets 0-8"),
    ]
    assert not any("committed" in cell or "watermark" in cell for row in rows for cell in row)


def test_small_words() -> None:
    assert (span(3, 3), span(3, 5)) == ("offset 3", "offsets 3-5")
    assert (brokers([2]), brokers([3, 1])) == ("broker 2", "brokers 1 and 3")


def test_every_scenario_in_the_catalog_loads_and_has_steps() -> None:
    assert len(listing()) == len(SCENARIOS)
    for info in SCENARIOS:
        scenario = scenario_class(info.slug)
        assert scenario.info == info and scenario.topics
    with pytest.raises(KeyError, match="kafkalite demo --list"):
        scenario_info("nope")


def test_the_page_address_opens_a_scenario() -> None:
    assert scenario_asked("token=abc&scenario=unclean") == "unclean"
    assert scenario_asked("token=abc") is None


def test_kafkalite_demo_lists_one_line_per_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [s.slug for s in SCENARIOS]
    assert main(["demo", "nope", "--dir", "/nonexistent"]) == 1
    assert "no scenario 'nope'" in capsys.readouterr().err


def test_the_words_name_the_groups_members_and_what_each_reads() -> None:
    c1 = GroupMember("c1", "c1-a", None, (("clicks", 0), ("clicks", 1)))
    c2 = GroupMember("c2", "c2-b", None, ())
    view = GroupView("dashboards", "PreparingRebalance", "range", (c1, c2))
    state = DashboardState(NOW, (), (), (), None, None, groups=(view,))
    assert group(state, "dashboards") == [
        "Group dashboards (PreparingRebalance): c1 reads clicks-0, clicks-1; c2 reads nothing."
    ]
    assert group(state, "billing") == ["Group billing has no members."]


def test_on_jupyterhub_the_address_is_under_the_instructors_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The hub names the server's public address when it knows its own (public_url),
    else only the server's path on it: never a placeholder to fill in."""
    monkeypatch.delenv(server.SERVER_URL, raising=False)
    monkeypatch.setenv(server.HUB_PREFIX, "/user/ada/")
    monkeypatch.setenv(server.HUB_PUBLIC_URL, "https://hub.example.edu/user/ada/")
    assert server.extension_url("spark") == (
        "https://hub.example.edu/user/ada/voila/render/kafkalite-demo.ipynb?scenario=spark"
    )
    monkeypatch.setenv(server.HUB_PUBLIC_URL, "")  # what a hub without public_url sets
    assert server.extension_url(None) == "/user/ada/voila/render/kafkalite-demo.ipynb"
    monkeypatch.delenv(server.HUB_PREFIX)
    monkeypatch.delenv(server.HUB_PUBLIC_URL)
    monkeypatch.setenv(server.SERVER_URL, "http://127.0.0.1:8888/")
    assert server.extension_url(None) == "http://127.0.0.1:8888/voila/render/kafkalite-demo.ipynb"
