"""The first line of a failed case's feedback is what was raised, in the test's words."""

from __future__ import annotations

import pytest

from grader.child import failure_line

pytestmark = [pytest.mark.grader, pytest.mark.unit]

DOCTEST_FAILURE = """Trying:
    assert lost == 0, 'lost 3 acknowledged writes when the leader was isolated'
Expecting nothing
**********************************************************************
Line 1, in q 0
Failed example:
    assert lost == 0, 'lost 3 acknowledged writes when the leader was isolated'
Exception raised:
    Traceback (most recent call last):
      File "<doctest q 0[0]>", line 1, in <module>
        assert lost == 0, 'lost 3 acknowledged writes when the leader was isolated'
    AssertionError: lost 3 acknowledged writes when the leader was isolated
**********************************************************************
1 items had failures:
   1 of   1 in q 0
***Test Failed*** 1 failures.
"""

WRONG_VALUE = """Trying:
    total
Expecting:
    30
**********************************************************************
Line 1, in q 0
Failed example:
    total
Expected:
    30
Got:
    37
"""


def test_an_assertion_is_reported_in_its_own_words() -> None:
    assert failure_line(DOCTEST_FAILURE) == (
        "❌ AssertionError: lost 3 acknowledged writes when the leader was isolated"
    )


def test_a_wrong_value_and_an_unknown_transcript_still_say_failed() -> None:
    assert failure_line(WRONG_VALUE) == "❌ a value differs from the one expected"
    assert failure_line("") == "❌ failed"
