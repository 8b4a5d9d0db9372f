"""Frames gone wrong, for the hand readers' property tests: what a hand reader reads of
one it must read as kio does, and what it cannot read it must leave to kio."""

from __future__ import annotations

from hypothesis import strategies as st


@st.composite
def damaged(draw: st.DrawFn, frame: bytes) -> bytearray:
    """``frame`` cut short (never inside its first four bytes), with one byte changed,
    and up to three bytes more after it."""
    out = bytearray(frame[: draw(st.integers(min(4, len(frame)), len(frame)))])
    if out:
        out[draw(st.integers(0, len(out) - 1))] = draw(st.integers(0, 255))
    out += draw(st.binary(max_size=3))
    return out
