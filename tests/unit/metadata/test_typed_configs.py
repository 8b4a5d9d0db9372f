"""Settings are read typed, by their definition: a number as an int, a flag as a bool, and
asking a setting for the wrong type is a bug that fails loudly, not a silent ``int("true")``
somewhere later."""

from __future__ import annotations

import pytest

from kafkalite.metadata.image import MetadataImage
from kafkalite.metadata.records import ConfigRecord

pytestmark = pytest.mark.unit


def test_broker_and_topic_settings_are_typed_with_their_source_order() -> None:
    image = MetadataImage()
    assert image.broker_int("replica.lag.time.max.ms") == 1000  # the lab default
    assert image.broker_bool("log.cleaner.enable") is True
    image.replay(ConfigRecord("broker", "", "replica.lag.time.max.ms", "2500"), 0)
    image.replay(ConfigRecord("broker", "", "min.insync.replicas", "2"), 1)
    image.replay(ConfigRecord("topic", "t", "unclean.leader.election.enable", "TRUE"), 2)
    assert image.broker_int("replica.lag.time.max.ms") == 2500
    assert image.topic_int("t", "min.insync.replicas") == 2  # the cluster-wide value
    assert image.topic_bool("t", "unclean.leader.election.enable") is True
    assert image.topic_bool("other", "unclean.leader.election.enable") is False


def test_asking_a_setting_for_the_wrong_type_is_refused() -> None:
    image = MetadataImage()
    with pytest.raises(TypeError, match="is a boolean setting, not a number"):
        image.broker_int("log.cleaner.enable")
    with pytest.raises(TypeError, match="not a boolean"):
        image.topic_bool("t", "min.insync.replicas")
