"""The course stack's topology (cluster/compose.py) and how the Docker backend reads a
container's state: pure functions, no engine needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalite.cluster.backend import BrokerState
from kafkalite.cluster.compose import broker_command, compose_spec
from kafkalite.cluster.docker_backend import container_state
from kafkalite.cluster.faults import FaultState
from kafkalite.cluster.healthcheck import api_versions_request, read_error_code

pytestmark = pytest.mark.unit


def _configs(command: list[str]) -> dict[str, str]:
    pairs = [command[i + 1] for i, arg in enumerate(command) if arg == "--config"]
    return dict(pair.split("=", 1) for pair in pairs)


def test_brokers_reach_their_peers_only_through_the_links_container() -> None:
    spec = compose_spec(Path("/tmp/x"), brokers=3)
    assert spec.bootstrap_servers == "broker-1:9092,broker-2:9092,broker-3:9092"
    configs = _configs(broker_command(spec, 2))
    voters = dict(v.split("@") for v in configs["controller.quorum.voters"].split(","))
    assert voters["2"] == "broker-2:9292"  # itself
    assert {voters["1"].split(":")[0], voters["3"].split(":")[0]} == {"links"}
    fetch = dict(e.split("@") for e in configs["replica.fetch.endpoints"].split(","))
    assert set(fetch) == {"1", "3"} and all(a.startswith("links:") for a in fetch.values())
    assert configs["advertised.listeners"] == "PLAINTEXT://broker-2:9092"
    # the links container forwards each of those ports to the right broker and listener
    by_port = {link.listen_port: link for link in spec.links()}
    to_1 = by_port[int(voters["1"].split(":")[1])]
    assert (to_1.src, to_1.dst, to_1.target_host, to_1.target_port) == (2, 1, "broker-1", 9292)
    fetch_3 = by_port[int(fetch["3"].split(":")[1])]
    assert (fetch_3.dst, fetch_3.kind, fetch_3.target_port) == (3, "replication", 9092)


def test_a_single_broker_stack_has_no_links() -> None:
    spec = compose_spec(Path("/tmp/x"), brokers=1)
    assert spec.links() == []
    assert _configs(broker_command(spec, 1))["controller.quorum.voters"] == "1@broker-1:9292"


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        ({"Status": "running", "ExitCode": 0}, BrokerState.RUNNING),
        ({"Status": "paused", "ExitCode": 0}, BrokerState.PAUSED),
        ({"Status": "exited", "ExitCode": 0}, BrokerState.STOPPED),  # controlled shutdown
        ({"Status": "exited", "ExitCode": 137}, BrokerState.DEAD),  # docker kill
        ({"Status": "exited", "ExitCode": 1}, BrokerState.DEAD),  # crashed
        ({"Status": "created", "ExitCode": 0}, BrokerState.STOPPED),  # never started
        ({"Status": "dead", "ExitCode": 0}, BrokerState.DEAD),
    ],
)
def test_container_state(state: dict[str, object], expected: BrokerState) -> None:
    assert container_state(state) == expected


def test_heal_one_broker_or_all() -> None:
    state = FaultState({1, 2}, {1: 100, 3: 50})
    state.heal(1)
    assert (state.isolated, state.slow_ms) == ({2}, {3: 50})
    state.heal(None)
    assert (state.isolated, state.slow_ms) == (set(), {})


def test_healthcheck_speaks_api_versions_v0() -> None:
    request = api_versions_request(7)
    assert request == b"\x00\x00\x00\x15" + b"\x00\x12\x00\x00\x00\x00\x00\x07\x00\x0bhealthcheck"
    assert read_error_code(b"\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00", 7) == 0
    assert read_error_code(b"\x00\x00\x00\x07\x00\x23", 7) == 35  # UNSUPPORTED_VERSION
    with pytest.raises(ValueError, match="correlation"):
        read_error_code(b"\x00\x00\x00\x08\x00\x00", 7)
