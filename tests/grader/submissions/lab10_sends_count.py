# Lab 10, exercise 2, answered with availability over every write sent, answered or not.
from kafkalite.lab.history import OpKind


def tradeoff(history, result):
    acked = len(history.of(OpKind.ACK))
    failed = len(history.of(OpKind.ERROR))
    sent = len(history.of(OpKind.SEND))
    return {
        "acked": acked,
        "failed": failed,
        "availability": acked / (acked + failed + sent) if acked + failed + sent else 0.0,
        "lost": result.counts["lost"],
    }
