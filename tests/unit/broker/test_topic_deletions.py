"""DeleteTopics v6 names topics by name or by id: Kafka's checks, as a pure function."""

from __future__ import annotations

import uuid

import pytest

from kafkalite.broker.data_plane.handlers.topics import (
    ZERO_UUID,
    RefusedDeletion,
    resolve_deletions,
)
from kafkalite.protocol.errors import ErrorCode

pytestmark = pytest.mark.unit

A_ID = uuid.uuid4()
B_ID = uuid.uuid4()
TOPIC_IDS = {"a": str(A_ID), "b": str(B_ID)}
ID_NAMES = {str(A_ID): "a", str(B_ID): "b"}


def test_names_and_ids_resolve_to_names_with_their_ids() -> None:
    resolved = resolve_deletions([("a", ZERO_UUID), (None, B_ID)], TOPIC_IDS, ID_NAMES)
    assert resolved.names == ["a", "b"]
    assert resolved.ids == {"a": A_ID, "b": B_ID}
    assert resolved.refused == []


def test_an_unknown_id_is_unknown_topic_id_and_deletes_nothing() -> None:
    stranger = uuid.uuid4()
    resolved = resolve_deletions([(None, stranger)], TOPIC_IDS, ID_NAMES)
    assert resolved.names == []
    assert resolved.refused == [RefusedDeletion(None, stranger, ErrorCode.unknown_topic_id)]


def test_both_neither_and_twice_are_invalid_requests() -> None:
    resolved = resolve_deletions(
        [
            ("a", A_ID),
            (None, ZERO_UUID),
            ("b", ZERO_UUID),
            ("b", ZERO_UUID),
            (None, A_ID),
            (None, A_ID),
        ],
        TOPIC_IDS,
        ID_NAMES,
    )
    assert resolved.names == []
    assert {(r.name, r.topic_id, r.error, r.message) for r in resolved.refused} == {
        ("a", A_ID, ErrorCode.invalid_request, "You may not specify both topic name and topic id."),
        (None, ZERO_UUID, ErrorCode.invalid_request, "Neither topic name nor id were specified."),
        ("b", ZERO_UUID, ErrorCode.invalid_request, "Duplicate topic name."),
        (None, A_ID, ErrorCode.invalid_request, "Duplicate topic id."),
    }


def test_a_name_nobody_knows_goes_to_the_controller_which_answers_for_it() -> None:
    resolved = resolve_deletions([("gone", ZERO_UUID)], TOPIC_IDS, ID_NAMES)
    assert resolved.names == ["gone"]
    assert resolved.ids == {"gone": ZERO_UUID}
