"""How a partition's log keeps its producer state (``producer_state``) in step with its
batches.

Every batch appended, as leader or follower, updates it (``track_batch``): the producer's
last sequences and epoch, and its open transaction, which an end marker completes. An
aborted transaction is also written to the aborted-transaction index (``txn_index``) of
the segment holding its marker, which read_committed fetches list. A log that was opened
or truncated rebuilds the state from the newest producer snapshot (``producer_snapshot``)
not above where the log is known good, replaying only the batch headers after it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkalite.protocol.control_records import TransactionMarker, read_marker
from kafkalite.protocol.record_batch import InvalidBatchError, RecordBatchHeader
from kafkalite.storage.producer_state import ProducerStateManager
from kafkalite.storage.segment import LogSegment
from kafkalite.storage.txn_index import AbortedTxn

if TYPE_CHECKING:
    from kafkalite.storage.log import Log


def rebuild_producer_state(plog: Log, reindex: set[int] | None = None) -> None:
    """Load the newest producer snapshot at or below where the log is known good (the
    first segment in ``reindex``, re-validated by recovery, else the log end), then
    replay the batch headers after it. Segments in ``reindex`` get their
    aborted-transaction index rebuilt on the way."""
    reindex = reindex or set()
    plog.snapshots.delete_above(plog.log_end_offset)
    good_until = min(reindex, default=plog.log_end_offset)
    snapshot = plog.snapshots.load_latest(good_until, plog.producer_state)
    start = max(plog.log_start_offset, snapshot or 0)
    for segment in plog.segments[plog.segment_index(start) :]:
        index = segment.base_offset in reindex
        for pos, header in segment.scan(segment.position_for(start)):
            if header.last_offset < start:
                continue
            batch = segment.read_bytes(pos, header.size_in_bytes) if header.is_control else None
            track_batch(plog.producer_state, segment, header, batch, index)


def track_batch(
    producer_state: ProducerStateManager,
    segment: LogSegment,
    header: RecordBatchHeader,
    batch: bytes | memoryview | None,
    index: bool,
) -> None:
    """Apply one appended batch to the producer state (``batch`` is needed only for a
    control batch); with ``index``, an abort marker's transaction goes into the
    aborted-transaction index of the segment holding the marker."""
    marker = marker_of(batch, header) if batch is not None else None
    completed = producer_state.update(header, marker)
    if index and completed is not None and completed.is_aborted:
        segment.txn_index.append(
            AbortedTxn(
                completed.producer_id,
                completed.first_offset,
                completed.last_offset,
                producer_state.last_stable_offset_after(completed),
            )
        )


def marker_of(
    batch: bytes | memoryview, header: RecordBatchHeader, pos: int = 0
) -> TransactionMarker | None:
    """The transaction marker a control batch holds; None for anything else."""
    try:
        return read_marker(batch, pos, header)
    except (InvalidBatchError, ValueError):
        return None
