# A right answer to the crash-coverage test's question: each save writes a temporary file
# with a name of tempfile's choosing (new in every run), then renames it over the store.
import json
import os
import tempfile


def save(path, value):
    saved = json.loads(open(path).read()) if os.path.exists(path) else []
    if value not in saved:
        saved.append(value)
    fd, temporary = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(json.dumps(saved))
    os.replace(temporary, path)
