"""One partition's name, ``(topic, partition index)``: the key of every per-partition map.

Kafka's ``TopicPartition``, as a plain tuple so it hashes, sorts and prints as one.
"""

from __future__ import annotations

TopicPartition = tuple[str, int]
