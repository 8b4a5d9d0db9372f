# Lab 06, billing_loop answered with the commit right after the poll, before charging:
# a member killed between the commit and its charges leaves those orders uncharged.


def billing_loop(consumer, topic, charge, should_stop):
    consumer.subscribe([topic])
    while not should_stop():
        batches = consumer.poll(timeout_ms=1000)
        if batches:
            consumer.commit()
        for records in batches.values():
            for record in records:
                charge(record)
