"""The broker's two handler tables, built from one instance of each handler family.

A family's handlers are methods of a class whose constructor names its dependencies
(``broker.handler_registry``); ``broker.apis`` wires one broker's instances. These tests
build a real (unstarted) broker and check that its tables serve exactly what the handler
classes declare, bound to the instances the broker made.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kio.schema.index import api_key_map

from kafkalite.broker.apis import handler_tables, served_apis
from kafkalite.broker.broker import Broker, BrokerConfig
from kafkalite.broker.data_plane.handlers import AclApis
from kafkalite.broker.handler_registry import Handler, Listener
from kafkalite.protocol.api_keys import ApiKeys

pytestmark = pytest.mark.unit


def _owner(handler: Handler) -> Any:
    """The handler family instance a table's handler is bound to."""
    return handler.fn.__self__  # type: ignore[attr-defined]


def _broker(tmp_path: Path) -> Broker:
    return Broker(BrokerConfig(1, "127.0.0.1", 19092, 19192, tmp_path))


def test_the_tables_serve_what_the_handler_classes_declare(tmp_path: Path) -> None:
    broker = _broker(tmp_path)
    client, controller = broker.server.handlers, broker.controller_server.handlers
    declared = {
        listener: {
            (s.api_key, s.min_version, s.max_version, s.forward)
            for s in served_apis()
            if s.listener is listener
        }
        for listener in Listener
    }
    assert {(h.api_key, h.min_version, h.max_version, h.forward) for h in client.values()} == (
        declared[Listener.CLIENT]
    )
    forwarded = {h.api_key for h in client.values() if h.forward}
    assert set(controller) == {s[0] for s in declared[Listener.CONTROLLER]} | forwarded
    # a forwarded request is served on the controller listener by the client's handler
    assert controller.of(ApiKeys.CREATE_TOPICS) is client.of(ApiKeys.CREATE_TOPICS)
    assert _owner(controller.of(ApiKeys.API_VERSIONS)) is _owner(client.of(ApiKeys.API_VERSIONS))


def test_handlers_are_bound_to_the_components_the_broker_made(tmp_path: Path) -> None:
    broker = _broker(tmp_path)
    produce = _owner(broker.server.handlers.of(ApiKeys.PRODUCE))
    assert produce._replicas is broker.replica_manager


def test_a_missing_handler_family_is_refused() -> None:
    with pytest.raises(ValueError, match="missing"):
        handler_tables([AclApis()])


def test_api_keys_are_kafkas() -> None:
    """Each key a handler is registered under is the API kio (Kafka's schemas) gives it."""
    for key in ApiKeys:
        assert api_key_map[key] == key.name.lower()
