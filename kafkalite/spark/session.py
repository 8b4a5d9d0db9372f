"""A SparkSession ready for Kafka-Lite in one call: ``spark = kafkalite.spark.session()``.

What a student would otherwise set by hand, and get wrong: Spark's Python workers must
run the same Python as the notebook (``PYSPARK_PYTHON``, else they lack pyarrow and the
Kafka client; here a script that also starts the streaming-source runner so that it
connects back in time on a busy machine: :mod:`kafkalite.spark.source_runner`), Spark
must bind to loopback (``SPARK_LOCAL_IP``: a lab machine's host name may not resolve),
Java must be found, and the ``kafkalite`` format registered. On a standalone cluster
(``master="spark://..."``) the executors also need this package: it is zipped and
shipped with ``addPyFile`` (what ``spark-submit --py-files`` does), unless the job
already ships it (``spark-submit --py-files kafkalite.zip``, from which the driver then
imports it too).
"""

from __future__ import annotations

import hashlib
import os
import shlex
import sys
import tempfile
import zipfile
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from kafkalite.spark.fork_client import ENV as FORK_SERVER_ENV
from kafkalite.spark.java import find_java_home

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # .../kafkalite
# The module Spark runs to plan a streaming query from a Python source.
RUNNER = "pyspark.sql.streaming.python_streaming_source_runner"

# The driver JVM (with ``local[*]``, also the executor) for lab-sized data on a small
# machine, where its start-up and footprint dominate: a 512 MiB heap instead of 1 GiB; the
# serial collector (G1's concurrent threads and remembered sets cost memory and CPU
# that a small heap does not repay); only the C1 compiler (a driver that is killed and
# restarted in a lab spends its short life compiling, and C2 would compile the same code
# again). ``defaultJavaOptions`` are prepended to ``spark.driver.extraJavaOptions``, so a
# caller's own JVM options add to these (and win where they clash).
JVM_SETTINGS = {
    "spark.driver.memory": "512m",
    "spark.driver.defaultJavaOptions": "-XX:+UseSerialGC -XX:TieredStopAtLevel=1",
}


def kept_directory() -> Path:
    """Where ``kafkalite.spark`` keeps what it builds for this Python installation
    (Spark's class archive, the ``PYSPARK_PYTHON`` script): inside the virtual environment
    (``.venv/kafkalite-spark/``), so that removing it (``make clean``) removes them and
    nothing is left outside the clone; for a Python that is no virtual environment, this
    user's folder in the temporary directory."""
    if sys.prefix != sys.base_prefix:
        return Path(sys.prefix) / "kafkalite-spark"
    return Path(tempfile.gettempdir()) / f"kafkalite-spark-{os.getuid()}"


def scratch_directory() -> Path:
    """Where this user may write what it needs (the ``PYSPARK_PYTHON`` script):
    :func:`kept_directory`, or this user's folder in the temporary directory when that is
    not writable (a sandboxed grader runs as a user of its own)."""
    kept = kept_directory()
    writable = kept if kept.exists() else kept.parent
    if os.access(writable, os.W_OK):
        return kept
    return Path(tempfile.gettempdir()) / f"kafkalite-spark-{os.getuid()}"


def spark_python(python: str = sys.executable, *options: str) -> Path:
    """The ``PYSPARK_PYTHON`` script for ``python`` (with ``options``): the early-connecting
    :mod:`kafkalite.spark.source_runner` for Spark's streaming-source runner (this package
    is put on its path: a Python started by Spark need not find it by itself); when
    ``$KAFKALITE_SPARK_FORK_SERVER`` names a fork server, that runner and Spark's daemons
    (every ``-m MODULE``) become forks of it (:mod:`kafkalite.spark.fork_client`);
    ``python`` itself for anything else. Written once per command, to
    :func:`scratch_directory`, readable by all (a sandboxed grader runs it as another
    user)."""
    command = shlex.join([python, *options])
    client = shlex.quote(str(PACKAGE_ROOT / "spark" / "fork_client.py"))
    root = shlex.quote(str(PACKAGE_ROOT.parent))
    script = (
        "#!/bin/sh\n"
        "# PYSPARK_PYTHON of kafkalite.spark: see kafkalite/spark/source_runner.py and\n"
        "# kafkalite/spark/fork_server.py\n"
        f'if [ "$1" = "-m" ] && [ "$2" = "{RUNNER}" ]; then\n'
        f"  export PYTHONPATH={root}${{PYTHONPATH:+:$PYTHONPATH}}\n"
        "  set -- -m kafkalite.spark.source_runner\n"
        "fi\n"
        f'if [ -n "${FORK_SERVER_ENV}" ] && [ "$1" = "-m" ]; then\n'
        f'  exec {shlex.quote(python)} -I -S {client} {command} "$@"\n'
        "fi\n"
        f'exec {command} "$@"\n'
    )
    digest = hashlib.sha256(script.encode()).hexdigest()[:12]
    directory = scratch_directory()
    target = directory / f"python-{digest}"
    if not target.exists():
        directory.mkdir(mode=0o755, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=directory, prefix=".python-")
        with os.fdopen(fd, "w") as file:
            file.write(script)
        os.chmod(temporary, 0o755)
        os.replace(temporary, target)
    return target


# A streaming query writes two checkpoint files per micro-batch (its offsets, then its
# commit). Spark's default manager goes through Hadoop's FileContext, which resolves
# symbolic links on every rename; without Hadoop's native library (pip's pyspark has none)
# each resolution runs a ``readlink`` process (``strace``: 64 in 6 s of a query writing
# about a batch a second), ~130 ms of a small batch's ~520 ms on the two-core machine.
# The FileSystem-based manager renames with ``File.renameTo`` (atomic on a local disk);
# Spark uses it wherever FileContext is missing.
CHECKPOINT_FILE_MANAGER = (
    "org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager"
)


def jvm_settings() -> dict[str, str]:
    """:data:`JVM_SETTINGS`, and the class archive for them if one was built
    (:mod:`kafkalite.spark.class_archive`; call after :func:`prepare_environment`)."""
    from kafkalite.spark.class_archive import java_options  # noqa: PLC0415 (imports pyspark)

    options = JVM_SETTINGS["spark.driver.defaultJavaOptions"]
    archive = java_options(Path(os.environ["JAVA_HOME"]), options)
    return {**JVM_SETTINGS, "spark.driver.defaultJavaOptions": f"{options} {archive}".strip()}


def prepare_environment(master: str = "local[2]") -> None:
    """Set what Spark reads from the environment when it starts its JVM and workers
    (values a user already set are kept). The early-connecting runner script is for a
    ``local`` master only: a cluster's executors run ``PYSPARK_PYTHON`` too, on machines
    (or containers) where the script, written to this machine's temporary directory,
    does not exist. So is the fork server (:mod:`kafkalite.spark.fork_server`), started
    here so that it imports pyspark and pyarrow while the JVM starts (an empty
    ``KAFKALITE_SPARK_FORK_SERVER`` turns it off: each daemon then starts Python)."""
    script = str(spark_python()) if PACKAGE_ROOT.is_dir() else None  # not from a zip
    local = master.startswith("local") and script is not None
    os.environ.setdefault("PYSPARK_PYTHON", script if local and script else sys.executable)
    if local and os.environ["PYSPARK_PYTHON"] == script:
        from kafkalite.spark import fork_server  # noqa: PLC0415 (a module run as __main__)

        if FORK_SERVER_ENV not in os.environ:  # set (empty: off) by the caller: none here
            os.environ[FORK_SERVER_ENV] = fork_server.start()
    # The driver's JVM runs Python too (on this machine whatever the master): once per
    # session, a daemon that looks for installed data sources, before the first
    # ``format("kafkalite")`` (2-3 s when it starts a Python of its own).
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", script or sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("JAVA_HOME", str(find_java_home()))


def package_zip(directory: Path | None = None) -> Path:
    """The ``kafkalite`` package as a zip for ``--py-files``/``addPyFile`` (Python
    sources only; executors import ``kafkalite.spark`` from it)."""
    sources = sorted(PACKAGE_ROOT.rglob("*.py")) if PACKAGE_ROOT.is_dir() else []
    if not sources:  # e.g. imported from a shipped zip: an empty zip would fail later
        raise FileNotFoundError(f"kafkalite.spark: no package sources to zip in {PACKAGE_ROOT}")
    directory = directory or Path(tempfile.mkdtemp(prefix="kafkalite-pyfiles-"))
    target = directory / "kafkalite.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sources:
            archive.write(path, path.relative_to(PACKAGE_ROOT.parent).as_posix())
    return target


@cache
def _process_zip() -> Path:
    """One zip per process: Spark refuses a second ``kafkalite.zip`` from another path
    (``session()`` called again returns the same context)."""
    return package_zip()


def ship_package(spark: SparkSession) -> None:
    """Send the package to a cluster's executors, unless the job ships it already: the
    driver then imports it from that zip (``--py-files`` come first on its path)."""
    submitted = spark.sparkContext.getConf().get("spark.submit.pyFiles") or ""
    if not PACKAGE_ROOT.is_dir() or "kafkalite.zip" in (Path(f).name for f in submitted.split(",")):
        return
    spark.sparkContext.addPyFile(str(_process_zip()))


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
    run 200 tasks), checkpoint files written without a process per file
    (:data:`CHECKPOINT_FILE_MANAGER`) and no web UI unless asked for; ``config`` adds any
    Spark setting (and wins over these and :func:`jvm_settings`).
    """
    master = master or os.environ.get("KAFKALITE_SPARK_MASTER", "local[2]")
    prepare_environment(master)
    from pyspark.sql import SparkSession  # noqa: PLC0415 (the JVM starts here)

    builder = (
        SparkSession.builder.appName(app_name)
        .master(master)
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.ui.enabled", str(ui).lower())
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.streaming.checkpointFileManagerClass", CHECKPOINT_FILE_MANAGER)
    )
    for key, value in {**jvm_settings(), **(config or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    if master.startswith("spark://"):
        ship_package(spark)
    register(spark)
    return spark
