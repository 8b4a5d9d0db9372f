# Lab 08, exercise 3, answered as monotonic_read: always the most lagging replica, whatever
# the client has read. A replica restored from an old backup then answers a client that
# has read further, and its reads go back in time.


def session_read(replicas, key, position):
    slowest = min(replicas.values(), key=lambda replica: replica.offset)
    return slowest.get(key), slowest.offset
