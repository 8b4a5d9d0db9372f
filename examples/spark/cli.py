"""The command line every pipeline example shares."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any


def arguments(description: str, argv: Sequence[str] | None, output: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--bootstrap", default="127.0.0.1:9092", help="kafka.bootstrap.servers")
    parser.add_argument("--input", default="orders", help="the topic of orders")
    parser.add_argument("--output", required=True, help=output)
    parser.add_argument("--checkpoint", required=True, help="the query's checkpoint directory")
    parser.add_argument(
        "--available-now",
        action="store_true",
        help="read what is there now, then stop (Trigger.AvailableNow); else run until killed",
    )
    parser.add_argument(
        "--max-offsets-per-trigger", default=None, help="records per micro-batch at most"
    )
    parser.add_argument(
        "--report", action="store_true", help="print the totals the output holds, and stop"
    )
    parser.add_argument("--master", default=None, help="Spark master (default local[2])")
    return parser.parse_args(argv)


def query_arguments(args: argparse.Namespace) -> tuple[Any, ...]:
    """What every example's ``start(spark, ...)`` takes after the session, in its order."""
    return (
        args.bootstrap,
        args.input,
        args.output,
        args.checkpoint,
        args.available_now,
        args.max_offsets_per_trigger,
    )
