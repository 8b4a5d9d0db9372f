"""The lab supervisor: run brokers, inject faults, and see the whole cluster at once.

Brokers are separate processes (or, later, containers): nothing here imports the broker.
"""

from kafkalite.cluster.backend import BrokerState, ClusterBackend
from kafkalite.cluster.spec import ClusterError
from kafkalite.cluster.supervisor import Cluster

__all__ = ["BrokerState", "Cluster", "ClusterBackend", "ClusterError"]
