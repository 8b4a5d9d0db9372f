# Lab 08, exercise 2, answered from the most up-to-date replica: fresher, but a later read
# from another replica can go back in time.


def monotonic_read(replicas, key):
    freshest = max(replicas.values(), key=lambda replica: replica.offset)
    return freshest.get(key)
