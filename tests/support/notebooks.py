"""What an executed notebook says went wrong (shared by the lab tests and the container
tests, which run the same labs inside a lab container)."""

from __future__ import annotations

from nbformat import NotebookNode


def notebook_errors(notebook: NotebookNode) -> list[str]:
    """``cell N: Name: message`` for every error output of an executed notebook."""
    return [
        f"cell {index}: {output['ename']}: {output['evalue']}"
        for index, cell in enumerate(notebook.cells)
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.get("output_type") == "error"
    ]
