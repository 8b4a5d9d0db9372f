"""The class archive ``make setup`` builds is one Spark's JVM really maps: a driver started
with ``-Xshare:on`` (fail instead of running without it) runs a query."""

from __future__ import annotations

import subprocess
import sys

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
