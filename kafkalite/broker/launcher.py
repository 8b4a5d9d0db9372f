"""Start several brokers from one Python: ``python -m kafkalite.broker.launcher``.

Each broker process spent about 1.1 s of CPU importing the broker's modules (kio's
protocol classes about half of it, Kafka-Lite's own the rest) before it did anything, and
nearly all of the 1.0-1.2 s it spent until it answered: a 3-broker cluster on two cores
needed 1.7 s for the imports alone. This process imports them once and forks a broker
per request, each in a session of its own with its log as its output, as
``python -m kafkalite.broker`` would run it; then it prints their pids and exits, so the
brokers are nobody's children (neither a notebook's kernel nor the shell's).

It reads one JSON list on stdin: ``[{"args": [...], "log": "<file>"}, ...]``, each
``args`` being those of ``python -m kafkalite.broker``; it prints ``[pid, ...]``. Its own
arguments are the brokers' data directories: a forked broker keeps its parent's command
line, and the local backend trusts a recorded pid only when that command line names the
broker's data directory (a pid may be another process's after a restart of the machine).
"""

from __future__ import annotations

import gc
import json
import logging
import os
import sys

# as in kafkalite.broker.__main__: kio's hypothesis strategies are for the tests
sys.modules.setdefault("hypothesis", None)  # type: ignore[arg-type]  # None: not importable

from kafkalite.broker.main import parser, run_broker  # noqa: E402  (after the line above)


def _become_broker(args: list[str], log: str) -> None:
    """In the forked child: detach, write to the broker's log, run it, never return."""
    code = 1
    try:
        os.setsid()
        out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(out)
        os.close(null)
        code = run_broker(parser().parse_args(args))
    finally:
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)  # the parent's exit handlers are not this process's


def main() -> int:
    requests = json.load(sys.stdin)
    named = sys.argv[1:]
    for request in requests:
        data_dir = request["args"][request["args"].index("--data-dir") + 1]
        if data_dir not in named:
            print(f"error: {data_dir} is not on the launcher's command line", file=sys.stderr)
            return 2
    sys.stdout.flush()
    # what the import made, out of every broker's collections: each broker's first full
    # collection (gc_pauses.freeze_startup_objects) then scans only what it made itself
    gc.collect()
    gc.freeze()
    pids = []
    for request in requests:
        pid = os.fork()
        if pid == 0:
            _become_broker(request["args"], request["log"])
        pids.append(pid)
    print(json.dumps(pids), flush=True)
    return 0


if __name__ == "__main__":
    # without finalizing: tearing down what the import made took 60-80 ms of a start that
    # waits for this process to exit, and this process holds nothing to close
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
