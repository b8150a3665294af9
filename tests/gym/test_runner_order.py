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
    the inputs drawn first, the import sees the call's own seed, not the one before it."""
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
    assert json.loads(done.stdout.splitlines()[-1]) == {"seed_at_import": 12345}
