# Lab 10, exercise 3, with clicks as durable as the ledger: min.insync.replicas=2 refuses
# every click while one replica is down, and no unclean election leaves the topic without
# a leader while the in-sync replica is dead: the dashboard stops counting.


def settings_for(use):
    return {"acks": "all"}, {"min.insync.replicas": "2", "unclean.leader.election.enable": "false"}
