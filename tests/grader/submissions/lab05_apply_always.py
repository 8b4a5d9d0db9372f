# Lab 05, exercise 4, answered without remembering what was applied: a repeated payment is
# charged again.


def apply_once(account, payment):
    account["balance"] += 10
    account["applied"].add(payment)
