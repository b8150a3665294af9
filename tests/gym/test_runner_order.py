"""The runner's order of work inside one request (the runner in a process of its own: it installs its instruments)."""

import json
import subprocess
import sys
import textwrap

from drk.examples import example_candidate, example_problem

#: The candidate notes torch's seed at its import: the seed its inputs were drawn under if they were drawn first.
SEED_AT_IMPORT = "import torch\n_SEED_AT_IMPORT = torch.initial_seed()\n"

SCRIPT = textwrap.dedent("""
    import json, os, sys
    import torch
    from drk.gym.runner import Runner
    req = json.loads(sys.stdin.read())
    runner = Runner(*os.pipe())
    runner.op_load(req["load"])
    runner.op_prepare(req["prepare"])
    print(json.dumps({"seed_at_import": runner.probe_module._SEED_AT_IMPORT}))
""")


def test_a_probe_call_draws_its_inputs_before_the_candidate_is_first_imported(tmp_path):
    """A thread started by the candidate's import that draws from torch's global generator raced the probe runner's
    input draw (on an H200, an honest module's control call got other inputs than the judge's: ``incorrect``). With
    the inputs drawn first, the import sees the generator as the call's inputs left it: seeded again from the call's
    seed (``rounds.seed_after_inputs``, so that a call cannot read its seed back: attacker review 23), not the runner's
    seed before it."""
    from drk.gym.rounds import seed_after_inputs

    path = tmp_path / "candidate" / "candidate.py"
    path.parent.mkdir()
    load = {"problem_source": example_problem().source, "problem_name": "relu2", "device": "cpu", "gpu_index": 0,
            "seed": 11, "build_main": False, "candidate_dir": str(path.parent), "candidate_path": str(path),
            "candidate_source": SEED_AT_IMPORT + example_candidate("good"), "flush_mb": 0}
    prepare = {"variant": "control", "calls": [{"seed": 12345, "mode": "eval", "scale": 1.0, "shift": 0.0}],
               "digest_seed": 3, "poison_numel": 0, "lazy": False}
    done = subprocess.run([sys.executable, "-c", SCRIPT], input=json.dumps({"load": load, "prepare": prepare}),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {"seed_at_import": seed_after_inputs(12345)}


#: y = relu(x) * w: a weight a candidate may pre-process.
SCALE_PROBLEM = """import torch
import torch.nn as nn
B, D = 8, 1000
class Model(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d))
    def forward(self, x):
        return torch.relu(x) * self.w
def get_inputs():
    return [torch.randn(B, D)]
def get_init_inputs():
    return [D]
"""

#: Honest: the weight padded once by a Triton kernel, cached by its address (attacker review 12's legit_ptr_pack).
PTR_CACHE = """import torch
import torch.nn as nn
import triton
import triton.language as tl
BLOCK = 1024
_packed = {}
@triton.jit
def pad_kernel(w_ptr, out_ptr, d, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(w_ptr + offs, mask=offs < d, other=0.0))
@triton.jit
def relu_scale_kernel(x_ptr, w_ptr, y_ptr, d, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = offs < d
    x = tl.load(x_ptr + row * d + offs, mask=m, other=0.0)
    tl.store(y_ptr + row * d + offs, tl.maximum(x, 0.0) * tl.load(w_ptr + offs), mask=m)
def padded(w):
    key = (w.data_ptr(), tuple(w.shape))
    if key not in _packed:
        hit = torch.empty(triton.cdiv(w.numel(), BLOCK) * BLOCK, dtype=w.dtype, device=w.device)
        pad_kernel[(triton.cdiv(w.numel(), BLOCK),)](w, hit, w.numel(), BLOCK=BLOCK)
        _packed[key] = hit
    return _packed[key]
class ModelNew(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d))
    def forward(self, x):
        y = torch.empty_like(x)
        b, d = x.shape
        relu_scale_kernel[(b, triton.cdiv(d, BLOCK))](x.contiguous(), padded(self.w.detach()), y, d, BLOCK=BLOCK)
        return y
"""

SEQUENCE_SCRIPT = textwrap.dedent("""
    import json, os, sys
    import torch
    from drk.gym.runner import Runner
    req = json.loads(sys.stdin.read())
    runner = Runner(*os.pipe())
    runner.op_load(req["load"])
    addresses, nans = [], []
    for k, variant in enumerate(req["variants"]):
        call = {"seed": 100 + k, "mode": "eval", "scale": 1.0, "shift": 0.0}
        runner.op_prepare({"variant": variant, "calls": [call], "digest_seed": 3, "poison_numel": 8000,
                           "lazy": False})
        header, _ = runner.op_go({})
        assert variant != "control" or "error" not in header, header  # a disabled call may fail
        addresses.append((variant, runner.models[variant].w.data_ptr()))
        if variant == "control":
            nans.append(bool(torch.isnan(runner.last_outputs[0][0]).any()))
    print(json.dumps({"nans": nans, "addresses": addresses}))
""")


def test_a_control_call_never_gets_a_disabled_calls_freed_model(tmp_path):
    """An honest module caching a pre-processed weight by its address: a model built for a disabled call filled the
    cache with the judge's poison, and once freed, a later control call's model took its address and answered NaN
    (``incorrect`` 5 times in 8, attacker review 12). Disabled calls' models live as long as their process."""
    path = tmp_path / "candidate" / "candidate.py"
    path.parent.mkdir()
    load = {"problem_source": SCALE_PROBLEM, "problem_name": "scale", "device": "cpu", "gpu_index": 0, "seed": 11,
            "build_main": False, "candidate_dir": str(path.parent), "candidate_path": str(path),
            "candidate_source": PTR_CACHE, "flush_mb": 0}
    variants = ["control"] + ["noop", "raise", "noop", "control", "control"] * 3
    done = subprocess.run([sys.executable, "-c", SEQUENCE_SCRIPT], input=json.dumps({"load": load, "variants": variants}),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout.splitlines()[-1])
    disabled_before = set()
    for variant, address in answer["addresses"]:
        assert variant != "control" or address not in disabled_before
        if variant != "control":
            disabled_before.add(address)
    assert not any(answer["nans"]), answer["nans"]


#: Notes, at each call, its own model's reference count and every earlier model's (0 once dead).
LIFETIMES = """import sys, weakref
import torch
import torch.nn as nn
SEEN = []
_REFS = []
class ModelNew(nn.Module):
    def forward(self, x):
        if not any(ref() is self for ref in _REFS):
            _REFS.append(weakref.ref(self))
        others = []
        for ref in _REFS:
            model = ref()
            if model is not self:
                others.append(sys.getrefcount(model) if model is not None else 0)
            del model
        SEEN.append([sys.getrefcount(self), others])
        return torch.relu(x) * 2.0
"""

LIFETIMES_SCRIPT = textwrap.dedent("""
    import json, os, sys
    from drk.gym.runner import Runner
    req = json.loads(sys.stdin.read())
    runner = Runner(*os.pipe())
    runner.op_load(req["load"])
    for k, variant in enumerate(req["variants"]):
        call = {"seed": 100 + k, "mode": "eval", "scale": 1.0, "shift": 0.0}
        runner.op_prepare({"variant": variant, "calls": [call], "digest_seed": 3, "poison_numel": 0, "lazy": False})
        runner.op_go({})
    print(json.dumps(runner.probe_module.SEEN))
""")


def test_every_probe_calls_model_lives_alike_whatever_its_kind(tmp_path):
    """A decoy told disabled calls from control ones by its models' lifetimes: a control call's model died when the
    next control call's replaced it, a disabled call's never did (a ``__del__``), and the kept ones held one reference
    more (``sys.getrefcount(self)``): ``attack_finalizer_decoy``, ``attack_refcount_decoy``, both ``correct``
    (attacker review 13); models kept by name per kind told the kind of the model a new one replaced. At every call
    the module must see the same: its own model's count, and every earlier model alive with one count."""
    path = tmp_path / "candidate" / "candidate.py"
    path.parent.mkdir()
    load = {"problem_source": example_problem().source, "problem_name": "relu2", "device": "cpu", "gpu_index": 0,
            "seed": 11, "build_main": False, "candidate_dir": str(path.parent), "candidate_path": str(path),
            "candidate_source": LIFETIMES, "flush_mb": 0}
    variants = ["control", "control", "noop", "control", "raise", "raise", "control", "noop", "noop", "control"]
    done = subprocess.run([sys.executable, "-c", LIFETIMES_SCRIPT],
                          input=json.dumps({"load": load, "variants": variants}),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    assert len(seen) == len(variants)
    assert len({own for own, _ in seen}) == 1, seen  # the called model: one count whatever the call's kind
    earlier = {count for _, others in seen for count in others}
    assert len(earlier) == 1 and 0 not in earlier, seen  # every earlier model alive, held alike


DIGEST_SCRIPT = textwrap.dedent("""
    import json, os, sys
    from drk.gym.runner import Runner
    req = json.loads(sys.stdin.read())
    runner = Runner(*os.pipe())
    runner.op_load(req["load"])
    call = {"seed": 7, "mode": "eval", "scale": 1.0, "shift": 0.0}
    base = {"variant": "main", "calls": [call], "digest_seed": 3, "poison_numel": 0}
    runner.op_prepare({**base, "lazy": False, "digest_inputs": True})
    checked, _ = runner.op_go({})
    timed, _ = runner.op_go({**base, "lazy": True})
    burst, _ = runner.op_go({**base, "lazy": True, "burst_cycles": 1000})
    print(json.dumps({"checked": checked["inputs"], "timed": timed["inputs"], "outputs": timed["outputs"],
                      "burst": burst["outputs"], "burst_inputs": burst["inputs"]}))
""")


def test_a_timed_round_digests_no_inputs_on_either_side(tmp_path, monkeypatch):
    """Attacker review 14: the judge bounds a timed round's wall time by the trusted loop's work beyond its calls,
    and a runner rewritten from inside did that work cheaper (or not at all: input digests were never checked in a
    timed round) and ran its kernel in the time saved, outside its reported times (``correct`` at a quarter of its
    real time on CPU). Input digests are taken only where the judge checks them (correctness rounds), in the
    runner and in the judge's own rounds alike, so the budget a rewrite can reuse is the output digests alone."""
    _runner_rounds_and_reference_digests(tmp_path, monkeypatch)


def _runner_rounds_and_reference_digests(tmp_path, monkeypatch):
    """The runner's answers to a correctness, a timed and a burst round (``DIGEST_SCRIPT``), checked as
    :func:`test_a_timed_round_digests_no_inputs_on_either_side` says; and the judge's reference round's digests."""
    from types import SimpleNamespace

    from drk.gym import EvalConfig, judge, rounds

    path = tmp_path / "candidate" / "candidate.py"
    path.parent.mkdir()
    load = {"problem_source": example_problem().source, "problem_name": "relu2", "device": "cpu", "gpu_index": 0,
            "seed": 11, "build_main": True, "candidate_dir": str(path.parent), "candidate_path": str(path),
            "candidate_source": example_candidate("good"), "flush_mb": 0}
    done = subprocess.run([sys.executable, "-c", DIGEST_SCRIPT], input=json.dumps({"load": load}),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout.splitlines()[-1])
    assert answer["checked"][0] and answer["checked"][0][0]["dtype"] == "float32"  # checked: digested
    assert answer["timed"] == [[]]  # timed: no input digest
    assert answer["outputs"][0][0]["sums"]  # its outputs are digested as before
    # the judge's own timed rounds do the same per-call work: one digest per call, of its outputs
    ref = judge.cpu_reference(example_problem().source)
    digested = []
    real = rounds.start_digests  # every digest starts there (digest_values, reference_digests, a burst's)
    monkeypatch.setattr(rounds, "start_digests", lambda values, seed: digested.append(values) or real(values, seed))
    specs = [rounds.CallSpec(5), rounds.CallSpec(6)]
    _, _, digests, _ = judge.Session.reference_round(SimpleNamespace(ref=ref, cfg=EvalConfig()), specs, pick=0)
    assert len(digests) == len(digested) == 2
    return answer, ref, specs, digests


def test_a_burst_round_answers_the_digests_a_synced_round_does(tmp_path, monkeypatch):
    """A burst round (``EvalConfig.timing_burst_cycles``) starts every call's digests during the round and reads
    them back after it, in the runner and in the judge's reference round alike: the same records as a round that
    digests call by call (on CPU the round itself is the same; its GPU timing is ``tests/gym/test_gpu.py``'s)."""
    from types import SimpleNamespace

    from drk.gym import EvalConfig, judge

    answer, ref, specs, digests = _runner_rounds_and_reference_digests(tmp_path, monkeypatch)
    assert answer["burst"] == answer["outputs"] and answer["burst_inputs"] == [[]]
    _, _, burst, _ = judge.Session.reference_round(SimpleNamespace(ref=ref, cfg=EvalConfig()), specs, pick=0,
                                                   burst_cycles=1000)
    assert burst == digests and "bound" in burst[0][0] and "wbound" in burst[0][0]
