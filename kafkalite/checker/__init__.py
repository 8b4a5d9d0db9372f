"""Checks of what clients observed against what the cluster kept (chaos tests, grading)."""

from kafkalite.checker.history import ANOMALIES, Ack, Commit, Poll, Report, Send, check

__all__ = ["ANOMALIES", "Ack", "Commit", "Poll", "Report", "Send", "check"]
