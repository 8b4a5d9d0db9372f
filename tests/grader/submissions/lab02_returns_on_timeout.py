# Lab 02, exercise 2, answered with a wait that stops at the timeout and returns the
# seconds it waited, as if the follower were back: the caller cannot tell.
import time


def wait_until_in_sync(lab, topic, broker, timeout_s):
    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        if broker in lab.partitions(topic).set_index("partition").loc[0, "isr"]:
            break
        time.sleep(0.1)
    return time.monotonic() - started
