"""Notebook 03: its structure, and (slow) a papermill run with the default CPU parameters."""

import json
import re
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "03_rl_training.ipynb"


def test_notebook_structure():
    nb = json.loads(NOTEBOOK.read_text())
    assert nb["nbformat"] == 4 and nb["metadata"]["kernelspec"]["name"] == "python3"
    assert nb["metadata"]["language_info"] == {"name": "python"}
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert "parameters" in code[0]["metadata"].get("tags", [])
    params = "".join(code[0]["source"])
    for name in ("model_id", "lora", "estimator", "turns", "steps", "problems", "device", "out_dir", "quick"):
        assert re.search(rf"^{name} = ", params, re.M), name
    for cell in code:
        source = "".join(cell["source"])
        assert not re.search(r"^\s*def ", source, re.M) and "/work/" not in source
        assert cell["outputs"] == [] and cell["execution_count"] is None


@pytest.mark.slow
def test_notebook_runs_with_papermill(tmp_path):
    papermill = pytest.importorskip("papermill")
    papermill.execute_notebook(str(NOTEBOOK), str(tmp_path / "out.ipynb"), parameters={"out_dir": str(tmp_path)},
                               kernel_name="python3", cwd=str(NOTEBOOK.parents[1]), progress_bar=False)
    run = tmp_path / "train" / "trloo"
    assert (run / "checkpoint-final" / "drk_config.json").is_file()
    assert len((run / "log.jsonl").read_text().splitlines()) >= 2
