"""Run some tests again and again on a starved machine, and count how often they pass.

A test that fails now and then in CI ("flaky") usually fails for want of CPU. This runs
the given pytest arguments ``--runs`` times in a row beside a CPU burner on every core
(``tests.support.load.cpu_burners``, the burners of ``test_starvation``'s ``starve``),
each run its own pytest process, and prints one line per run and the count at the end;
it exits non-zero unless every run passed. Tests that starve the machine themselves
(``test_starvation``) are run with ``--burners 0``.

    python scripts/under_load.py --runs 10 -- tests/integration/test_quorum.py -k killed
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.load import cpu_burners  # noqa: E402  (the repository's root, first)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/under_load.py", description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument(
        "--burners",
        type=int,
        default=os.cpu_count() or 2,
        help="CPU burners (default: a core each)",
    )
    parser.add_argument(
        "--keep", type=Path, help="keep each run's temporary files (broker logs) in KEEP/run-N"
    )
    parser.add_argument("pytest_args", nargs="+", help="what to give pytest, after --")
    args = parser.parse_args(argv)
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    passed = 0
    with cpu_burners(args.burners):
        for run in range(1, args.runs + 1):
            started = time.monotonic()
            command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
            if args.keep is not None:
                command.append(f"--basetemp={args.keep / f'run-{run}'}")
            result = subprocess.run([*command, *args.pytest_args], cwd=ROOT, check=False)
            passed += result.returncode == 0
            took = time.monotonic() - started
            load = os.getloadavg()[0]
            verdict = "passed" if result.returncode == 0 else f"FAILED ({result.returncode})"
            print(f"run {run}: {verdict} in {took:.0f} s, load average {load:.1f}", flush=True)
    print(f"{passed} of {args.runs} runs passed beside {args.burners} CPU burners", flush=True)
    return 0 if passed == args.runs else 1


if __name__ == "__main__":
    raise SystemExit(main())
