# Lab 08, exercise 3, answered by comparing the replicas' offsets only.


def converged(replicas):
    offsets = {replica.offset for replica in replicas.values()}
    return len(offsets) == 1
