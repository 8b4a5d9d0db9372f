"""Which class-data sharing archive a Spark JVM maps: one per Java, Spark and JVM options,
and none (Spark starts as before) until it was built."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from kafkalite.spark.class_archive import archive_key, archive_path, java_options, remove_stale
from kafkalite.spark.java import find_java_home

pytestmark = pytest.mark.unit


def test_the_archive_is_named_for_the_java_and_the_options(tmp_path: Path) -> None:
    java = find_java_home()
    serial = archive_path(java, "-XX:+UseSerialGC", tmp_path)
    assert serial == archive_path(java, "-XX:+UseSerialGC", tmp_path)
    assert serial != archive_path(java, "-XX:+UseG1GC", tmp_path)
    assert serial.parent == tmp_path and serial.suffix == ".jsa"


def test_only_a_built_archive_is_mapped(tmp_path: Path) -> None:
    java = find_java_home()
    assert java_options(java, "-XX:+UseSerialGC", tmp_path) == ""
    archive = archive_path(java, "-XX:+UseSerialGC", tmp_path)
    archive.write_bytes(b"built")
    option = java_options(java, "-XX:+UseSerialGC", tmp_path)
    assert f"-XX:SharedArchiveFile={archive}" in option and "-Xshare:auto" in option


def fake_spark(home: Path) -> Path:
    (home / "jars").mkdir(parents=True)
    (home / "jars" / "slf4j-api.jar").write_bytes(b"jar")
    return home


def test_a_reinstalled_jar_names_another_archive(tmp_path: Path) -> None:
    """The JVM refuses an archive whose jars changed size or time (a new virtual
    environment at the same path): such an archive must not be found any more."""
    java, spark = find_java_home(), fake_spark(tmp_path / "pyspark")
    before = archive_key(java, "-XX:+UseSerialGC", spark)
    jar = spark / "jars" / "slf4j-api.jar"
    os.utime(jar, ns=(jar.stat().st_atime_ns, jar.stat().st_mtime_ns + 1_000_000_000))
    assert archive_key(java, "-XX:+UseSerialGC", spark) != before


def built(directory: Path, java: Path, spark: Path) -> Path:
    archive = directory / f"spark-classes-{archive_key(java, '', spark)}.jsa"
    archive.write_bytes(b"built")
    inputs = {"java_home": str(java), "jvm_options": "", "spark_home": str(spark)}
    archive.with_suffix(".json").write_text(json.dumps(inputs))
    return archive


def test_only_archives_nothing_can_map_are_removed(tmp_path: Path) -> None:
    java = find_java_home()
    archives = tmp_path / "archives"
    archives.mkdir()
    intact = built(archives, java, fake_spark(tmp_path / "intact"))
    upgraded = built(archives, java, fake_spark(tmp_path / "upgraded"))
    (tmp_path / "upgraded" / "jars" / "slf4j-api.jar").write_bytes(b"a newer jar")
    gone = built(archives, java, fake_spark(tmp_path / "gone"))
    shutil.rmtree(tmp_path / "gone")
    older_kafkalite = archives / "spark-classes-0123456789abcdef.jsa"
    older_kafkalite.write_bytes(b"built without its inputs")

    assert set(remove_stale(archives)) == {upgraded, gone, older_kafkalite}
    assert sorted(p.name for p in archives.iterdir()) == sorted(
        [intact.name, intact.with_suffix(".json").name]
    )


def test_the_archive_is_kept_in_the_virtual_environment() -> None:
    """``make clean`` removes the venv, and with it what kafkalite.spark built for it."""
    if sys.prefix == sys.base_prefix:
        pytest.skip("not run from a virtual environment")
    archive = archive_path(find_java_home(), "-XX:+UseSerialGC")
    assert archive.parent == Path(sys.prefix) / "kafkalite-spark"
