"""One SparkSession (local[2]) for the Spark tests that run queries in the test process.

Starting a JVM costs 5-10 s and about half a gigabyte, so the tests of a worker share it
(every query has its own topics and checkpoint); the tests that kill a driver run their
drivers as separate processes. All Spark tests share one xdist worker (group "spark").
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

import kafkalite.spark


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    session = kafkalite.spark.session("kafkalite-tests")
    try:
        yield session
    finally:
        for query in session.streams.active:
            query.stop()
        session.stop()
