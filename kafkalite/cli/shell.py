"""Commands the CLI tells the user to run, written so they work pasted into the shell
that ran it.

``make up`` runs ``.venv/bin/kafkalite``, which is not on the PATH of a shell that did not
activate the virtual environment: a hint saying ``kafkalite down`` failed there with
"command not found". A hint therefore names the program the way this process was started
(``kafkalite`` when that is what the PATH finds, else the path it was run by, relative to
the working directory), and the cluster's folder when it is not the default one.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass

DEFAULT_DIR = ".kafkalite"


@dataclass(frozen=True, slots=True)
class Shell:
    """How to run ``kafkalite`` on one cluster from the user's shell."""

    program: str = "kafkalite"
    cluster_dir: str = DEFAULT_DIR

    def command(self, *words: str) -> str:
        """``kafkalite WORDS`` as the user can paste it: ``.venv/bin/kafkalite start 2``,
        with ``--dir`` when the cluster is not the default one."""
        where = () if self.cluster_dir == DEFAULT_DIR else ("--dir", self.cluster_dir)
        return " ".join([self.program, *(shlex.quote(w) for w in (*words, *where))])

    def rewrite(self, message: str) -> str:
        """A message from below the CLI (``run `kafkalite down --dir X` first``) with the
        program named as this shell can run it."""
        return re.sub(r"`kafkalite ", f"`{self.program} ", message)


def this_program(argv0: str | None = None, executable: str | None = None) -> str:
    """How the user's shell runs this program: ``kafkalite`` if the PATH finds this very
    file under that name; ``python -m kafkalite`` (by the interpreter's path) when run so;
    else the path it was started by, relative to the working directory when inside it."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    if os.path.basename(argv0) == "__main__.py":
        return f"{_as_typed(executable or sys.executable)} -m kafkalite"
    found = shutil.which("kafkalite")
    if found is not None and os.path.samefile(found, argv0):
        return "kafkalite"
    return _as_typed(argv0)


def _as_typed(path: str) -> str:
    """``path`` as a shell command: relative to the working directory when it is inside
    it (``.venv/bin/kafkalite``), else absolute. Symbolic links are kept: the venv's
    ``python`` is one, and resolving it would leave the venv."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute)
    chosen = relative if not relative.startswith("..") else absolute
    return shlex.quote(chosen if "/" in chosen else f"./{chosen}")
