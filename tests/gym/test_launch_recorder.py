"""The probes' disabled launches must not be told from real ones by what the launch returns.

On a GPU, ``kernel[grid](...)`` returns the compiled kernel; a ``noop`` probe launch returned ``None``, so a decoy could
read "my launch returned None" as "this is the judge's probe" and return zeros there (the kernels then seemed to
matter), the reference computed by torch otherwise (``drk/examples/relu2/candidates/attack_launch_return.py``).
"""
from types import SimpleNamespace

import pytest

from drk.gym.hacking import LaunchRecorder


def own_kernel():  # defined in this file: the recorder attributes its launches to the "candidate"
    pass


def fake_launch_path(calls: list):
    """``JITFunction.run``'s contract: compile (cached), launch unless ``warmup``, return the compiled kernel."""
    def run(fn_self, *args, grid=None, warmup=False, **kwargs):
        calls.append("compile" if warmup else "compile+launch")
        return f"compiled {fn_self.fn.__name__}"
    return run


@pytest.mark.parametrize("disabled", [None, "noop"])
def test_a_disabled_launch_returns_what_a_real_launch_returns(disabled):
    calls: list = []
    recorder = LaunchRecorder(candidate_file=__file__, disabled=disabled)
    run = recorder._make_wrapper(fake_launch_path(calls))
    assert run(SimpleNamespace(fn=own_kernel), 1, 2, grid=(1,), warmup=False) == "compiled own_kernel"
    assert calls == (["compile"] if disabled else ["compile+launch"])  # noop: compiled, never launched
    assert recorder.own["none"]["own_kernel"] == 1


def test_a_raise_probe_never_reaches_the_launch_path():
    calls: list = []
    run = LaunchRecorder(candidate_file=__file__, disabled="raise")._make_wrapper(fake_launch_path(calls))
    with pytest.raises(RuntimeError, match="disabled"):
        run(SimpleNamespace(fn=own_kernel), grid=(1,), warmup=False)
    assert calls == []


def test_foreign_kernels_are_never_disabled():
    import torch

    namespace: dict = {}
    exec(compile("def torch_kernel():\n    pass\n", torch.__file__.replace("__init__.py", "k.py"), "exec"), namespace)
    calls: list = []
    run = LaunchRecorder(candidate_file="/elsewhere.py", disabled="noop")._make_wrapper(fake_launch_path(calls))
    assert run(SimpleNamespace(fn=namespace["torch_kernel"]), grid=(1,), warmup=False) == "compiled torch_kernel"
    assert calls == ["compile+launch"]


def test_kernels_outside_installed_libraries_are_the_candidates_own():
    """A kernel generated from a string or written to a helper module is the candidate's (the probes disable it);
    torch's, Triton's and the problem's are not (attacker review 9: an honest generated kernel was judged hacked)."""
    import torch
    import triton

    recorder = LaunchRecorder(candidate_file="/tmp/.drk_candidate/candidate.py")

    def kernel_from(filename: str):
        namespace: dict = {}
        exec(compile("def k():\n    pass\n", filename, "exec"), namespace)
        return SimpleNamespace(fn=namespace["k"])

    assert recorder._identify(kernel_from("/tmp/.drk_candidate/candidate.py"))[1]
    assert recorder._identify(kernel_from("<generated relu2>"))[1]
    assert recorder._identify(kernel_from("/tmp/helper_kernels.py"))[1]
    for library in (torch.__file__, triton.__file__):
        assert not recorder._identify(kernel_from(library.replace("__init__.py", "ops.py")))[1]
    assert not recorder._identify(kernel_from("<problem 01_ReLU>"))[1]
    assert not recorder._identify(SimpleNamespace(fn=None))[1]
