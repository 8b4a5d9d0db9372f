"""The dashboard's groups tab says each group's protocol and epoch, and in a KIP-848 group
each member's epoch and the partitions it is giving up or waiting for, as the group's
coordinator reports them in ``/state``."""

from __future__ import annotations

import pytest

from kafkalite.lab.dashboard.model import DashboardModel
from kafkalite.lab.dashboard.render import render_html
from kafkalite.lab.group_members import GroupMember, GroupView
from tests.unit.lab.dashboard.test_model_synthetic import NOW, snapshot

pytestmark = pytest.mark.unit


def coordinated(member_id: str, epoch: int, **moving: list[str]) -> dict:
    return {
        "member_id": member_id,
        "member_epoch": epoch,
        "revoking": moving.get("revoking", []),
        "waiting": moving.get("waiting", []),
    }


def test_a_consumer_group_mid_rebalance_shows_its_epochs_and_partitions_on_the_move() -> None:
    snap = snapshot({})
    snap["groups"] = [
        {
            "group": "shipping",
            "protocol": "consumer",
            "epoch": 5,
            "members": [
                coordinated("m1", 4, revoking=["pay-1"]),
                coordinated("m2", 5, waiting=["pay-1"]),
            ],
        },
        {"group": "billing", "protocol": "classic", "epoch": 3, "members": []},
    ]
    views = [
        GroupView(
            "shipping",
            "Reconciling",
            "uniform",
            (
                GroupMember("c1", "m1", None, (("pay", 0),)),
                GroupMember("c2", "m2", None, ()),
            ),
        ),
        GroupView("billing", "Stable", "range", (GroupMember("k", "k1", None, (("pay", 0),)),)),
    ]
    html = render_html(DashboardModel().update(snap, [], NOW, groups=views))
    assert "consumer protocol, epoch 5" in html and "classic protocol, epoch 3" in html
    assert "epoch 4 · giving up pay-1" in html
    assert "epoch 5 · waiting for pay-1" in html


def test_without_the_coordinators_view_the_tab_is_as_before() -> None:
    view = GroupView("billing", "Stable", "range", (GroupMember("k", "k1", None, ()),))
    html = render_html(DashboardModel().update(snapshot({}), [], NOW, groups=[view]))
    assert "protocol" not in html.split("group billing")[1].split("</div>")[0]
