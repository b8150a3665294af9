"""Notebooks 04 and 05: structure only (executing them is `python -m drk.reproduce --quick`'s job)."""

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


@pytest.mark.parametrize("name", ["04_evaluation_and_tts.ipynb", "05_figures_and_tables.ipynb"])
def test_notebook_structure(name):
    nb = json.loads((NOTEBOOKS / name).read_text())
    assert nb["nbformat"] == 4
    assert nb["metadata"]["kernelspec"] == {"name": "python3", "display_name": "Python 3", "language": "python"}
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert "parameters" in code[0]["metadata"].get("tags", [])
    assert re.search(r"^out_dir = ", "".join(code[0]["source"]), re.M)  # every notebook writes somewhere
    assert any(c["cell_type"] == "markdown" for c in nb["cells"])
    for cell in code:
        source = "".join(cell["source"])
        assert not re.search(r"^\s*def ", source, re.M) and "/work/" not in source
        assert cell.get("outputs", []) == [] and cell.get("execution_count") is None
