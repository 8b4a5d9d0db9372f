"""A metadata quorum of one voter, in this process: its driver runs with no network."""

from __future__ import annotations

from pathlib import Path

from kafkalite.broker.control_plane.raft_quorum import RaftQuorum
from kafkalite.broker.control_plane_api import VoterAddress
from kafkalite.raft.config import RaftConfig


def single_voter_quorum(directory: Path) -> RaftQuorum:
    return RaftQuorum(
        1,
        {1: VoterAddress(1, "127.0.0.1", 1)},
        directory,
        RaftConfig(),
        "test-cluster",
        lambda *args, **kwargs: None,
        list,
        1 << 30,
    )
