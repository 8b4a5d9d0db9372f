"""What a student reads when a case fails: the first line says what went wrong in their
terms; the lines after it say where, and what the client library meant.

Three sources of failure reach a student, and each gets its sentence here:
- their code raised: the call, the exception in one line, where in their notebook ("cell
  12, line 4") and, for kafka-python's internal messages (state transitions, metadata
  timeouts), what it means in the lab's terms;
- their code ran out of time: what it was waiting for, from its own stack at the moment
  it was stopped ("waiting in cell 9, line 6: `future.get(timeout=60)`"), and the test's
  own hint when it gave one;
- a name the test needs is missing: not defined, or left out by the extraction, and why.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from grader.extract import Extracted

MODULE_FILE = "submission.py"
# kafka-python's internal wording -> what it means, in the words of the labs.
TRANSLATIONS: list[tuple[str, str]] = [
    (r"Invalid transition attempted from state READY to state (COMMITTING|ABORTING)",
     "there was no open transaction to end: call producer.begin_transaction() first"),
    (r"Invalid transition attempted from state IN_TRANSACTION to state IN_TRANSACTION",
     "a transaction was already open: commit or abort it before beginning another"),
    (r"Invalid transition attempted from state (\w+) to state (\w+)",
     "the transactional producer was used out of order (init_transactions, then "
     "begin_transaction, send, commit_transaction or abort_transaction)"),
    (r"Cannot perform a 'send' before completing a call to init_transactions",
     "a transactional producer must call init_transactions() once before sending"),
    (r"Cannot call send in state READY",
     "a transactional producer sends inside a transaction: call begin_transaction() first"),
    (r"Cannot send offsets to transaction because the producer is not in an active",
     "send_offsets_to_transaction() belongs inside an open transaction"),
    (r"Transactional method invoked on a non-transactional producer",
     "transactions need a producer made with a transactional_id"),
    (r"Failed to update metadata after ([\d.]+) secs",
     "the client could not learn where the topic's partitions are (does the topic exist, "
     "and is a broker reachable?)"),
    (r"Timeout after waiting for ([\d.]+) secs",
     "no acknowledgement came within the time given to .get(): the broker did not take "
     "the write in time (is the leader down, or are too few replicas in sync?)"),
    (r"KafkaConsumer is closed", "the consumer was used after close()"),
    (r"Partition is not assigned", "seek or position on a partition the consumer was not "
     "assigned (assign([...]) it first)"),
    (r"Requires group_id", "committing offsets needs a consumer made with a group_id"),
]  # fmt: skip
ERROR_MEANINGS = {
    "NotEnoughReplicasError": "the broker refused the write: fewer replicas are in sync "
    "than the topic's min.insync.replicas",
    "NotEnoughReplicasAfterAppendError": "the leader appended the write but too few "
    "replicas were in sync to acknowledge it; a retry may write it twice",
    "ProducerFencedError": "a newer producer with the same transactional_id called "
    "init_transactions(), which fenced this one off",
    "CommitFailedError": "the group moved on (a rebalance) and refused this consumer's commit",
    "NotLeaderForPartitionError": "the broker asked is no longer the partition's leader",
}


def where(frames: Iterable[Any], extracted: Extracted) -> str:
    """The student's innermost line among ``frames`` ([file, line, function, code]):
    "cell 12, line 4 (`consumer.commit()`)", or empty when none is theirs."""
    for filename, line, _function, code in reversed(list(frames)):
        if str(filename).endswith(MODULE_FILE):
            origin = extracted.origin(int(line))
            if origin is not None and origin[1] > 0:
                cell, cell_line = origin
                return f"{cell}, line {cell_line}" + (f" (`{code}`)" if code else "")
    return ""


def raised(call: str, error: dict[str, Any], extracted: Extracted) -> str:
    """A call that raised: first line in the student's terms, then what it means."""
    kind, message = str(error.get("type", "an exception")), str(error.get("message", ""))
    frames = error.get("frames") if isinstance(error.get("frames"), list) else []
    if kind == "NameError" and (name := _missing_name(message)) is not None:
        return missing(name, extracted, used_by=call)
    first = f"{call} raised {kind}" + (f": {_one_line(message)}" if message else "")
    lines = [first]
    at = where(frames or [], extracted)
    if at:
        lines.append(f"at {at}")
    meaning = translate(kind, message)
    if meaning:
        lines.append(f"that is: {meaning}")
    return "\n".join(lines)


def translate(kind: str, message: str) -> str:
    for pattern, meaning in TRANSLATIONS:
        if re.search(pattern, message):
            return meaning
    return ERROR_MEANINGS.get(kind, "")


def missing(name: str, extracted: Extracted, used_by: str = "") -> str:
    """A name the grader needs that the submission does not have, and why."""
    user = f"{used_by} uses `{name}`, but " if used_by else f"`{name}` is needed, but "
    if name in extracted.dropped:
        return (
            f"{user}the grader left `{name} = ...` out of your definitions: "
            f"{extracted.dropped[name]}; define what your function needs inside it, or pass it in"
        )
    return f"{user}your notebook does not define it (is its cell run and saved?)"


def timed_out(call: str, seconds: float, stack: str, extracted: Extracted, hint: str) -> str:
    """A call stopped at its time limit: what it was waiting for."""
    first = f"{call} did not finish within {seconds:.0f} s"
    waiting = waiting_at(stack, extracted)
    if waiting:
        first += f": when stopped, it was at {waiting}"
    return first + (f"\n{hint}" if hint else "")


def waiting_at(stack: str, extracted: Extracted) -> str:
    """The student's innermost line in a faulthandler dump of the stuck run."""
    frames = re.findall(r'File "([^"]+)", line (\d+) in (\w+)', stack)
    lines = extracted.source.splitlines()
    ours = [
        (f, int(n), fn, _code_at(lines, int(n))) for f, n, fn in frames if f.endswith(MODULE_FILE)
    ]
    return where(reversed(ours), extracted)  # faulthandler lists the innermost frame first


def _code_at(lines: list[str], line: int) -> str:
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def _missing_name(message: str) -> str | None:
    match = re.match(r"name '(\w+)' is not defined", message)
    return match.group(1) if match else None


def _one_line(message: str, limit: int = 300) -> str:
    text = " ".join(message.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
