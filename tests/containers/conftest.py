"""Fixtures of the container tests: an engine (or a skip saying why none can run here) and
the base image the Dockerfile builds on when no registry is reachable."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.containers import stack
from tests.containers.engine import Engine, NoEngine, start_engine


@pytest.fixture(scope="session")
def engine() -> Iterator[Engine]:
    try:
        started = start_engine()
    except NoEngine as exc:
        pytest.skip(f"no container engine can run here: {exc}")
    try:
        yield started
    finally:
        started.release()


@pytest.fixture(scope="session")
def base_image(engine: Engine) -> str:
    return stack.base_image(engine)
