"""Extraction keeps what exercises need and nothing that acts on a cluster."""

from __future__ import annotations

import json

import pytest

from grader.extract import extract, from_cells, from_notebook

pytestmark = [pytest.mark.grader, pytest.mark.unit]


def _notebook(*sources: str) -> dict[str, object]:
    return {"cells": [{"cell_type": "code", "source": s} for s in sources]}


def test_definitions_imports_and_literal_constants_are_kept_actions_are_not():
    extracted = from_notebook(
        _notebook(
            "import kafkalite.lab\nlab = kafkalite.lab.connect()\nTOPIC = 'orders'",
            "%matplotlib inline\n@staticmethod\ndef produce(producer, n):\n    return n",
            "lab.kill(lab.leader(TOPIC, 0))\nfor i in range(3):\n    print(i)",
            "class Store:\n    pass\ngrader.check('q1')",
        )
    )
    assert extracted.problems == []
    namespace: dict[str, object] = {}
    exec(compile(extracted.source.replace("import kafkalite.lab", ""), "m", "exec"), namespace)
    assert namespace["TOPIC"] == "orders"
    assert "produce" in namespace and "Store" in namespace
    assert "lab" not in namespace
    assert "@staticmethod" in extracted.source  # decorators stay with their function
    assert "print" not in extracted.source and "check" not in extracted.source


def test_a_cell_with_a_syntax_error_is_skipped_and_named():
    extracted = from_notebook(_notebook("def ok():\n    return 1", "def broken(:\n    pass"))
    assert "def ok" in extracted.source
    assert extracted.problems == ["cell 2 has a syntax error (line 1: invalid syntax); skipped"]


def test_markdown_cells_and_list_sources_are_handled():
    notebook = {
        "cells": [
            {"cell_type": "markdown", "source": ["def not_code():\n", "    pass"]},
            {"cell_type": "code", "source": ["def f():\n", "    return 2\n"]},
        ]
    }
    extracted = from_notebook(notebook)
    assert "not_code" not in extracted.source and "def f" in extracted.source


def test_files_that_are_not_notebooks_or_text_give_one_line(tmp_path):
    bad_json = tmp_path / "sub.ipynb"
    bad_json.write_text("{not json")
    assert extract(bad_json).problems[0].startswith("sub.ipynb is not a readable notebook")
    binary = tmp_path / "sub.py"
    binary.write_bytes(b"\xff\xfe\x00")
    assert extract(binary).problems[0].startswith("sub.py is not UTF-8 text")
    empty = tmp_path / "empty.ipynb"
    empty.write_text(json.dumps({"metadata": {}}))
    assert extract(empty).problems == ["the notebook has no cells"]


def test_a_script_is_one_cell():
    extracted = from_cells([("the file", "import os\nX = [1, 2]\nos.system('rm -rf /')\n")])
    assert extracted.source == "import os\n\nX = [1, 2]\n"
