"""Fixtures of the container tests: an engine (or a skip saying why none can run here) and
the base image the Dockerfile builds on when no registry is reachable."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest

from tests.containers.engine import REPO, Engine, NoEngine, start_engine


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
    """``BASE_IMAGE`` if set, else Debian bookworm's Python from mmdebstrap (kept by the
    engine's data root, so only the first run on a machine builds it: about 80 s)."""
    if os.environ.get("BASE_IMAGE"):
        return os.environ["BASE_IMAGE"]
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "build-base-image.sh")],
        env={**os.environ, "DOCKER_HOST": engine.host},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"scripts/build-base-image.sh failed:\n{done.stderr}")
    return done.stdout.strip()
