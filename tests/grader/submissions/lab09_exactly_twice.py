# Lab 09, exercise 3, answered with the values seen exactly twice: one seen three times is
# missed.
from collections import Counter


def double_counted(processed):
    return {value for value, n in Counter(processed).items() if n == 2}
