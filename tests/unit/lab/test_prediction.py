"""Predict, then observe: a prediction beside what happened, and a missing one said so."""

from __future__ import annotations

import pytest

from kafkalite.lab.prediction import MISMATCH_MARK, beside

pytestmark = pytest.mark.unit


def test_each_prediction_beside_what_was_observed() -> None:
    shown = beside(
        new_leader=(2, 2),
        lost_writes=(0, 5),
        error=("notenoughreplicaserror", "NotEnoughReplicasError"),
    )
    assert [r.agrees for r in shown.rows] == [True, False, True]
    assert not shown.all_agree
    text = repr(shown)
    assert "new leader   you predicted 2, observed 2: as predicted" in text
    assert f"lost writes  you predicted 0, observed 5: not as predicted [{MISMATCH_MARK}]" in text
    assert 'class="kl-prediction"' in shown._repr_html_()


def test_a_prediction_not_made_is_not_a_mismatch() -> None:
    shown = beside(survives=(..., True))
    assert not shown.rows[0].made and MISMATCH_MARK not in repr(shown)
    assert "no prediction yet" in repr(shown) and "—" in repr(shown)


def test_each_question_takes_a_pair() -> None:
    with pytest.raises(TypeError, match="survives= takes a pair"):
        beside(survives=True)  # type: ignore[arg-type]
