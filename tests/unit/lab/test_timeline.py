"""A failover run as the timeline sees it: acks stop when the leader is killed, an
election is marked, acks resume; the longest gap without an ack is the outage."""

from __future__ import annotations

import itertools

import pytest
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from kafkalite.demo.scenario import TIMELINE_DPI, TIMELINE_SIZE_PX
from kafkalite.lab.faults import FaultWindow
from kafkalite.lab.history import History, Op, OpKind
from kafkalite.lab.timeline import build_timeline, plot_timeline

pytestmark = pytest.mark.unit

T0 = 1_000.0


def failover_history() -> History:
    """Acks every 0.1 s from 0 to 1 s and from 2.5 s to 4 s; one write fails at 2 s."""
    h = History()
    times = [i / 10 for i in range(11)] + [2.5 + i / 10 for i in range(16)]
    for i, t in enumerate(times):
        h.record(Op(T0 + t - 0.005, OpKind.SEND, "p", "orders", 0, b"v%d" % i))
        h.record(Op(T0 + t, OpKind.ACK, "p", "orders", 0, b"v%d" % i, i, latency_ms=5.0))
    h.record(Op(T0 + 2.0, OpKind.ERROR, "p", "orders", 0, b"lost", latency_ms=900, error="X"))
    return h


EVENTS = [
    {
        "seq": 1,
        "time_ms": (T0 + 1.8) * 1000,
        "broker": 3,
        "type": "leader_elected",
        "topic": "orders",
        "partition": 0,
        "leader": 3,
        "leader_epoch": 4,
    },
    {
        "seq": 2,
        "time_ms": (T0 + 1.9) * 1000,
        "broker": 2,
        "type": "leader_elected",
        "topic": "other",
        "partition": 0,
        "leader": 2,
        "leader_epoch": 1,
    },
    {
        "seq": 3,
        "time_ms": (T0 + 0.5) * 1000,
        "broker": 1,
        "type": "leader_elected",
        "topic": "orders",
        "partition": 0,
        "leader": 1,
        "leader_epoch": 0,
        "replay": True,
    },
]


def test_the_longest_gap_without_an_ack_is_the_failover():
    timeline = build_timeline(failover_history())
    assert timeline.longest_gap == pytest.approx((1.0 + 0.005, 2.5 + 0.005))
    assert timeline.longest_gap_s == pytest.approx(1.5)


def test_acks_per_second_fall_to_zero_during_the_outage():
    timeline = build_timeline(failover_history(), bins=40)
    during = [rate for t, rate in timeline.ack_rate if 1.2 <= t < 2.3]
    before = [rate for t, rate in timeline.ack_rate if 0.2 <= t < 0.8]
    assert during and all(rate == 0 for rate in during)
    assert all(rate > 0 for rate in before)
    assert sum(r * timeline.bin_s for _, r in timeline.ack_rate) == pytest.approx(27)


def test_latency_is_plotted_at_send_time_and_errors_at_failure_time():
    timeline = build_timeline(failover_history())
    assert timeline.latencies[0] == pytest.approx((0.0, 5.0))
    assert timeline.errors == [(pytest.approx(2.005), "X")]


def test_fault_windows_are_clipped_to_the_run_and_open_ones_run_to_its_end():
    windows = [
        FaultWindow("kill", 1, T0 + 1.0, T0 + 3.0),
        FaultWindow("slow", 2, T0 - 5.0, None),
        FaultWindow("pause", 3, T0 - 9.0, T0 - 8.0),  # over before the run began
    ]
    timeline = build_timeline(failover_history(), windows)
    assert timeline.faults == [
        (pytest.approx(1.005), pytest.approx(3.005), "kill 1"),
        (0.0, pytest.approx(4.005), "slow 2"),
    ]


def test_only_live_elections_of_the_runs_topics_are_marked():
    timeline = build_timeline(failover_history(), events=EVENTS)
    assert timeline.leader_changes == [(pytest.approx(1.805), "orders-0 → 3, epoch 4")]


def test_an_empty_history_is_a_clear_error_and_a_run_plots():
    with pytest.raises(ValueError, match="empty"):
        build_timeline(History())
    figure = plot_timeline(build_timeline(failover_history(), events=EVENTS), "failover")
    assert len(figure.axes) == 2 and figure.axes[1].get_yscale() == "log"


def test_an_unclean_election_is_marked_once_as_unclean():
    elected = {
        "seq": 9,
        "time_ms": (T0 + 2.0) * 1000,
        "broker": 2,
        "type": "leader_elected",
        "topic": "orders",
        "partition": 0,
        "leader": 2,
        "leader_epoch": 5,
    }
    unclean = {
        **elected,
        "seq": 10,
        "time_ms": (T0 + 2.001) * 1000,
        "type": "unclean_leader_elected",
    }
    timeline = build_timeline(failover_history(), events=[elected, unclean])
    assert timeline.leader_changes == [(pytest.approx(2.005), "orders-0 → 2 (unclean), epoch 5")]


def drawn_as_presented(figure: Figure) -> tuple[Axes, Bbox, RendererAgg]:
    """The figure drawn at the presenter's size: its rate axes, their box, the renderer."""
    figure.set_size_inches(TIMELINE_SIZE_PX[0] / TIMELINE_DPI, TIMELINE_SIZE_PX[1] / TIMELINE_DPI)
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    rate = figure.axes[0]
    return rate, rate.get_window_extent(renderer), renderer


def test_labels_stay_inside_the_plot_apart_and_clear_of_the_legend():
    """A leader change late in the run was labelled past the axes' right edge, under the
    legend (the presenter's timeline showed it cut and covered); a failover's two changes,
    seconds apart, were labelled over each other (the presenter's acks-1 ending)."""
    late = [
        {**EVENTS[0], "seq": 5, "time_ms": (T0 + 3.3) * 1000},
        {**EVENTS[0], "seq": 6, "time_ms": (T0 + 3.7) * 1000, "leader": 1, "leader_epoch": 5},
    ]
    figure = plot_timeline(build_timeline(failover_history(), events=late), "late changes")
    rate, box, renderer = drawn_as_presented(figure)
    legend = (figure.legends or [rate.get_legend()])[0].get_window_extent(renderer)
    extents = [(t.get_text(), t.get_window_extent(renderer)) for t in rate.texts if t.get_text()]
    assert len(extents) == 3  # two changes and the gap
    for label, extent in extents:
        assert box.x0 - 1 <= extent.x0 and extent.x1 <= box.x1 + 1, label
        assert not extent.overlaps(legend), label
    for (a, one), (b, other) in itertools.combinations(extents, 2):
        assert not one.overlaps(other), (a, b)


def test_a_gap_and_a_fault_at_the_end_are_labelled_inside_the_plot():
    """The consumer-group demo's last writes of 13 s came 0.6 s apart: "no ack for 0.57 s",
    centred over that gap, ran past the axes' right edge; so did "isolate 2", a fault the
    committed demo began just before its end."""
    h = History()
    for i, t in enumerate([i / 5 for i in range(61)] + [12.6]):
        h.record(Op(T0 + t - 0.005, OpKind.SEND, "p", "orders", 0, b"v%d" % i))
        h.record(Op(T0 + t, OpKind.ACK, "p", "orders", 0, b"v%d" % i, i, latency_ms=5.0))
    late = [FaultWindow("isolate", 2, T0 + 12.4, T0 + 12.5)]
    rate, box, renderer = drawn_as_presented(plot_timeline(build_timeline(h, late), "late"))
    labels = [t for t in rate.texts if t.get_text()]
    assert {t.get_text() for t in labels} == {"isolate 2", "no ack for 0.60 s"}
    for label in labels:
        extent = label.get_window_extent(renderer)
        assert box.x0 <= extent.x0 and extent.x1 <= box.x1, label.get_text()
