"""The class archive ``make setup`` builds is one Spark's JVM really maps: a driver started
with ``-Xshare:on`` (fail instead of running without it) runs a query."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kafkalite.spark.class_archive import build

pytestmark = pytest.mark.spark

DRIVER = """
import kafkalite.spark
spark = kafkalite.spark.session("archive", config={"spark.driver.extraJavaOptions": "-Xshare:on"})
print("sum", spark.range(100).selectExpr("sum(id)").collect()[0][0])
runtime = spark._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
for argument in runtime.getInputArguments():
    print(argument)
spark.stop()
"""


def test_a_spark_jvm_maps_the_built_archive() -> None:
    archive = build()
    run = subprocess.run(
        [sys.executable, "-c", DRIVER], capture_output=True, text=True, timeout=300, check=False
    )
    assert run.returncode == 0 and "sum 4950" in run.stdout, run.stderr[-3000:]
    assert f"-XX:SharedArchiveFile={archive}" in run.stdout.splitlines()


STREAM = """
import sys
import kafkalite.spark
from kafkalite.spark.class_archive import stream_batches
from kafkalite.spark.class_archive_source import CountingSource
log = "-Xshare:on -Xlog:class+load=info:file=" + sys.argv[1]
spark = kafkalite.spark.session("archive-stream", config={"spark.driver.extraJavaOptions": log})
spark.dataSource.register(CountingSource)
stream_batches(spark, CountingSource.name(), CountingSource.name(), 1)
spark.stop()
"""


def test_a_python_streaming_source_and_sink_run_from_the_archive(tmp_path: Path) -> None:
    """A restarted pipeline's first micro-batch runs Spark's JVM side of a Python stream
    (its planning, Arrow vectors, the stream write): those classes come from the archive,
    not from the jars."""
    build()
    log = tmp_path / "classes.log"
    run = subprocess.run(
        [sys.executable, "-c", STREAM, str(log)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    sources = {}
    for line in log.read_text().splitlines():
        name, _, source = line.partition(" source: ")
        sources[name.rsplit(" ", 1)[-1]] = source
    python = "org.apache.spark.sql.execution.datasources.v2.python."
    for name in (
        python + "PythonMicroBatchStreamWithTriggerAvailableNow",
        python + "PythonStreamingWrite",
        "org.apache.arrow.vector.VarBinaryVector",
    ):
        assert sources.get(name, "").startswith("shared objects file"), (name, sources.get(name))
