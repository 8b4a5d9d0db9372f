"""A run at a glance: acknowledged writes and errors over time, their latency, the fault
windows shaded and the leader changes marked, so a failover's availability gap shows.

``build_timeline`` turns a history, the fault windows and the brokers' events into plain
numbers (seconds since the run began); ``plot_timeline`` only draws them. Tests check the
numbers, students look at the picture.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from kafkalite.events import EventType
from kafkalite.lab.faults import FaultWindow
from kafkalite.lab.history import History, OpKind

LEADER_EVENTS = (EventType.LEADER_ELECTED, EventType.UNCLEAN_LEADER_ELECTED)
FAULT_COLOURS = {
    "kill": "tab:red",
    "stop": "tab:orange",
    "pause": "tab:purple",
    "isolate": "tab:brown",
    "slow": "tab:olive",
    "partial_partition": "tab:pink",
}


@dataclass(frozen=True, slots=True)
class Timeline:
    start: float
    """Wall-clock time (``time.time()``) of the run's first op: the plot's zero."""
    duration_s: float
    bin_s: float
    ack_rate: list[tuple[float, float]]
    """(bin start, acknowledged writes per second in that bin)."""
    error_rate: list[tuple[float, float]]
    """(bin start, failed writes per second in that bin)."""
    latencies: list[tuple[float, float]]
    """(when sent, milliseconds until acknowledged) for each acknowledged write."""
    errors: list[tuple[float, str]]
    """(when the client gave up, the error's name)."""
    faults: list[tuple[float, float, str]]
    """(start, end, "kill 2"): the fault windows that overlap the run, clipped to it."""
    leader_changes: list[tuple[float, str]]
    """(when, "orders-0 → 2, epoch 4"): leader elections of the run's partitions."""
    longest_gap: tuple[float, float] | None
    """The longest stretch without an acknowledgement (from, to), once writes began."""

    @property
    def longest_gap_s(self) -> float:
        return 0.0 if self.longest_gap is None else self.longest_gap[1] - self.longest_gap[0]


def build_timeline(
    history: History,
    faults: Iterable[FaultWindow] = (),
    events: Iterable[Mapping[str, Any]] = (),
    bins: int = 60,
) -> Timeline:
    span = history.span
    if span is None:
        raise ValueError("the history is empty: send or read something first")
    start, end = span
    duration = max(end - start, 1e-3)
    bin_s = duration / bins
    acks = sorted(op.time - start for op in history.of(OpKind.ACK))
    failures = history.of(OpKind.ERROR)
    latencies = [
        (op.time - start - op.latency_ms / 1000, op.latency_ms)
        for op in history.of(OpKind.ACK)
        if op.latency_ms is not None
    ]
    return Timeline(
        start=start,
        duration_s=duration,
        bin_s=bin_s,
        ack_rate=_rate(acks, bins, bin_s),
        error_rate=_rate([op.time - start for op in failures], bins, bin_s),
        latencies=sorted(latencies),
        errors=[(op.time - start, op.error or "error") for op in failures],
        faults=_clip_faults(faults, start, end),
        leader_changes=_leader_changes(events, history, start, end),
        longest_gap=_longest_gap(acks, duration),
    )


def _rate(times: list[float], bins: int, bin_s: float) -> list[tuple[float, float]]:
    counts = [0] * bins
    for t in times:
        counts[min(int(t / bin_s), bins - 1)] += 1
    return [(i * bin_s, n / bin_s) for i, n in enumerate(counts)]


def _clip_faults(
    faults: Iterable[FaultWindow], start: float, end: float
) -> list[tuple[float, float, str]]:
    clipped = []
    for w in faults:
        until = end if w.end is None else w.end
        if until >= start and w.start <= end:
            clipped.append((max(w.start, start) - start, min(until, end) - start, w.label))
    return clipped


def _leader_changes(
    events: Iterable[Mapping[str, Any]], history: History, start: float, end: float
) -> list[tuple[float, str]]:
    """One mark per election of the run's partitions; an unclean election is reported by
    two events (elected, and elected uncleanly), marked once as unclean."""
    topics = {op.topic for op in history.snapshot()}
    found: dict[tuple[Any, ...], tuple[float, str]] = {}
    for e in events:
        t = e["time_ms"] / 1000
        if e["type"] not in LEADER_EVENTS or e.get("replay") or e.get("topic") not in topics:
            continue
        if not start <= t <= end:
            continue
        key = (e["topic"], e["partition"], e["broker"], e.get("leader_epoch"))
        unclean = e["type"] == EventType.UNCLEAN_LEADER_ELECTED
        if key in found and not unclean:
            continue
        label = f"{e['topic']}-{e['partition']} → {e['broker']}" + (" (unclean)" if unclean else "")
        if e.get("leader_epoch") is not None:
            label += f", epoch {e['leader_epoch']}"
        found[key] = (min(t - start, found.get(key, (t - start, ""))[0]), label)
    return sorted(found.values())


def _longest_gap(acks: list[float], duration: float) -> tuple[float, float] | None:
    if not acks:
        return (0.0, duration)
    edges = [*acks, duration]
    gaps = [(b - a, a, b) for a, b in itertools.pairwise(edges)]
    if not gaps:
        return None
    _, a, b = max(gaps)
    return (a, b)


def plot_timeline(timeline: Timeline, title: str | None = None) -> Figure:
    """Two panels sharing the time axis: writes per second (acknowledged and failed) above,
    each acknowledged write's latency below (log scale); faults shaded, leader changes as
    dashed lines, the longest gap without an acknowledgement bracketed."""
    # made through pyplot so a notebook's inline backend knows how to show it, then closed
    # so that it is shown once: as the value this function returns
    figure, (rate, latency) = plt.subplots(
        2, 1, sharex=True, height_ratios=(3, 2), figsize=(10, 5.5), layout="constrained"
    )
    plt.close(figure)
    xs = [t for t, _ in timeline.ack_rate]
    rate.step(
        xs,
        [r for _, r in timeline.ack_rate],
        where="post",
        color="tab:green",
        label="acknowledged / s",
    )
    if timeline.errors:
        rate.step(
            xs,
            [r for _, r in timeline.error_rate],
            where="post",
            color="tab:red",
            label="failed / s",
        )
    rate.set_ylabel("writes per second")
    if timeline.latencies:
        latency.scatter(*zip(*timeline.latencies, strict=True), s=6, color="tab:blue")
        latency.set_yscale("log")
    for t, _ in timeline.errors:
        latency.axvline(t, color="tab:red", alpha=0.25, linewidth=0.8)
    latency.set_ylabel("latency (ms)")
    latency.set_xlabel("seconds since the first write")
    for axis in (rate, latency):
        for begin, end, label in timeline.faults:
            colour = FAULT_COLOURS.get(label.split()[0], "grey")
            axis.axvspan(begin, end, color=colour, alpha=0.15)
        for t, _ in timeline.leader_changes:
            axis.axvline(t, color="black", linestyle="--", linewidth=0.9)
    top = rate.get_ylim()[1]
    for begin, end, label in timeline.faults:
        x, ha = _label_place(rate, begin, end, centred=False)
        rate.text(x, top, label, va="top", ha=ha, fontsize="small")
    middle = sum(rate.get_xlim()) / 2
    for i, (t, label) in enumerate(timeline.leader_changes):
        # a change in the right half is labelled to the left of its line: inside the axes;
        # one change after another on alternate heights: a failover's two (the new leader,
        # then the old one back) come seconds apart and their labels overlapped
        right = t > middle
        text = label + " " if right else " " + label
        height = top * (0.85 if i % 2 == 0 else 0.7)
        rate.text(t, height, text, va="top", ha="right" if right else "left", fontsize="x-small")
    if timeline.longest_gap is not None and timeline.longest_gap_s > 0:
        a, b = timeline.longest_gap
        rate.annotate(
            "",
            xy=(a, top * 0.5),
            xytext=(b, top * 0.5),
            arrowprops={"arrowstyle": "<->", "color": "grey"},
        )
        x, ha = _label_place(rate, a, b, centred=True)
        rate.text(x, top * 0.52, f"no ack for {b - a:.2f} s", ha=ha, fontsize="small")
    # below the figure, where no fault or leader label is: inside the axes it covered them
    figure.legend(loc="outside lower center", ncols=2, fontsize="small", frameon=False)
    figure.suptitle(title or "writes over time")
    return figure


def _label_place(axis: Axes, begin: float, end: float, centred: bool) -> tuple[float, str]:
    """Where a span's label goes so that it stays inside the axes: at the span's start
    (or centred over it), but one starting in the last third ends at the span's end, and
    a centred one in the first third starts at its start. Labels at a fixed place ran past
    the right edge ("isolate 2" at the end of the committed demo, a final gap's "no ack
    for 0.57 s")."""
    start, stop = axis.get_xlim()
    third = (stop - start) / 3
    if begin > stop - third:
        return end, "right"
    if centred and end >= start + third:
        return (begin + end) / 2, "center"
    return begin, "left"
