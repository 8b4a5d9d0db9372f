"""Connections from one Kafka-Lite node to another (quorum, controller, replication)."""
