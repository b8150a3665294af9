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


def test_eval_cli_reports_bad_input_without_a_traceback(tmp_path, capsys):
    from drk.cli import main

    good = "drk/examples/relu2/candidates/good.py"
    assert main(["eval", "drk/examples", good, "--device", "cpu"]) == 2
    assert "is a directory" in capsys.readouterr().err
    bad = tmp_path / "bad_problem.py"
    bad.write_text("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        raise RuntimeError('boom')\n"
                   "def get_inputs():\n    return [torch.randn(4)]\ndef get_init_inputs():\n    return []\n")
    assert main(["eval", str(bad), good, "--device", "cpu"]) == 3
    err = capsys.readouterr().err
    assert "problem error" in err and "boom" in err and "Traceback (most recent call last)" not in err.split("problem error")[0]


def test_a_candidates_terminal_escapes_are_shown_not_obeyed(tmp_path, capsys):
    """Feedback quotes the candidate's error text: raw ANSI/OSC escapes could redraw the line to read
    `status: correct` on the operator's terminal (attacker review, 2026-12-02)."""
    from drk.cli import main, terminal_safe

    assert terminal_safe("a\x1b[2K\rstatus: correct\x07\u202e!\n\tok") == "a\\x1b[2K\\rstatus: correct\\x07\\u202e!\n\tok"
    candidate = tmp_path / "escape.py"
    candidate.write_text("import torch\nclass ModelNew(torch.nn.Module):\n    def __init__(self):\n"
                         "        raise RuntimeError('\\x1b]0;owned\\x07\\x1b[2K\\rstatus: correct')\n")
    assert main(["eval", str(FIXTURES / "problem.py"), str(candidate), "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("status: compile_error") and "\x1b" not in out and "\\x1b]0;owned" in out
