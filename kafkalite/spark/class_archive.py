"""Class-data sharing for Spark's JVM: Spark's classes loaded, parsed and verified once,
then mapped from a file by every later start.

A driver JVM loads several thousand classes from Spark's jars before its first query, and
on a busy two-core lab machine this is most of a SparkSession's start (and so of a
killed driver's restart). Java 13+ can write the classes a run loaded into a *dynamic
class-data sharing archive* when that run exits (``-XX:ArchiveClassesAtExit``) and map
it at later starts (``-XX:SharedArchiveFile``). Measured at load ~100 on the two-core
machine: SparkSession 6.4 s with the archive against 9-19 s without, and the first query
2 s against 4-7 s.

``python -m kafkalite.spark.class_archive`` builds the archive with a JVM that starts a
session, runs a batch and a streaming query, and exits (~30 s; ``make test`` runs it
first). ``--background`` starts that build detached and at the lowest priority, and
returns at once: ``make up`` does so once the lab is up, so a fresh clone's lab is usable
without waiting for it, and Spark starts without the archive until it is there. One build
runs at a time (a lock in the archive's folder); a second one waits, then finds it built.
The archive lives in the virtual environment (``session.kept_directory``).
:func:`java_options` gives ``session()`` the option to use it. An archive is only valid
for the Java and the Spark jars it was written with (the JVM checks each jar's size and
modification time) and the JVM options, so its name carries a digest of all these: after
an upgrade, or pyspark reinstalled in a new virtual environment at the same path, it is
simply not found, and Spark starts as before (``-Xshare:auto``: a JVM that cannot map an
archive runs without it). Building one removes the archives nothing can map any more.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from kafkalite.spark.java import find_java_home
from kafkalite.spark.session import JVM_SETTINGS, kept_directory, prepare_environment, session

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# What the building JVM runs (:func:`_exercise_and_print_jvm_pid`): part of the key, so
# that a changed exercise builds a new archive where an older one exists.
EXERCISE = 2
JVM_EXIT_S = 300.0  # the JVM writes the archive (~150 MB) after its Python driver ended
# Classes CDS cannot keep (from signed jars, generated ones) are each one warning line.
QUIET = "-Xlog:cds*=off"
LOCK = "build.lock"


def _spark_home() -> Path:
    """pyspark's folder (its jars), found without importing it (a second of CPU)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("kafkalite.spark needs pyspark (`make setup` installs it)")
    return Path(spec.origin).parent


def _file_id(path: Path) -> str:
    """What the JVM checks of a file its archive was built from: the same size and
    modification time (a reinstalled pyspark at the same path has new ones)."""
    stat = path.stat()
    return f"{path.name} {stat.st_size} {stat.st_mtime_ns}"


def archive_key(java_home: Path, jvm_options: str, spark_home: Path) -> str:
    """The name of the archive these inputs give: a digest of the Java binary, the JVM
    options, the path, size and time of each Spark jar and the :data:`EXERCISE`, so an
    archive is found only while every one of them is as it was when it was written."""
    java = (java_home / "bin" / "java").resolve()
    jars = sorted((spark_home / "jars").glob("*.jar"))
    inputs = [str(java), _file_id(java), jvm_options, str(spark_home), *map(_file_id, jars)]
    inputs.append(f"exercise {EXERCISE}")
    return hashlib.sha256("\n".join(inputs).encode()).hexdigest()[:16]


def archive_path(java_home: Path, jvm_options: str, directory: Path | None = None) -> Path:
    """Where the archive for this Java, these Spark jars and these JVM options is."""
    digest = archive_key(java_home, jvm_options, _spark_home())
    return (directory or kept_directory()) / f"spark-classes-{digest}.jsa"


def java_options(java_home: Path, jvm_options: str, directory: Path | None = None) -> str:
    """The option that maps the archive, if one was built for this JVM (else nothing)."""
    archive = archive_path(java_home, jvm_options, directory)
    return f"-XX:SharedArchiveFile={archive} -Xshare:auto {QUIET}" if archive.is_file() else ""


def _inputs_file(archive: Path) -> Path:
    return archive.with_suffix(".json")


def remove_stale(directory: Path) -> list[Path]:
    """Delete the archives (~150 MB each) no JVM can map any more: their Java or Spark
    was removed, reinstalled or upgraded (each archive's ``.json`` names its inputs; one
    without it is from an older Kafka-Lite). Archives of other, intact installations are
    kept. Returns what was removed."""
    removed = []
    for archive in sorted(directory.glob("spark-classes-*.jsa")):
        inputs_file = _inputs_file(archive)
        try:
            inputs = json.loads(inputs_file.read_text())
            intact = archive.stem == "spark-classes-" + archive_key(
                Path(inputs["java_home"]), inputs["jvm_options"], Path(inputs["spark_home"])
            )
        except (OSError, ValueError, KeyError, TypeError):
            intact = False
        if not intact:
            archive.unlink(missing_ok=True)
            inputs_file.unlink(missing_ok=True)
            removed.append(archive)
    return removed


def stream_batches(spark: SparkSession, source: str, sink: str, batches: int) -> None:
    """Run a streaming query from ``format(source)`` to ``format(sink)`` for ``batches``
    micro-batches (at most two minutes), with a checkpoint of its own."""
    with tempfile.TemporaryDirectory(prefix="kafkalite-class-archive-") as checkpoint:
        writer = spark.readStream.format(source).load().writeStream.format(sink)
        stream = writer.option("checkpointLocation", checkpoint).start()
        deadline = time.monotonic() + 120
        while len(stream.recentProgress) < batches and time.monotonic() < deadline:
            time.sleep(0.2)
        stream.stop()


def _exercise_and_print_jvm_pid(dump_to: str) -> None:
    """In the building process: the session whose JVM writes the archive at its exit."""
    from kafkalite.spark.class_archive_source import CountingSource  # noqa: PLC0415

    spark = session("class-archive", config={"spark.driver.extraJavaOptions": dump_to})
    spark.range(1000).selectExpr("sum(id)").collect()
    spark.dataSource.register(CountingSource)
    stream_batches(spark, "rate", "noop", 1)
    stream_batches(spark, CountingSource.name(), CountingSource.name(), 3)
    print(spark.sparkContext._gateway.proc.pid, flush=True)  # type: ignore[union-attr]
    spark.stop()


def build(timeout_s: float = 600) -> Path:
    """Build the archive for ``session()``'s JVM (a no-op if it exists) and return it."""
    prepare_environment()
    options = JVM_SETTINGS["spark.driver.defaultJavaOptions"]
    java_home = Path(os.environ["JAVA_HOME"])
    target = archive_path(java_home, options)
    target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
    with (target.parent / LOCK).open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # held until this build ends; another one waits
        remove_stale(target.parent)
        if not target.is_file():
            _build(target, java_home, options, timeout_s)
    return target


def _build(target: Path, java_home: Path, options: str, timeout_s: float) -> None:
    """Run the exercising JVM, wait for it to write the archive at its exit, and put the
    archive in place (written aside first, so no JVM maps a half-written one)."""
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
    inputs = {"java_home": str(java_home), "jvm_options": options, "spark_home": str(_spark_home())}
    _inputs_file(target).write_text(json.dumps(inputs))
    os.replace(partial, target)


def start_in_background() -> str | None:
    """Start a detached, lowest-priority build unless the archive is there; return what
    to tell the user (None when there is nothing to say)."""
    java_home = Path(os.environ.get("JAVA_HOME") or find_java_home())
    target = archive_path(java_home, JVM_SETTINGS["spark.driver.defaultJavaOptions"])
    if target.is_file():
        return None
    target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
    log = target.parent / "build.log"
    with log.open("ab") as out:
        subprocess.Popen(
            ["nice", "-n", "19", sys.executable, "-m", "kafkalite.spark.class_archive"],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    return (
        "Spark's class archive is being built in the background (~30 s of CPU, once; "
        f"Spark starts without it until then; log: {os.path.relpath(log)})"
    )


def _alive(pid: int) -> bool:
    """Running (an exited JVM whose parent is gone may stay a zombie for a while)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def main(argv: list[str]) -> int:
    if argv[:1] == ["--background"]:
        said = start_in_background()
        if said:
            print(said)
        return 0
    if argv[:1] == ["--dump-to"]:
        _exercise_and_print_jvm_pid(f"-XX:ArchiveClassesAtExit={argv[1]} {QUIET}")
        return 0
    started = time.monotonic()
    print(f"kafkalite: Spark class archive {build()} ({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
