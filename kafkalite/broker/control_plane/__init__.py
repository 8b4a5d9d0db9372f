"""The broker's control plane, on an event loop of its own in a second thread
(``control_loop`` says why): the metadata quorum's driver (``raft_quorum``), the active
controller (``controller_service``), the way every broker reaches it
(``controller_channel``), this broker's registration and heartbeats (``lifecycle``), and
the controller listener's own APIs (``controller_apis``, ``quorum_apis``).

Nothing here touches the data plane's objects (the replica manager, logs, fetchers,
coordinators): an import-linter contract keeps the two packages apart, and what crosses is
typed in ``kafkalite.broker.control_plane_api``.
"""
