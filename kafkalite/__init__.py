"""Kafka-Lite: a Kafka-protocol broker cluster in Python for teaching replicated logs."""

__version__ = "0.1.0"
