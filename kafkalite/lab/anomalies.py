"""The history checker's verdict as a table that names each anomaly (pure).

The checker (``kafkalite.checker``) speaks Jepsen's words; a student reads a row per
anomaly with a plain name (lost, duplicated, reordered, vanished, ...) and one sentence on
what it means. ``output_as_log`` lets the same checker judge a consumer's *output*
instead of the cluster's log: a record missing from the output is lost, one processed
twice is duplicated.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pandas as pd

from kafkalite.checker.history import Ack, Partition, Report

NAMES = {
    "lost": "lost",
    "duplicate": "duplicated",
    "reordered": "reordered",
    "vanished_read": "vanished",
    "inconsistent_offset": "inconsistent offset",
    "ack_mismatch": "ack mismatch",
    "nonmonotonic_poll": "read went backwards",
    "skipped_offset": "skipped offset",
    "commit_regression": "commit went backwards",
}
MEANINGS = {
    "lost": "acknowledged to the producer, yet not in the final log",
    "duplicate": "one record stands twice (a retry that was not deduplicated)",
    "reordered": "one producer's records stand in another order than it sent them",
    "vanished_read": "a consumer read it, but the final log no longer has it there "
    "(it read data a truncation removed)",
    "inconsistent_offset": "two reads of one offset saw different records",
    "ack_mismatch": "acknowledged at an offset that holds another record",
    "nonmonotonic_poll": "a consumer's reads of a partition went backwards without a seek",
    "skipped_offset": "a consumer jumped over records the log holds",
    "commit_regression": "a group's committed offset went backwards",
}
OUTPUT_MEANINGS = {
    **MEANINGS,
    "lost": "acknowledged to the producer, yet never in the consumer's output",
    "duplicate": "the consumer processed it twice",
    "reordered": "the consumer processed one producer's records in another order than sent",
}
"""What the same anomalies mean when the checker judged a consumer's output."""
COLUMNS = ["anomaly", "detail", "meaning"]
SHOWN = 12  # rows shown in a notebook; ``table`` holds them all


@dataclass(frozen=True, slots=True)
class CheckResult:
    """What ``lab.check`` returns: ``table`` names each anomaly, ``counts`` counts them
    by plain name; in a notebook it shows as a verdict line and the table."""

    report: Report
    table: pd.DataFrame
    lost_values: frozenset[bytes] = frozenset()
    """The values of the acknowledged writes that were lost."""

    @property
    def valid(self) -> bool:
        return self.report.valid

    @property
    def counts(self) -> dict[str, int]:
        return {NAMES.get(k, k): n for k, n in self.report.counts.items()}

    def verdict(self) -> str:
        """One line: what was checked and what was found. Reads are named only when the
        history has some: a check of writes against the final log (or a pipeline's
        output) read nothing through a consumer, and "0 read" on a projector looked like
        a checker that had read nothing at all."""
        found = ", ".join(f"{n} {name}" for name, n in self.counts.items() if n)
        reads = f", {self.report.read} read" if self.report.read else ""
        return f"{self.report.acked} acknowledged{reads}: " + (found if found else "no anomaly")

    def _more(self) -> str:
        hidden = len(self.table) - SHOWN
        return f"... and {hidden} more rows in .table" if hidden > 0 else ""

    def __repr__(self) -> str:
        if self.table.empty:
            return self.verdict()
        shown = self.table.head(SHOWN).to_string(index=False)
        return "\n".join(filter(None, [self.verdict(), shown, self._more()]))

    def _repr_html_(self) -> str:
        verdict = f"<p><b>{html.escape(self.verdict())}</b></p>"
        if self.table.empty:
            return verdict
        more = f"<p>{html.escape(self._more())}</p>" if self._more() else ""
        return verdict + self.table.head(SHOWN).to_html(index=False) + more


def lost_values(
    acks: Iterable[Ack], final_log: Mapping[Partition, Mapping[int, bytes]]
) -> frozenset[bytes]:
    """Acknowledged values the final log (or output) does not hold, in any partition."""
    kept = {value for records in final_log.values() for value in records.values()}
    return frozenset(a.value for a in acks if a.value not in kept)


def result_of(
    report: Report, of_output: bool = False, lost: frozenset[bytes] = frozenset()
) -> CheckResult:
    """The table for ``report``; ``of_output``: the checker judged a consumer's output."""
    meanings = OUTPUT_MEANINGS if of_output else MEANINGS
    rows = [
        {"anomaly": NAMES.get(kind, kind), "detail": detail, "meaning": meanings.get(kind, "")}
        for kind, found in report.anomalies.items()
        for detail in found
    ]
    return CheckResult(report, pd.DataFrame(rows, columns=COLUMNS), lost)


def output_as_log(
    acks: Iterable[Ack], output: Iterable[bytes]
) -> tuple[list[Ack], dict[Partition, dict[int, bytes]]]:
    """A consumer's output (values in the order processed) as a per-partition "final log"
    the checker can compare acknowledged writes with. Positions in the output stand in
    for offsets, so the acks lose theirs; a value no ack knows is kept under ("output", 0)."""
    acks = list(acks)
    home: Mapping[bytes, Partition] = {a.value: a.partition for a in acks}
    log: dict[Partition, dict[int, bytes]] = {p: {} for p in home.values()}
    for position, value in enumerate(output):
        log.setdefault(home.get(value, ("output", 0)), {})[position] = value
    return [Ack(a.partition, a.value, None) for a in acks], log
