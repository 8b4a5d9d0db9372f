"""One module per API family; importing this package fills the handler tables."""

from kafkalite.broker.handlers import (  # noqa: F401  (imported to register handlers)
    acls,
    api_versions,
    cluster,
    configs,
    controller_apis,
    fetch,
    groups,
    leader_epoch,
    list_offsets,
    log_dirs,
    metadata,
    offsets,
    produce,
    producers,
    quorum,
    reassignments,
    records,
    topic_partitions,
    topics,
    transactions,
    txn_offset_commit,
    write_txn_markers,
)
from kafkalite.broker.handlers.registry import CONTROLLER_HANDLERS, HANDLERS

controller_apis.register_forwarded()

__all__ = ["CONTROLLER_HANDLERS", "HANDLERS"]
