# Lab 09, exercise 2, answered without looking up the partitions the checkpoint has not
# read yet: they are left out instead of counting from 0.


def checkpoint_lag(state, partitions):
    committed = state.committed.get("orders", {})
    return {
        int(row.partition): int(row.high_watermark) - committed[int(row.partition)]
        for row in partitions.itertuples()
        if int(row.partition) in committed
    }
