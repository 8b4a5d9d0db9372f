"""Checks of what clients observed against what the cluster kept (chaos tests, grading)."""

from kafkalite.checker.exactly_once import EXACTLY_ONCE_ANOMALIES, check_exactly_once
from kafkalite.checker.history import ANOMALIES, Ack, Commit, Poll, Report, Send, check

__all__ = [
    "ANOMALIES",
    "EXACTLY_ONCE_ANOMALIES",
    "Ack",
    "Commit",
    "Poll",
    "Report",
    "Send",
    "check",
    "check_exactly_once",
]
