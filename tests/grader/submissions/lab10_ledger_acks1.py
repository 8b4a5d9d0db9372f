# Lab 10, exercise 3, with a ledger written with acks=1: nothing is lost when brokers crash
# one after the other (no unclean election), but an isolated leader acknowledges payments
# that no other replica has, and they are gone once it rejoins.


def settings_for(use):
    if use == "ledger":
        return {"acks": 1}, {"min.insync.replicas": "2", "unclean.leader.election.enable": "false"}
    return {"acks": 1}, {"min.insync.replicas": "1", "unclean.leader.election.enable": "true"}
