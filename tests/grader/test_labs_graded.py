"""Grades that mean something: each lab's master graded as a submission, and known-wrong
submissions that must lose exactly the points of the anomaly they have.

A master notebook is a valid submission (its solution regions are the reference answers),
so grading it must give full marks: that proves every test case of the lab, public and
hidden, builds what it needs on the grading cluster and judges the reference right. Each
file ``submissions/labNN_<anomaly>.py`` is what a student might write for one exercise;
it is graded on that exercise's question(s) only (the rest of the lab is the master's
job above), must lose exactly the points of the cases its anomaly breaks, and the
feedback must name the anomaly in the student's terms. One grading per submission is
shared by every assert on it (module-scoped fixtures): a grading costs fresh clusters.
"""

from __future__ import annotations

import re
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from otter.test_files import GradingResults

from grader import assignments
from grader.runner import GradingOptions, grade
from grader.student import SearchOptions

pytestmark = pytest.mark.slow
SPARK_LABS = {"09"}
"""Labs whose gradings start Spark (two JVMs per crash-search trial): they run in the Spark
lane (``scripts/test_suite.py``), the others in the grader lane."""


def _lane(lab: str) -> list[pytest.MarkDecorator]:
    if lab in SPARK_LABS:  # a crash search of two trials, each two Spark drivers (JVMs)
        return [pytest.mark.spark, pytest.mark.timeout(600)]
    return [pytest.mark.grader]


SUBMISSIONS = Path(__file__).parent / "submissions"
CI_SEARCH = SearchOptions(seed=20241, limit=8)
"""The crash-point searches of this lane: a fixed seed, 8 points (no time bound, so what is
tried does not depend on the machine's load), a sample that still meets
every kind of step (``grader.crash_points.search_order``); ``--all-crash-points`` grading
tries every point."""


@dataclass(frozen=True, slots=True)
class Graded:
    """One grading: (question, case) -> (passed, message), the totals, and how long it took."""

    cases: dict[tuple[str, str], tuple[bool, str]]
    total: float
    possible: float
    seconds: float

    def failed(self) -> dict[tuple[str, str], str]:
        return {key: message for key, (passed, message) in self.cases.items() if not passed}


def _graded(
    lab: str,
    submission: Path,
    tmp: Path,
    questions: set[str] | None = None,
    search: SearchOptions = CI_SEARCH,
) -> Graded:
    assignment = assignments.split(assignments.find_master(lab))
    files = [f for f in assignment.test_files if questions is None or f.stem in questions]
    assert files, f"no test files for {lab} {questions}"
    started = time.monotonic()
    options = GradingOptions(workdir=tmp, crash_points=search)
    results: GradingResults = grade(files, submission, options)
    seconds = time.monotonic() - started
    print(f"graded {submission.name} on {lab}: {seconds:.0f} s")  # shown with -s
    cases = {
        (q, r.test_case.name): (r.passed, r.message or "")
        for q in results.test_files
        for r in results.get_result(q).test_case_results
    }
    return Graded(cases, results.total, results.possible, seconds)


@dataclass(frozen=True, slots=True)
class Wrong:
    """A known-wrong submission: the cases it must fail (and only those), words its
    feedback must hold, and its score on the questions it is graded on."""

    lab: str
    submission: str
    questions: frozenset[str]
    fails: tuple[tuple[str, str], ...]
    says: str
    score: tuple[float, float]


MASTERS = {
    "01": 5,
    "02": 5,
    "03": 4,
    "04": 5,
    "05": 10,
    "06": 4,
    "07": 9,
    "08": 11,
    "09": 3,
    "10": 9,
}
"""The labs whose masters are graded, and their points (every auto-graded question)."""

WRONG = [
    Wrong(
        "04",
        "lab04_unsorted_gap.py",
        frozenset({"availability_gap"}),
        (("availability_gap", "test_the_longest_silence_between_acknowledgements"),),
        "take the acks in time order",
        (1, 2),
    ),
    Wrong(
        "04",
        "lab04_acks1.py",
        frozenset({"durable_settings"}),
        (("durable_settings", "test_nothing_acknowledged_is_lost_when_the_leader_is_isolated"),),
        "acknowledged writes when the leader was isolated",
        (1, 3),
    ),
    Wrong(
        "04",
        "lab04_acks1_forged.py",
        frozenset({"durable_settings"}),
        (("durable_settings", "test_nothing_acknowledged_is_lost_when_the_leader_is_isolated"),),
        "acknowledged writes when the leader was isolated",
        (1, 3),
    ),
    Wrong(
        "04",
        "lab04_min_insync_3.py",
        frozenset({"durable_settings"}),
        (("durable_settings", "test_writes_are_still_acknowledged_with_one_broker_down"),),
        "give up availability they do not need to",
        (2, 3),
    ),
    Wrong(
        "05",
        "lab05_no_idempotence.py",
        frozenset({"payment_producer"}),
        (("payment_producer", "test_a_lost_acknowledgement_writes_the_payment_once"),),
        "written twice after a lost acknowledgement",
        (1, 3),
    ),
    Wrong(
        "05",
        "lab05_acks1.py",
        frozenset({"payment_producer"}),
        (("payment_producer", "test_a_payment_on_one_broker_only_is_not_acknowledged"),),
        "acknowledged while only one broker had it",
        (2, 3),
    ),
    Wrong(
        "05",
        "lab05_never_commits.py",
        frozenset({"at_least_once"}),
        (
            ("at_least_once", "test_without_a_crash_each_payment_once_in_order"),
            ("at_least_once", "test_a_crash_repeats_only_what_was_not_committed"),
        ),
        "the group's committed offset is None",
        (0, 2),
    ),
    Wrong(
        "05",
        "lab05_commit_first.py",
        frozenset({"at_least_once"}),
        (("at_least_once", "test_a_crash_repeats_only_what_was_not_committed"),),
        "were never processed: an offset was committed before its records were processed",
        (1, 2),
    ),
    Wrong(
        "05",
        "lab05_at_least_once.py",
        frozenset({"exactly_once"}),
        (
            ("exactly_once", "test_each_payment_counted_once_across_a_crash"),
            ("exactly_once", "test_output_and_offset_agree_after_every_crash"),
        ),
        "payments were counted twice",
        (0, 3),
    ),
    Wrong(
        "05",
        "lab05_at_most_once.py",
        frozenset({"exactly_once"}),
        (
            ("exactly_once", "test_each_payment_counted_once_across_a_crash"),
            ("exactly_once", "test_output_and_offset_agree_after_every_crash"),
        ),
        "killed right",
        (0, 3),
    ),
    Wrong(
        "05",
        "lab05_save_in_place.py",
        frozenset({"exactly_once"}),
        (
            ("exactly_once", "test_each_payment_counted_once_across_a_crash"),
            ("exactly_once", "test_output_and_offset_agree_after_every_crash"),
        ),
        "once opening it had emptied it",
        (0, 3),
    ),
    Wrong(
        "05",
        "lab05_apply_always.py",
        frozenset({"apply_once"}),
        (
            ("apply_once", "test_a_repeated_payment_is_applied_once"),
            ("apply_once", "test_an_at_least_once_output_has_exactly_once_effects"),
        ),
        "each applied once",
        (0, 2),
    ),
    Wrong(
        "01",
        "lab01_next_offset.py",
        frozenset({"send_and_locate"}),
        (("send_and_locate", "test_the_offset_holds_what_was_sent"),),
        "but that offset holds",
        (1, 2),
    ),
    Wrong(
        "01",
        "lab01_all_partitions.py",
        frozenset({"read_partition"}),
        (
            ("read_partition", "test_reads_a_partition_in_order"),
            ("read_partition", "test_one_keys_records_all_come_back_while_its_leader_hangs"),
            ("read_partition", "test_reading_from_an_offset_and_again"),
        ),
        "elsewhere is in partition 1",
        (0, 3),
    ),
    Wrong(
        "01",
        "lab01_stops_at_an_empty_poll.py",
        frozenset({"read_partition"}),
        (("read_partition", "test_one_keys_records_all_come_back_while_its_leader_hangs"),),
        "a poll that returns nothing during the election is not the end",
        (2, 3),
    ),
    Wrong(
        "01",
        "lab01_ignores_start.py",
        frozenset({"read_partition"}),
        (
            ("read_partition", "test_reading_from_an_offset_and_again"),
            ("read_partition", "test_one_keys_records_all_come_back_while_its_leader_hangs"),
        ),
        "reading partition 1 from offset 2 gives",
        (1, 3),
    ),
    Wrong(
        "02",
        "lab02_first_row.py",
        frozenset({"first_time"}),
        (("first_time", "test_none_when_it_never_happened"),),
        "the rows are newest first",
        (1, 2),
    ),
    Wrong(
        "02",
        "lab02_returns_on_timeout.py",
        frozenset({"wait_until_in_sync"}),
        (("wait_until_in_sync", "test_a_follower_that_never_comes_back_is_a_clear_timeout"),),
        "raise TimeoutError when the follower is not back in time",
        (2, 3),
    ),
    Wrong(
        "03",
        "lab03_first_row.py",
        frozenset({"is_committed"}),
        (("is_committed", "test_the_lectures_question"),),
        "Use the leader's row, wherever it is",
        (1, 2),
    ),
    Wrong(
        "03",
        "lab03_any_error.py",
        frozenset({"try_write"}),
        (("try_write", "test_the_answer_follows_min_insync_replicas"),),
        "tell the errors apart",
        (1, 2),
    ),
    Wrong(
        "03",
        "lab03_error_text.py",
        frozenset({"try_write"}),
        (
            ("try_write", "test_the_brokers_answers_with_too_few_replicas_in_sync"),
            ("try_write", "test_the_answer_follows_min_insync_replicas"),
        ),
        "return the exception's class name",
        (0, 2),
    ),
    Wrong(
        "06",
        "lab06_commit_first.py",
        frozenset({"billing_loop"}),
        (
            (
                "billing_loop",
                "test_no_order_is_left_uncharged_when_a_member_dies_at_any_step",
            ),
        ),
        "orders were never charged after the new member took over",
        (2, 4),
    ),
    Wrong(
        "07",
        "lab07_commit_on_crash.py",
        frozenset({"transfer"}),
        (
            ("transfer", "test_a_crashed_transfer_is_never_half_visible"),
            ("transfer", "test_money_is_never_created_or_destroyed"),
        ),
        "both halves of each committed transfer, nothing else",
        (0, 3),
    ),
    Wrong(
        "07",
        "lab07_read_uncommitted.py",
        frozenset({"audit"}),
        (
            ("audit", "test_the_auditor_never_sees_aborted_data"),
            ("audit", "test_the_auditor_stops_at_an_open_transaction"),
        ),
        "records of aborted transactions",
        (0, 3),
    ),
    Wrong(
        "07",
        "lab07_offsets_before_commit.py",
        frozenset({"bill"}),
        (("bill", "test_every_order_billed_once_and_its_offset_committed"),),
        "orders were never billed: their offsets were committed, but not in the transaction",
        (1, 3),
    ),
    Wrong(
        "07",
        "lab07_offsets_after_commit.py",
        frozenset({"bill"}),
        (("bill", "test_every_order_billed_once_and_its_offset_committed"),),
        "orders were billed twice",
        (1, 3),
    ),
    Wrong(
        "08",
        "lab08_pop_missing.py",
        frozenset({"apply_op"}),
        (("apply_op", "test_every_request_applied_twice_leaves_the_same_state"),),
        "raised KeyError",
        (1, 2),
    ),
    Wrong(
        "08",
        "lab08_freshest.py",
        frozenset({"monotonic_read"}),
        (
            ("monotonic_read", "test_reads_come_from_the_most_lagging_replica"),
            ("monotonic_read", "test_the_most_lagging_replica_changes_as_replicas_catch_up"),
        ),
        "lags most",
        (0, 2),
    ),
    Wrong(
        "08",
        "lab08_session_most_lagging.py",
        frozenset({"session_read"}),
        (
            ("session_read", "test_a_replica_behind_the_clients_position_never_answers"),
            ("session_read", "test_when_every_replica_is_behind_one_catches_up_first"),
        ),
        "the client had read up to offset 30",
        (0, 2),
    ),
    Wrong(
        "08",
        "lab08_offsets_only.py",
        frozenset({"converged"}),
        (("converged", "test_replicas_at_one_offset_with_other_data_have_not"),),
        "one offset with other data has not converged",
        (1, 2),
    ),
    Wrong(
        "08",
        "lab08_no_tombstones.py",
        frozenset({"bootstrap"}),
        (("bootstrap", "test_a_new_replica_gets_the_latest_value_of_every_key"),),
        "do not hold their latest value (or were deleted)",
        (1, 3),
    ),
    Wrong(
        "09",
        "lab09_no_checkpoint.py",
        frozenset({"start_copy"}),
        (("start_copy", "test_a_restarted_query_copies_each_order_once"),),
        "killed right after your",
        (0, 2),
    ),
    Wrong(
        "09",
        "lab09_at_least_once_sink.py",
        frozenset({"start_copy"}),
        (("start_copy", "test_a_restarted_query_copies_each_order_once"),),
        "killed right",
        (0, 2),
    ),
    Wrong(
        "09",
        "lab09_lag_of_every_topic.py",
        frozenset({"checkpoint_lag"}),
        (("checkpoint_lag", "test_what_is_left_to_read_per_partition"),),
        "0 committed for partition 2",
        (0, 1),
    ),
    Wrong(
        "10",
        "lab10_rate_from_first_ack.py",
        frozenset({"summarize"}),
        (
            ("summarize", "test_rate_and_latency_of_a_small_run"),
            ("summarize", "test_percentiles_without_errors"),
        ),
        "from the first send",
        (0, 3),
    ),
    Wrong(
        "10",
        "lab10_ledger_acks1.py",
        frozenset({"settings_for"}),
        (
            (
                "settings_for",
                "test_the_ledger_loses_no_acknowledged_payment_when_its_leader_is_isolated",
            ),
        ),
        "when its leader was cut off",
        (3, 4),
    ),
    Wrong(
        "10",
        "lab10_clicks_durable.py",
        frozenset({"settings_for"}),
        (("settings_for", "test_clicks_are_acknowledged_through_both_crashes"),),
        "no click was acknowledged while",
        (3, 4),
    ),
    Wrong(
        "10",
        "lab10_first_and_last_in_order.py",
        frozenset({"split_brain_seconds"}),
        (("split_brain_seconds", "test_from_the_first_to_the_last_lost_acknowledgement"),),
        "b at 2.0 s, d at 4.0 s",
        (1, 2),
    ),
]


@pytest.fixture(scope="module")
def gradings() -> Iterator[Callable[[str, str], Graded]]:
    """Grade each (lab, submission) once for the whole module, in a directory the sandbox
    users can traverse (pytest's own temporary directories are private to root)."""
    done: dict[tuple[str, str], Graded] = {}
    questions = {(w.lab, w.submission): set(w.questions) for w in WRONG}
    with tempfile.TemporaryDirectory(prefix="kafkalite-graded-") as shared:
        root = Path(shared)
        root.chmod(0o755)

        def graded(lab: str, submission: str) -> Graded:
            if (lab, submission) not in done:
                path = (
                    assignments.find_master(lab)
                    if submission == "master"
                    else SUBMISSIONS / submission
                )
                tmp = root / f"lab{lab}-{Path(submission).stem}"
                tmp.mkdir(mode=0o755)
                done[lab, submission] = _graded(lab, path, tmp, questions.get((lab, submission)))
            return done[lab, submission]

        yield graded


@pytest.mark.parametrize(
    ("lab", "points"),
    [pytest.param(lab, points, marks=_lane(lab)) for lab, points in sorted(MASTERS.items())],
)
def test_the_masters_reference_answers_get_full_marks(
    gradings: Callable[[str, str], Graded], lab: str, points: int
) -> None:
    graded = gradings(lab, "master")
    assert graded.failed() == {}
    assert graded.total == graded.possible == points


@pytest.mark.parametrize(
    "wrong",
    [pytest.param(w, marks=_lane(w.lab), id=Path(w.submission).stem) for w in WRONG],
)
def test_a_wrong_submission_loses_exactly_its_anomaly_and_is_told_so(
    gradings: Callable[[str, str], Graded], wrong: Wrong
) -> None:
    graded = gradings(wrong.lab, wrong.submission)
    failed = graded.failed()
    assert sorted(failed) == sorted(wrong.fails), failed
    first = failed[wrong.fails[0]]
    assert wrong.says in first, first
    assert (graded.total, graded.possible) == wrong.score


@pytest.mark.grader
def test_an_unsampled_search_kills_a_consumer_loop_at_every_durable_step() -> None:
    """Lab 05's at-least-once loop over 20 payments in batches of 5: every crash point
    (before each of its 20 sink appends, before and after each of its 4+ commits) is a
    trial whose first instance the grader really killed there ("reached" counts only
    trials killed at their point)."""
    case = ("at_least_once", "test_a_crash_repeats_only_what_was_not_committed")
    with tempfile.TemporaryDirectory(prefix="kafkalite-graded-") as shared:
        root = Path(shared)
        root.chmod(0o755)
        master = assignments.find_master("05")
        graded = _graded("05", master, root, {"at_least_once"}, search=SearchOptions())
    passed, message = graded.cases[case]
    assert passed, message
    found = re.search(r"crash points reached: (\d+) of (\d+) \(all of them tried\)", message)
    assert found, message
    tried, points = int(found[1]), int(found[2])
    assert tried == points >= 20 + 2 * 4, message
