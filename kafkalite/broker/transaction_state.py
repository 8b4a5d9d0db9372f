"""``__transaction_state`` as the transaction coordinator sees it (see ``internal_topic``).

Like Kafka's, the topic is created with ``min.insync.replicas`` =
``transaction.state.log.min.isr`` (capped by the replication factor a small cluster
allows), so a coordinator's decision is on at least that many brokers before it acts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkalite.broker.internal_topic import InternalTopic
from kafkalite.coordinator.transaction.transaction_log import TRANSACTION_STATE_TOPIC

if TYPE_CHECKING:
    from kafkalite.broker.broker import Broker


class BrokerTransactionStateTopic(InternalTopic):
    def __init__(self, broker: Broker) -> None:
        super().__init__(
            broker,
            TRANSACTION_STATE_TOPIC,
            "transaction.state.log.num.partitions",
            "transaction.state.log.replication.factor",
        )

    def topic_configs(self, replication_factor: int) -> dict[str, str | None]:
        min_isr = int(self.broker.image.broker_config("transaction.state.log.min.isr"))
        return {
            "cleanup.policy": "compact",
            "min.insync.replicas": str(min(min_isr, replication_factor)),
        }
