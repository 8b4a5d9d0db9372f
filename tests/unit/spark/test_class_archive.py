"""Which class-data sharing archive a Spark JVM maps: one per Java, Spark and JVM options,
and none (Spark starts as before) until it was built."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalite.spark.class_archive import archive_path, java_options
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
