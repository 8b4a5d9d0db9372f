"""Where a returning replica cuts its log (OffsetForLeaderEpoch's answer)."""

from __future__ import annotations

import pytest

from kafkalite.replication.truncation import UNDEFINED_EPOCH, truncation_offset

pytestmark = pytest.mark.unit


def test_same_epoch_on_the_leader_cuts_at_the_leaders_end_of_it() -> None:
    # we led epoch 3 and wrote to 15; the new leader has epoch 3 up to 10
    assert truncation_offset(3, 3, 10, 15, lambda e: 15, local_high_watermark=8) == 10
    # nothing to cut when we are behind
    assert truncation_offset(3, 3, 20, 15, lambda e: 15, local_high_watermark=8) == 15


def test_an_epoch_the_leader_never_had_cuts_where_its_own_earlier_epoch_ended() -> None:
    # our latest epoch 4 never reached the leader; its epoch 2 ended at 12, ours at 9
    ends = {2: 9}
    assert truncation_offset(4, 2, 12, 15, ends.__getitem__, local_high_watermark=5) == 9


def test_no_answer_falls_back_to_the_high_watermark() -> None:
    assert truncation_offset(4, UNDEFINED_EPOCH, -1, 15, lambda e: 15, local_high_watermark=7) == 7
