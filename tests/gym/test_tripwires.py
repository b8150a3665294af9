"""Tripwires must not change what introspection returns to torch's own callers."""

import subprocess
import sys

SCRIPT = r'''
import inspect, sys
from drk.gym.hacking import Tripwires
wires = Tripwires(candidate_file="/nonexistent/candidate.py")
wires.install()
candidate_code = """
import torch
try:
    torch.cuda.Stream()
except Exception:
    pass  # no GPU here: the attempt is what counts
lib = torch.library.Library("aten", "IMPL")
"""
exec(compile(candidate_code, "/nonexistent/candidate.py", "exec"), {})
assert wires.side_stream and wires.reasons() == ["tamper"], wires.hits

def who_am_i():
    return inspect.currentframe().f_code.co_name, sys._getframe().f_code.co_name, sys._getframe(1).f_code.co_name, inspect.stack()[0].function

assert who_am_i() == ("who_am_i", "who_am_i", "<module>", "who_am_i"), who_am_i()
import torch._dynamo  # torch.fx.wrap checks its caller's frame is a module
import torch.profiler
print("ok")
'''


def test_tripwires_keep_frame_semantics():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("ok")


SNAPSHOT_SCRIPT = r'''
import sys
import torch
import drk.gym.judge  # what the judge server preloads
assert "triton" not in sys.modules and "torch._dynamo" not in sys.modules  # chosen per child, not preloaded
from drk.gym.hacking import LaunchRecorder, TrustSnapshot, Tripwires
LaunchRecorder(candidate_file="/nonexistent/candidate.py").install()
Tripwires(candidate_file="/nonexistent/candidate.py").install()
snapshot = TrustSnapshot()
from torch.profiler import ProfilerActivity, profile
with profile(activities=[ProfilerActivity.CPU]):
    torch.randn(8) @ torch.randn(8)
import torch._dynamo  # re-wraps torch.manual_seed with torch's own wrapper: not tampering
assert snapshot.changes() == [], snapshot.changes()
import functools
original = torch.random.manual_seed
torch.manual_seed = functools.wraps(original)(lambda seed: None)  # looks like the original, is not
assert snapshot.changes() == ["torch.manual_seed"], snapshot.changes()
torch.manual_seed = torch._disable_dynamo(lambda seed: None)  # torch's wrapper around somebody else's function
assert snapshot.changes() == ["torch.manual_seed"], snapshot.changes()
print("ok")
'''


def test_our_own_measurement_code_does_not_look_like_tampering():
    out = subprocess.run([sys.executable, "-c", SNAPSHOT_SCRIPT], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]


def test_a_mode_the_problem_left_active_is_not_the_candidates_tamper():
    """`torch.set_default_device` in a problem's module pushes a torch function mode before the candidate exists: it
    made every honest candidate `hacked: tamper` (attacker review, 2026-12-02). A mode the candidate pushes still is."""
    from drk.examples import example_candidate, example_problem
    from drk.gym import EvalConfig, Problem, evaluate

    relu2 = example_problem("relu2")
    source = relu2.source.replace("import torch.nn as nn", "import torch.nn as nn\ntorch.set_default_device('cpu')")
    assert source != relu2.source
    problem = Problem.from_source(source, name="relu2_default_device")
    config = EvalConfig(timeout_s=60)
    assert evaluate(problem, example_candidate("good"), device="cpu", config=config).status == "correct"
    pushes_a_mode = example_candidate("good") + (
        "\nfrom torch.overrides import TorchFunctionMode\n\n"
        "class _Watch(TorchFunctionMode):\n"
        "    def __torch_function__(self, func, types, args=(), kwargs=None):\n"
        "        return func(*args, **(kwargs or {}))\n\n"
        "_Watch().__enter__()\n")
    result = evaluate(problem, pushes_a_mode, device="cpu", config=config)
    assert result.status == "hacked" and "tamper" in result.hack_reasons, result.error
