"""The controller: the pure metadata state machine, split into Kafka's control managers.

It does no I/O: the broker's control plane drives it (``broker.control_plane.raft_quorum``,
``broker.control_plane.controller_service``, ``broker.control_plane.controller_channel``).
"""
