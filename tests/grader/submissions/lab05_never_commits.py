# Lab 05, exercise 2, answered at least once but never committing: nothing is lost, but a
# restart processes every payment again.
class Crash(Exception):
    """The consumer process dies here."""


def batches(consumer, partition):
    end = consumer.end_offsets([partition])[partition]
    while consumer.position(partition) < end:
        batch = consumer.poll(timeout_ms=1000).get(partition, [])
        if batch:
            yield batch


def at_least_once(consumer, partition, sink, crash_after):
    done = 0
    for batch in batches(consumer, partition):
        for record in batch:
            sink.append(record.value)
            done += 1
            if done == crash_after:
                raise Crash()
    consumer.close()
