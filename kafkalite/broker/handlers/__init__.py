"""One module per API family; importing this package fills the handler table."""

from kafkalite.broker.handlers import (  # noqa: F401  (imported to register handlers)
    api_versions,
    cluster,
    configs,
    fetch,
    groups,
    leader_epoch,
    list_offsets,
    metadata,
    offsets,
    produce,
    producers,
    records,
    topics,
)
from kafkalite.broker.handlers.registry import HANDLERS

__all__ = ["HANDLERS"]
