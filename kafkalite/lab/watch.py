"""Offsets over time: sample one partition's replicas while something happens, then draw
each replica's log end offset against the high watermark.

A single table shows a moment; replication is motion. A follower reading ahead of the
high watermark, a high watermark held back by a slow member of the ISR, a replica leaving
the ISR and catching up again all show as lines. ``offsets_over_time`` turns recorded
snapshots into a table (pure); ``plot_offsets`` draws it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from kafkalite.lab.tables import replicas_frame


def offsets_over_time(
    samples: Iterable[tuple[float, Mapping[str, Any]]], topic: str, partition: int = 0
) -> pd.DataFrame:
    """One row per replica per sample: ``t`` (seconds since the first sample) and the
    replica's columns of ``lab.replicas()``."""
    frames = []
    start: float | None = None
    for at, status in samples:
        start = at if start is None else start
        frame = replicas_frame(status, topic)
        frame = frame[frame["partition"] == partition]
        frames.append(frame.assign(t=at - start))
    if not frames:
        return pd.DataFrame(columns=["t", *replicas_frame({"brokers": [], "partitions": []})])
    together = pd.concat(frames, ignore_index=True)
    return together[["t", *[c for c in together.columns if c != "t"]]]


def plot_offsets(frame: pd.DataFrame, title: str | None = None) -> Figure:
    """Each replica's log end offset (a line per broker) and the partition's high
    watermark (what consumers may read), over time; dots mark samples where a replica was
    out of the ISR."""
    figure, axis = plt.subplots(figsize=(10, 4), layout="constrained")
    plt.close(figure)  # shown once, as the returned value
    for broker, rows in frame.groupby("broker"):
        led = bool(rows["leader"].astype(bool).any())
        line = axis.step(
            rows["t"],
            rows["log_end_offset"],
            where="post",
            linewidth=4 if led else 1.5,
            alpha=0.6 if led else 1.0,
            label=f"broker {broker} LEO" + (" (leader)" if led else ""),
        )
        out = rows[~rows["in_isr"].astype(bool)]
        axis.scatter(out["t"], out["log_end_offset"], s=12, color=line[0].get_color(), marker="x")
    leaders = frame[frame["leader"].astype(bool)]
    axis.step(
        leaders["t"],
        leaders["high_watermark"],
        where="post",
        color="black",
        linestyle="--",
        linewidth=2,
        label="high watermark",
    )
    axis.set_xlabel("seconds")
    axis.set_ylabel("offset")
    axis.legend(loc="upper left", fontsize=8)
    axis.set_title(title or "log end offsets and the high watermark (x: out of the ISR)")
    return figure
