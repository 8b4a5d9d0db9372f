# Lab 10, exercise 3, answered with the first and the last lost acknowledgement in the
# order they were recorded, not in time order.
from kafkalite.lab.history import OpKind


def split_brain_seconds(history, lost_values):
    times = [op.time for op in history.of(OpKind.ACK) if op.value in lost_values]
    return times[-1] - times[0] if times else 0.0
