"""Rehearse scenarios without a browser: every step in order, each outcome and how long
the scenario took, on the lab's cluster (what an instructor runs before the lecture, and
what the integration tests run).

    python -m kafkalite.demo.rehearse [SCENARIO ...] [--dir .kafkalite]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence

from kafkalite.demo.catalog import SCENARIOS
from kafkalite.demo.scenarios import scenario_class
from kafkalite.demo.steps import Key, Outcome, Phase, Stepper
from kafkalite.lab.lab import Lab


def rehearse(
    lab: Lab, slug: str, say: Callable[[str], None] = print
) -> tuple[float, list[Outcome]]:
    """Open ``slug`` (set-up included), press → until its last step; returns the seconds it
    took and each step's outcome. Raises RuntimeError naming the step that failed."""
    scenario = scenario_class(slug)(lab)
    stepper = Stepper(scenario.steps())
    started = time.monotonic()
    try:
        scenario.carry_out(stepper, stepper.start())
        while stepper.phase == Phase.READY and not stepper.at_end:
            command = stepper.press(Key.NEXT)
            step = stepper.steps[stepper.index if command is None else command.step or 0]
            say(f"  {'?' if step.question else '→'} {step.say}")
            if command is not None:
                began = time.monotonic()
                scenario.carry_out(stepper, command)
                if stepper.outcome is not None and stepper.phase == Phase.READY:
                    text = stepper.outcome.text or stepper.outcome.verdict or ""
                    say(f"      ({time.monotonic() - began:.1f} s) {text}")
                    if stepper.outcome.verdict and stepper.outcome.text:
                        say(f"      {stepper.outcome.verdict}")
        if stepper.phase != Phase.READY:
            raise RuntimeError(f"{slug}: {stepper.error or stepper.phase}")
    finally:
        scenario.close()
    return time.monotonic() - started, list(stepper.outcomes)


def main(argv: Sequence[str] | None = None) -> int:
    from kafkalite import lab as lab_package  # noqa: PLC0415

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenarios", nargs="*", default=[s.slug for s in SCENARIOS])
    parser.add_argument("--dir", default=None, help="the cluster's folder")
    args = parser.parse_args(argv)
    lab = lab_package.connect(args.dir)
    failed = 0
    try:
        for slug in args.scenarios:
            print(slug)
            try:
                took, _ = rehearse(lab, slug)
                print(f"  {slug}: {took:.1f} s")
            except Exception as error:
                failed += 1
                print(f"  {slug} FAILED: {error}")
    finally:
        lab.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
