"""The Kafka wire protocol: framing, codecs (through kio), record batch headers, error codes.

Nothing in this package does I/O; it operates only on bytes.
"""
