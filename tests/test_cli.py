import json
import os
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).parent.parent / "drk" / "examples" / "relu2"


def test_drk_eval_json_via_python_m():
    # The caller's environment does not choose the interpreter: the sandbox child does, per device.
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run(
        [sys.executable, "-m", "drk", "eval", str(FIXTURES / "problem.py"), str(FIXTURES / "candidates" / "decoy.py"),
         "--device", "cpu", "--json"],
        capture_output=True, text=True, timeout=300, check=True, env=env,
    )
    result = json.loads(out.stdout)
    assert result["status"] == "hacked" and "decoy" in result["hack_reasons"]


def test_drk_eval_matmul_with_triton_library_functions():
    from drk.cli import main

    root = FIXTURES.parent / "matmul"
    assert main(["eval", str(root / "problem.py"), str(root / "candidates" / "good.py"), "--device", "cpu"]) == 0


def test_drk_eval_text_and_bad_path():
    from drk.cli import main

    assert main(["eval", "/nonexistent.py", str(FIXTURES / "candidates" / "good.py"), "--device", "cpu"]) == 2
