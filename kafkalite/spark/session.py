"""A SparkSession ready for Kafka-Lite in one call: ``spark = kafkalite.spark.session()``.

What a student would otherwise set by hand, and get wrong: Spark's Python workers must
run the same Python as the notebook (``PYSPARK_PYTHON``, else they lack pyarrow and the
Kafka client), Spark must bind to loopback (``SPARK_LOCAL_IP``: a lab machine's host name
may not resolve), Java must be found, and the ``kafkalite`` format registered. On a
standalone cluster (``master="spark://..."``) the executors also need this package: it is
zipped and shipped with ``addPyFile`` (what ``spark-submit --py-files`` does).
"""

from __future__ import annotations

import os
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from kafkalite.spark.java import find_java_home

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # .../kafkalite


def prepare_environment() -> None:
    """Set what Spark reads from the environment when it starts its JVM and workers
    (values a user already set are kept)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("JAVA_HOME", str(find_java_home()))


def package_zip(directory: Path | None = None) -> Path:
    """The ``kafkalite`` package as a zip for ``--py-files``/``addPyFile`` (Python
    sources only; executors import ``kafkalite.spark`` from it)."""
    directory = directory or Path(tempfile.mkdtemp(prefix="kafkalite-pyfiles-"))
    target = directory / "kafkalite.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(PACKAGE_ROOT.rglob("*.py")):
            archive.write(path, path.relative_to(PACKAGE_ROOT.parent).as_posix())
    return target


def register(spark: SparkSession) -> None:
    """Make ``format("kafkalite")`` known to this session (e.g. one from spark-submit)."""
    from kafkalite.spark.data_source import KafkaLiteDataSource  # noqa: PLC0415

    spark.dataSource.register(KafkaLiteDataSource)


def session(
    app_name: str = "kafkalite",
    master: str | None = None,
    *,
    shuffle_partitions: int = 2,
    ui: bool = False,
    config: dict[str, str] | None = None,
) -> SparkSession:
    """A SparkSession (``local[2]`` unless ``master`` or ``$KAFKALITE_SPARK_MASTER`` says
    otherwise) with the ``kafkalite`` format registered.

    Few shuffle partitions (Spark's default of 200 makes every micro-batch of a small lab
    run 200 tasks) and no web UI unless asked for; ``config`` adds any Spark setting.
    """
    prepare_environment()
    from pyspark.sql import SparkSession  # noqa: PLC0415 (the JVM starts here)

    master = master or os.environ.get("KAFKALITE_SPARK_MASTER", "local[2]")
    builder = (
        SparkSession.builder.appName(app_name)
        .master(master)
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.ui.enabled", str(ui).lower())
        .config("spark.ui.showConsoleProgress", "false")
    )
    for key, value in (config or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    if master.startswith("spark://"):
        spark.sparkContext.addPyFile(str(package_zip()))
    register(spark)
    return spark
