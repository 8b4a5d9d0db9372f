"""Invariant checkers for the Raft simulation, named after the properties of Raft §5.

Each raises ``Violation`` (an ``AssertionError``) describing what broke; the simulation adds
the seed so the run can be replayed with ``RAFT_SIM_SEED``.

- election safety: at most one leader per epoch, over the whole run.
- log matching: two logs with an entry of the same offset and epoch agree on the payload
  there and on every entry before it.
- leader completeness: a node that becomes leader holds every entry committed so far.
- state-machine safety: every node applies the same entries in the same order, each once,
  and never goes back (a snapshot may only move it forward).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from kafkalite.raft import Entry, RaftLog, RaftNode, Role, Snapshot


class Violation(AssertionError):
    """A Raft safety or liveness property does not hold."""


Applied = tuple[int, bool, str]  # (epoch, control, payload hex), indexed by offset


def encode_state(state: list[Applied]) -> bytes:
    return json.dumps(state).encode()


def decode_state(data: bytes) -> list[Applied]:
    return [(int(e), bool(c), str(p)) for e, c, p in json.loads(data)]


@dataclass
class Checker:
    """Global knowledge accumulated over a run: who led which epoch, what was committed."""

    leaders: dict[int, int] = field(default_factory=dict)
    committed: list[Applied] = field(default_factory=list)
    written: dict[tuple[int, int], bytes] = field(default_factory=dict)

    def check_election_safety(self, node: RaftNode) -> bool:
        """True if ``node`` is a leader; fails if another node led the same epoch."""
        if node.role is not Role.LEADER:
            return False
        other = self.leaders.setdefault(node.epoch, node.node_id)
        if other != node.node_id:
            raise Violation(
                f"election safety: nodes {other} and {node.node_id} "
                f"both leader of epoch {node.epoch}"
            )
        return True

    def check_leader_completeness(self, node: RaftNode) -> None:
        log = node.log
        for offset in range(log.log_start_offset, len(self.committed)):
            entry = log.entry_at(offset)
            epoch, _, payload = self.committed[offset]
            if entry is None or entry.epoch != epoch or entry.payload.hex() != payload:
                raise Violation(
                    f"leader completeness: leader {node.node_id} of epoch "
                    f"{node.epoch} lacks committed offset {offset} ({entry})"
                )

    def apply(self, node_id: int, state: list[Applied], items: list[Entry | Snapshot]) -> None:
        """Apply committed items to a node's state machine, checking each against what the
        rest of the cluster applied at that offset."""
        for item in items:
            if isinstance(item, Snapshot):
                loaded = decode_state(item.data)
                if len(loaded) != item.snapshot_id.end_offset or len(loaded) < len(state):
                    raise Violation(
                        f"state machine: node {node_id} loads snapshot "
                        f"{item.snapshot_id} over {len(state)} applied entries"
                    )
                for offset, value in enumerate(loaded):
                    self._commit(node_id, offset, value)
                state[:] = loaded
                continue
            if item.offset != len(state):
                raise Violation(
                    f"state machine: node {node_id} applies offset {item.offset} "
                    f"after {len(state)} entries (gap or repeat)"
                )
            value = (item.epoch, item.control, item.payload.hex())
            self._commit(node_id, item.offset, value)
            state.append(value)

    def _commit(self, node_id: int, offset: int, value: Applied) -> None:
        if offset < len(self.committed):
            if self.committed[offset] != value:
                raise Violation(
                    f"state machine safety: node {node_id} applied {value} at "
                    f"{offset}, others applied {self.committed[offset]}"
                )
        elif offset == len(self.committed):
            self.committed.append(value)
        else:
            raise Violation(
                f"state machine: offset {offset} committed before {len(self.committed)}"
            )

    def check_logs(self, logs: dict[int, RaftLog]) -> None:
        """Log matching over all current logs (including unflushed entries)."""
        contents = {n: log.read(log.log_start_offset, 1 << 30) for n, log in logs.items()}
        for entries in contents.values():
            for e in entries:
                seen = self.written.setdefault((e.offset, e.epoch), e.payload)
                if seen != e.payload:
                    raise Violation(
                        f"log matching: two different entries at offset "
                        f"{e.offset} in epoch {e.epoch}"
                    )
        nodes = sorted(logs)
        for i, a in enumerate(nodes):
            for b in nodes[i + 1 :]:
                self._check_pair(a, logs[a], b, logs[b])

    @staticmethod
    def _check_pair(a: int, log_a: RaftLog, b: int, log_b: RaftLog) -> None:
        lo = max(log_a.log_start_offset, log_b.log_start_offset)
        hi = min(log_a.end_offset, log_b.end_offset)
        for offset in range(hi - 1, lo - 1, -1):
            ea, eb = log_a.entry_at(offset), log_b.entry_at(offset)
            if ea is not None and eb is not None and ea.epoch == eb.epoch:
                for earlier in range(lo, offset):
                    if log_a.entry_at(earlier) != log_b.entry_at(earlier):
                        raise Violation(
                            f"log matching: nodes {a} and {b} agree at offset "
                            f"{offset} (epoch {ea.epoch}) but differ at {earlier}"
                        )
                return
