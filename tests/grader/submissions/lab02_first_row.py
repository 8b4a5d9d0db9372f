# Lab 02, exercise 1, answered with the first matching row, as if samples were in time
# order.


def first_time(frame, broker, column, value):
    rows = frame[(frame["broker"] == broker) & (frame[column] == value)]
    return None if rows.empty else float(rows["t"].iloc[0])
