"""Class-data sharing for Spark's JVM: Spark's classes loaded, parsed and verified once,
then mapped from a file by every later start.

A driver JVM loads several thousand classes from Spark's jars before its first query, and
on a busy two-core lab machine this is most of a SparkSession's start (and so of a
killed driver's restart). Java 13+ can write the classes a run loaded into a *dynamic
class-data sharing archive* when that run exits (``-XX:ArchiveClassesAtExit``) and map
it at later starts (``-XX:SharedArchiveFile``). Measured at load ~100 on the two-core
machine: SparkSession 6.4 s with the archive against 9-19 s without, and the first query
2 s against 4-7 s.

``python -m kafkalite.spark.class_archive`` (``make setup`` runs it) builds the archive
with a JVM that starts a session, runs a batch and a streaming query, and exits.
:func:`java_options` gives ``session()`` the option to use it. An archive is only valid
for the Java and the Spark jars it was written with (and the JVM options), so its name
carries a digest of these: after an upgrade it is simply not found, and Spark starts as
before (``-Xshare:auto``: a JVM that cannot map an archive runs without it).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

JVM_EXIT_S = 300.0  # the JVM writes the archive (~150 MB) after its Python driver ended
# Classes CDS cannot keep (from signed jars, generated ones) are each one warning line.
QUIET = "-Xlog:cds*=off"


def _spark_home() -> Path:
    import pyspark  # noqa: PLC0415 (only to find its jars)

    return Path(pyspark.__file__).parent


def archive_path(java_home: Path, jvm_options: str, directory: Path | None = None) -> Path:
    """Where the archive for this Java, these Spark jars and these JVM options is."""
    java = (java_home / "bin" / "java").resolve()
    jars = sorted(p.name for p in (_spark_home() / "jars").glob("*.jar"))
    stat = java.stat()
    spark = str(_spark_home())  # the class path the archive is checked against
    java_id = [str(java), str(stat.st_size), str(stat.st_mtime_ns)]
    key = "\n".join([*java_id, jvm_options, spark, *jars])
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    directory = directory or Path(tempfile.gettempdir()) / f"kafkalite-spark-{os.getuid()}"
    return directory / f"spark-classes-{digest}.jsa"


def java_options(java_home: Path, jvm_options: str, directory: Path | None = None) -> str:
    """The option that maps the archive, if one was built for this JVM (else nothing)."""
    archive = archive_path(java_home, jvm_options, directory)
    return f"-XX:SharedArchiveFile={archive} -Xshare:auto {QUIET}" if archive.is_file() else ""


def _exercise_and_print_jvm_pid(dump_to: str) -> None:
    """In the building process: the session whose JVM writes the archive at its exit."""
    from kafkalite.spark.session import session  # noqa: PLC0415

    spark = session("class-archive", config={"spark.driver.extraJavaOptions": dump_to})
    spark.range(1000).selectExpr("sum(id)").collect()
    stream = spark.readStream.format("rate").load().writeStream.format("noop").start()
    deadline = time.monotonic() + 120
    while stream.lastProgress is None and time.monotonic() < deadline:
        time.sleep(0.2)
    stream.stop()
    print(spark.sparkContext._gateway.proc.pid, flush=True)  # type: ignore[union-attr]
    spark.stop()


def build(timeout_s: float = 600) -> Path:
    """Build the archive for ``session()``'s JVM (a no-op if it exists) and return it."""
    from kafkalite.spark.session import JVM_SETTINGS, prepare_environment  # noqa: PLC0415

    prepare_environment()
    options = JVM_SETTINGS["spark.driver.defaultJavaOptions"]
    target = archive_path(Path(os.environ["JAVA_HOME"]), options)
    if target.is_file():
        return target
    target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}")
    command = [sys.executable, "-m", "kafkalite.spark.class_archive", "--dump-to", str(partial)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, check=False)
    pids = [int(line) for line in done.stdout.split() if line.isdigit()]
    if done.returncode != 0 or not pids:
        raise RuntimeError(
            f"kafkalite: building Spark's class archive failed: {done.stderr[-999:]}"
        )
    deadline = time.monotonic() + JVM_EXIT_S
    while _alive(pids[-1]):  # the archive is complete only once its JVM has exited
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"kafkalite: Spark's JVM {pids[-1]} did not exit to write an archive"
            )
        time.sleep(0.2)
    if not partial.is_file():
        raise RuntimeError(f"kafkalite: Spark's JVM wrote no class archive: {done.stderr[-2000:]}")
    os.replace(partial, target)
    return target


def _alive(pid: int) -> bool:
    """Running (an exited JVM whose parent is gone may stay a zombie for a while)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def main(argv: list[str]) -> int:
    if argv[:1] == ["--dump-to"]:
        _exercise_and_print_jvm_pid(f"-XX:ArchiveClassesAtExit={argv[1]} {QUIET}")
        return 0
    started = time.monotonic()
    print(f"kafkalite: Spark class archive {build()} ({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
