"""The probes' disabled launches must not be told from real ones by what the launch returns or calls.

On a GPU, ``kernel[grid](...)`` returns the compiled kernel; a ``noop`` probe launch returned ``None``, so a decoy could
read "my launch returned None" as "this is the judge's probe" and return zeros there (the kernels then seemed to
matter), the reference computed by torch otherwise (``drk/examples/relu2/candidates/attack_launch_return.py``).
"""
from types import SimpleNamespace

import pytest
import torch
import triton
import triton.language as tl

from drk.gym import hacking
from drk.gym.hacking import LaunchRecorder


def own_kernel():  # defined in this file: the recorder attributes its launches to the "candidate"
    pass


def fake_launch_path(calls: list):
    """``JITFunction.run``'s contract: compile (cached), launch unless ``warmup`` (through the compiled kernel's
    launcher, which is :func:`drk.gym.hacking._noop_launch` during a ``noop`` launch), return the compiled kernel."""
    def run(fn_self, *args, grid=None, warmup=False, **kwargs):
        noop = getattr(hacking._NOOP, "depth", 0) > 0
        calls.append("compile" if warmup else "compile+launch" + (" (noop launcher)" if noop else ""))
        return f"compiled {fn_self.fn.__name__}"
    return run


@pytest.mark.parametrize("disabled", [None, "noop"])
def test_a_disabled_launch_returns_what_a_real_launch_returns(disabled):
    assert hacking._install_noop_launcher()  # as LaunchRecorder.install does in every runner
    calls: list = []
    recorder = LaunchRecorder(candidate_file=__file__, disabled=disabled)
    run = recorder._make_wrapper(fake_launch_path(calls))
    assert run(SimpleNamespace(fn=own_kernel), 1, 2, grid=(1,), warmup=False) == "compiled own_kernel"
    # noop: the whole launch path, with a launcher that launches nothing
    assert calls == (["compile+launch (noop launcher)"] if disabled else ["compile+launch"])
    assert recorder.own["none"]["own_kernel"] == 1


@triton.jit
def fill_kernel(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.full((BLOCK,), 1.0, tl.float32), mask=offs < n)


@pytest.mark.parametrize("disabled", [None, "noop"])
def test_a_noop_launch_calls_what_a_launch_calls_and_runs_no_program(disabled):
    """Attacker review 17 (``attack_hook_tell``): a disabled launch stopped at a compile, so Triton's
    ``pre_run_hooks`` (and on a GPU ``knobs.runtime.launch_enter_hook``) fired only for real launches, and a decoy
    counting them knew which calls were probed. A ``noop`` launch now calls the hooks and the candidate's grid as a
    real one does (here under Triton's interpreter) and writes nothing."""
    from triton.runtime.interpreter import InterpretedFunction

    hooks, grids = [], []
    fill_kernel.pre_run_hooks[:] = [lambda *args, **kwargs: hooks.append(1)]
    recorder = LaunchRecorder(candidate_file=__file__, disabled=disabled)
    run = recorder._make_wrapper(InterpretedFunction.run)
    y = torch.zeros(100)

    def grid(meta):
        grids.append(meta["BLOCK"])
        return (triton.cdiv(100, meta["BLOCK"]),)

    try:
        run(fill_kernel, y, 100, BLOCK=32, grid=grid, warmup=False)
    finally:
        fill_kernel.pre_run_hooks.clear()
    assert hooks == [1] and grids == [32]
    assert torch.equal(y, torch.zeros(100) if disabled else torch.ones(100))


def test_during_a_noop_launch_the_compiled_kernel_launches_a_grid_of_none():
    """On a GPU ``JITFunction.run`` calls the compiled kernel's launcher with the grid and the launch hooks.
    ``CompiledKernel.run`` is always a :class:`drk.gym.hacking._Launcher` (the same type whether or not a launch is
    disabled: a different object during a noop launch, readable from the candidate's grid callable, told it apart,
    attacker review 18), which gives the real launcher a grid of none during a ``noop`` launch, and forwards
    everything else."""
    from triton.compiler.compiler import CompiledKernel

    assert hacking._install_noop_launcher() and hacking._install_noop_launcher()  # once per process
    calls = []
    real = SimpleNamespace(__call__=None, global_scratch_size=7)
    kernel = SimpleNamespace(_run=lambda *args: calls.append(args), _init_handles=lambda: None)
    launcher = CompiledKernel.run.fget(kernel)
    launcher(4, 2, 1, "stream", "function", "packed", "metadata", "enter", "exit", "x")
    hacking._NOOP.depth = 1
    try:
        noop_launcher = CompiledKernel.run.fget(kernel)
        noop_launcher(4, 2, 1, "stream", "function", "packed", "metadata", "enter", "exit", "x")
    finally:
        hacking._NOOP.depth = 0
    assert type(launcher) is type(noop_launcher)
    assert calls == [(4, 2, 1, "stream", "function", "packed", "metadata", "enter", "exit", "x"),
                     (0, 0, 0, "stream", "function", "packed", "metadata", "enter", "exit", "x")]
    assert hacking._Launcher(real).global_scratch_size == 7


def test_a_noop_launch_on_the_interpreter_uses_the_grid_and_leaves_the_interpreters_state_as_a_launch_does():
    """Attacker review 18: a noop launch that swapped the candidate's grid for one of no programs left the grid
    unused (a tuple subclass counting its use told: ``attack_grid_consumed``) and the interpreter's
    ``interpreter_builder.grid_dim`` at (0, 0, 0) (``attack_builder_grid_dim``). The programs now run over the real
    grid and do nothing."""
    from triton.runtime import interpreter
    from triton.runtime.interpreter import InterpretedFunction

    used = []

    class Grid(tuple):
        def __len__(self):
            used.append(1)
            return tuple.__len__(self)

    for disabled in (None, "noop"):
        used.clear()
        run = LaunchRecorder(candidate_file=__file__, disabled=disabled)._make_wrapper(InterpretedFunction.run)
        y = torch.zeros(100)
        run(fill_kernel, y, 100, BLOCK=32, grid=lambda meta: Grid((4, 1)), warmup=False)
        assert used, disabled
        assert tuple(interpreter.interpreter_builder.grid_dim) == (4, 1, 1), disabled
        assert torch.equal(y, torch.zeros(100) if disabled else torch.ones(100))
