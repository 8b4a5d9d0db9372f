"""Opening a partition's log (Kafka's ``LogLoader``): what happens between a broker's
start and the log's first append.

A crash can leave a swap of cleaned segments half done, and batches written since the
last recovery-point checkpoint unsynced, possibly torn. So opening finishes interrupted
swaps (``segment_swap``), re-validates only the segments not wholly below the recovery
point (``recovery``), cuts the log at the first torn batch (later segments cannot follow
it), and rebuilds the producer state from the newest snapshot (``log_producer_state``).
After a clean shutdown (the ``clean-shutdown`` file) nothing needs re-validating.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from kafkalite.storage.log_producer_state import rebuild_producer_state
from kafkalite.storage.recovery import recover_segment
from kafkalite.storage.segment import LogSegment
from kafkalite.storage.segment_swap import finish_interrupted_swaps

if TYPE_CHECKING:
    from kafkalite.storage.log import Log

log = logging.getLogger(__name__)
CLEAN_SHUTDOWN = "clean-shutdown"


def load(plog: Log) -> None:
    """Fill a freshly made, empty ``plog`` from its directory, recovering as needed."""
    directory = plog.dir
    finish_interrupted_swaps(directory, plog.disk)
    clean = (directory / CLEAN_SHUTDOWN).exists()
    plog.log_start_offset = read_int(directory / "log-start-offset", 0)
    plog.recovery_point = read_int(directory / "recovery-point", 0)
    bases = sorted(int(p.stem) for p in directory.glob("*.log"))
    recovered: set[int] = set()
    for i, base in enumerate(bases):
        segment = LogSegment(directory, base, plog.now_ms())
        truncated = 0
        if not clean and _needs_recovery(base, bases, plog.recovery_point):
            truncated = recover_segment(segment, plog.config.index_interval_bytes)
            segment.txn_index.reset()  # rebuilt below from the batches that survived
            recovered.add(base)
        else:
            segment.load_from_index(plog.config.index_interval_bytes)
        if plog.segments and segment.base_offset < plog.segments[-1].next_offset:
            log.warning("%s: segment %d overlaps its predecessor; dropping it", directory, base)
            segment.delete()
            continue
        plog.segments.append(segment)
        if truncated:
            # a torn batch ends the log: anything in later segments cannot follow it
            plog.recovered_bytes_truncated += truncated
            for later in bases[i + 1 :]:
                LogSegment(directory, later, 0).delete()
            break
    if not plog.segments:
        plog.segments.append(LogSegment(directory, plog.log_start_offset, plog.now_ms()))
    (directory / CLEAN_SHUTDOWN).unlink(missing_ok=True)
    if plog.log_start_offset > plog.log_end_offset:
        plog.truncate_fully_and_start_at(plog.log_start_offset)  # it was cut short
    plog.leader_epoch_cache.truncate_from_end(plog.log_end_offset)
    plog.log_start_offset = max(plog.log_start_offset, plog.segments[0].base_offset)
    plog.recovery_point = min(plog.recovery_point, plog.log_end_offset)
    rebuild_producer_state(plog, reindex=recovered)
    if plog.recovered_bytes_truncated:
        log.warning(
            "%s: recovery truncated %d bytes of torn tail",
            directory,
            plog.recovered_bytes_truncated,
        )


def _needs_recovery(base: int, bases: list[int], recovery_point: int) -> bool:
    """Segments wholly below the recovery point were fsynced; the rest are checked."""
    later = [b for b in bases if b > base]
    return not later or later[0] > recovery_point


def read_int(path: Path, default: int) -> int:
    try:
        return int(path.read_text().strip())
    except (FileNotFoundError, ValueError):
        return default
