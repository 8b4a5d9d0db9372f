"""Small text files replaced atomically: write a temp file, fsync, rename, fsync the dir.

A crash leaves either the old file or the new one, never half of each. A file that is only
a hint, safe to lose (a recovery point: an older one only means more recovery), is
written ``durable=False``: renamed without the two fsyncs, which cost milliseconds.
"""

from __future__ import annotations

import os
from pathlib import Path

from kafkalite.disk import DISK


def write_atomically(path: Path, text: str, *, durable: bool = True) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w") as f:
        f.write(text)
        if durable:
            f.flush()
            os.fsync(f.fileno())
    os.replace(tmp, path)
    if durable:
        DISK.fsync_dir(path.parent)
