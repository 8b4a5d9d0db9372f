"""The broker's data plane, on its main event loop: the client requests' handlers
(``handlers``), the partitions this broker hosts and the produce/fetch work across them
(``replica_manager``), replication from leaders (``replica_fetcher``) and the leader's ISR
proposals (``isr_manager``), the log cleaner, and the coordinators' internal topics and
transaction markers.

It asks the control plane for metadata changes only through
``kafkalite.broker.control_plane_api.Controller`` and learns committed metadata from
``kafkalite.broker.metadata_publisher``; it never imports ``kafkalite.broker.control_plane``.
"""
