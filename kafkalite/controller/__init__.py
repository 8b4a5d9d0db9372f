"""The controller: the pure metadata state machine, split into Kafka's control managers.

It does no I/O: the broker's control plane drives it (``broker.raft_quorum``,
``broker.controller_service``, ``broker.controller_channel``).
"""
