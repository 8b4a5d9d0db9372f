"""The cluster metadata: the records the controller writes and the image brokers replay.

Kafka calls the replayed view the *metadata image*; every broker builds its own from the
same committed records, which is why any broker can answer a Metadata request.
"""
