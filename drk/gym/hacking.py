"""Runtime hacking evidence, gathered inside the sandbox child.

Three instruments, installed before the candidate is imported:

* :class:`LaunchRecorder` wraps Triton's launch path (``JITFunction.run`` and the interpreter's
  ``InterpretedFunction.run``) to count launches of the candidate's own kernels (:meth:`LaunchRecorder._identify`),
  per pass, to record launches that raised (a try/except fallback to torch), and, in the probe runner, to disable
  those launches (``disabled``: the judge's ``noop`` and ``raise`` probe calls, :mod:`drk.gym.probes`).
* :class:`TrustSnapshot` records the identity of every function of torch, triton, time and the reference's
  modules; any later difference means the candidate replaced or wrapped one (``tamper``).
* :class:`Tripwires` replace frame and garbage-collector introspection (and ``torch.compile``) with wrappers that
  note when the candidate's own code calls them.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import threading
import types
import weakref
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

#: The real frame getter, captured at import, before any tripwire replaces ``sys._getframe``.
_getframe = sys._getframe


@dataclass
class LaunchRecorder:
    """Counts Triton launches by kernel and pass, attributing each to the candidate's file or not."""

    candidate_file: str
    current_pass: str = "none"
    #: "noop": a launch of the candidate's own kernel does nothing; "raise": it raises; None: it runs
    disabled: str | None = None
    own: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    foreign: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    failed_launches: list[str] = field(default_factory=list)
    _originals: list[tuple[type, Callable]] = field(default_factory=list)

    def install(self) -> None:
        """Patch the launch entry points of every Triton function class present (idempotent per instance), and the
        compiled kernel's launcher (a ``noop`` launch reaches it and launches nothing). Installed alike in every
        runner, so the patches tell no runner from another."""
        for cls in _launch_classes():
            original = cls.run
            self._originals.append((cls, original))
            cls.run = self._make_wrapper(original)
        _install_noop_launcher()

    def _make_wrapper(self, original: Callable) -> Callable:
        recorder = self

        def run(fn_self, *args, **kwargs):
            if kwargs.get("warmup"):
                return original(fn_self, *args, **kwargs)
            name, is_own = recorder._identify(fn_self)
            (recorder.own if is_own else recorder.foreign)[recorder.current_pass][name] += 1
            if is_own and recorder.disabled == "noop":
                return _run_without_programs(original, fn_self, args, kwargs)
            if is_own and recorder.disabled == "raise":
                raise RuntimeError("drk probe: this Triton kernel is disabled")
            try:
                return original(fn_self, *args, **kwargs)
            except BaseException:
                if is_own:
                    recorder.failed_launches.append(name)
                raise

        return run

    def _identify(self, fn_self: Any) -> tuple[str, bool]:
        """A kernel's name and whether it is the candidate's own: defined in its file, or anywhere but an installed
        library or the problem. An honest kernel generated from a string (``exec`` under a name of its own) or
        written to a helper module was foreign, never disabled by the probes, so its right outputs read as torch
        doing the work: judged ``hacked`` (attacker review 9, 2026-12-02)."""
        fn = getattr(fn_self, "fn", None)
        code = getattr(fn, "__code__", None)
        name = getattr(fn, "__name__", type(fn_self).__name__)
        if code is None:
            return name, False
        filename = code.co_filename
        return name, filename == self.candidate_file or not (
            filename.startswith("<problem ") or filename.startswith(_library_roots()))

    def own_launch_counts(self) -> dict[str, int]:
        total: Counter = Counter()
        for counts in self.own.values():
            total.update(counts)
        return dict(total)

    def launched_own_in(self, pass_name: str) -> bool:
        return sum(self.own.get(pass_name, Counter()).values()) > 0


#: Per thread: > 0 while a ``noop`` launch runs (:func:`_run_without_programs`), when the compiled kernel's launcher
#: launches a grid of none (:func:`_install_noop_launcher`).
_NOOP = threading.local()
#: Whether ``CompiledKernel.run`` could be made to launch no programs during a ``noop`` launch (a GPU launch needs it).
_LAUNCHER_PATCHED = False


def _run_without_programs(original: Callable, fn_self: Any, args: tuple, kwargs: dict) -> Any:
    """A ``noop`` probe launch: Triton's whole launch path as a real launch takes it (arguments bound, kernel
    compiled, the candidate's grid computed and used, ``pre_run_hooks`` and the launch hooks called with the launch's
    metadata, the compiled kernel returned), but none of the kernel's programs do anything. Stopping at a compile
    (``warmup=True``) skipped the hooks a real launch calls, and a hook that counted told a decoy which calls were
    probed (``attack_hook_tell``, attacker review 17); returning ``None`` told it too (``attack_launch_return``).

    The interpreter runs a grid's programs itself: it runs them all, over the candidate's own grid, with a program
    that does nothing (:func:`_program_that_does_nothing`), so the grid is used and the interpreter's state
    (``interpreter_builder.grid_dim``, the rewritten function) ends as after a real launch (a grid of none left both
    telling: ``attack_grid_consumed``, ``attack_builder_grid_dim``, attacker review 18). A GPU launch reaches the
    compiled kernel's launcher, which then launches a grid of none (:class:`_Launcher`; Triton's launcher skips the
    launch itself for an empty grid, after its hooks). With a Triton whose launcher cannot be reached so, the launch
    stops at the compile, as before review 17."""
    if type(fn_self).__name__ == "InterpretedFunction":
        from triton.runtime.interpreter import GridExecutor

        rest = {key: value for key, value in kwargs.items() if key not in ("grid", "warmup")}
        # InterpretedFunction.run, with the rewritten kernel's programs replaced
        program = _program_that_does_nothing(fn_self.rewrite())
        return GridExecutor(program, fn_self.arg_names, kwargs["grid"], fn_self.pre_run_hooks)(*args, **rest)
    if not _LAUNCHER_PATCHED:  # pragma: no cover - a Triton without CompiledKernel.run as a property
        return original(fn_self, *args, **{**kwargs, "warmup": True})
    _NOOP.depth = getattr(_NOOP, "depth", 0) + 1
    try:
        return original(fn_self, *args, **kwargs)
    finally:
        _NOOP.depth -= 1


_NOTHING: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _program_that_does_nothing(fn: Callable) -> Callable:
    """A function that takes ``fn``'s parameters (names, defaults, annotations, module globals) and does nothing: one
    program of a disabled interpreted launch."""
    if fn not in _NOTHING:
        names = list(inspect.signature(fn).parameters)
        namespace: dict[str, Any] = {}
        exec(compile(f"def program({', '.join(names)}):\n    pass\n", "<drk disabled program>", "exec"), namespace)
        program = types.FunctionType(namespace["program"].__code__, fn.__globals__, fn.__name__, fn.__defaults__)
        program.__kwdefaults__ = fn.__kwdefaults__
        program.__annotations__ = dict(fn.__annotations__)
        _NOTHING[fn] = program
    return _NOTHING[fn]


class _Launcher:
    """``CompiledKernel.run`` in every runner: the compiled kernel's real launcher, called with a grid of none while a
    ``noop`` launch runs on this thread. The same type in every call (a different object during a noop launch, read
    from the candidate's grid callable, told it apart: attacker review 18); anything else is the real launcher's."""

    __slots__ = ("_real",)

    def __init__(self, real: Callable) -> None:
        self._real = real

    def __call__(self, grid_0: int, grid_1: int, grid_2: int, *rest: Any) -> Any:
        if getattr(_NOOP, "depth", 0):
            return self._real(0, 0, 0, *rest)
        return self._real(grid_0, grid_1, grid_2, *rest)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def _install_noop_launcher() -> bool:
    """Make ``CompiledKernel.run`` (the launcher ``JITFunction.run`` calls) a :class:`_Launcher` (once per process).
    Whether it could."""
    global _LAUNCHER_PATCHED
    try:
        from triton.compiler.compiler import CompiledKernel
    except ImportError:  # pragma: no cover - older Triton
        return False
    real = CompiledKernel.__dict__.get("run")
    if isinstance(real, property) and getattr(real.fget, "_drk_noop", False):
        return True
    if not isinstance(real, property):  # pragma: no cover - another Triton
        return False

    def run(kernel: Any) -> Any:
        return _Launcher(real.fget(kernel))

    run._drk_noop = True  # type: ignore[attr-defined]
    CompiledKernel.run = property(run)
    _LAUNCHER_PATCHED = True
    return True


@functools.cache
def _library_roots() -> tuple[str, ...]:
    """Where installed code lives (the interpreter's library paths, and torch's, Triton's and drk's own folders):
    kernels defined there are never the candidate's."""
    import sysconfig

    import torch
    import triton

    import drk

    paths = {sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    paths |= {os.path.dirname(module.__file__) for module in (torch, triton, drk)}
    return tuple(sorted({os.path.join(form, "") for path in paths for form in (path, os.path.realpath(path))}))


def _launch_classes() -> list[type]:
    from triton.runtime.jit import JITFunction

    classes: list[type] = [JITFunction]
    try:
        from triton.runtime.interpreter import InterpretedFunction

        classes.append(InterpretedFunction)
    except ImportError:  # pragma: no cover - older Triton
        pass
    return classes


def _namespaces(extra_modules: Iterable[Any]) -> dict[str, Any]:
    """The objects whose attributes the candidate must not replace."""
    import builtins
    import gc
    import inspect
    import time

    import torch
    import torch.nn.functional
    import triton
    import triton.runtime.jit as triton_jit

    spaces: dict[str, Any] = {
        "torch": torch,
        "torch.nn.functional": torch.nn.functional,
        "torch.Tensor": torch.Tensor,
        "torch._C.TensorBase": torch._C.TensorBase,
        "torch._C._VariableFunctions": torch._C._VariableFunctions,
        "torch._C._nn": torch._C._nn,
        "torch.nn.Module": torch.nn.Module,
        "torch.testing": torch.testing,
        "torch.cuda": torch.cuda,
        "torch.cuda.Event": torch.cuda.Event,
        "torch.profiler": torch.profiler,
        "time": time,
        "triton": triton,
        "triton.runtime.jit.JITFunction": triton_jit.JITFunction,
        "builtins": builtins,
        "gc": gc,
        "sys": sys,
        "inspect": inspect,
    }
    for cls in _launch_classes():
        spaces[f"triton:{cls.__name__}"] = cls
    for module in extra_modules:
        spaces[f"extra:{getattr(module, '__name__', type(module).__name__)}:{id(module)}"] = module
    return spaces


def _is_watched(value: Any) -> bool:
    return callable(value) or isinstance(value, (type, staticmethod, classmethod, property))


def _torch_wrapper_of(new: Any, original: Any) -> bool:
    """True when ``new`` is torch's own wrapper around ``original``.

    Importing ``torch._dynamo`` (which the profiler and ``torch.compile`` do) legitimately re-wraps a few torch
    functions, e.g. ``torch.manual_seed = torch._disable_dynamo(torch.manual_seed)``. Such a wrapper's code lives in
    torch's package and its ``__wrapped__`` chain reaches the original; a candidate's wrapper fails the first test
    (``functools.wraps`` copies names, not code), a torch wrapper around the candidate's function the second.
    """
    code = getattr(new, "__code__", None)
    if code is None or not code.co_filename.startswith(_torch_dir()):
        return False
    seen = 0
    while new is not None and seen < 8:
        if new is original:
            return True
        new, seen = getattr(new, "__wrapped__", None), seen + 1
    return False


@functools.lru_cache(maxsize=1)
def _torch_dir() -> str:
    import torch

    return os.path.dirname(torch.__file__) + os.sep


class TrustSnapshot:
    """Identities of the trusted functions; :meth:`changes` lists what was replaced since."""

    def __init__(self, extra: Iterable[Any] = (), *, judge: bool = True) -> None:
        self.judge = judge  # False: changes are evidence only (EvalConfig.hacking_check=False)
        self._spaces = {label: obj for label, obj in _namespaces(extra).items() if hasattr(obj, "__dict__")}
        self._objects = {
            label: {key: val for key, val in vars(obj).items() if _is_watched(val)}
            for label, obj in self._spaces.items()
        }
        # modes already active (the problem's module ran first: `torch.set_default_device` pushes one) are not the
        # candidate's; only a stack that differs from this one is (it made every honest candidate `tamper` once)
        self._modes = _active_modes()

    def changes(self) -> list[str]:
        changed = []
        for label, obj in self._spaces.items():
            now = vars(obj)
            for key, original in self._objects[label].items():
                if key not in now:
                    changed.append(f"{label}.{key}")
                elif now[key] is not original and not _torch_wrapper_of(now[key], original):
                    changed.append(f"{label}.{key}")
            if isinstance(obj, type):  # a new attribute on a class shadows an inherited method
                changed.extend(f"{label}.{key}" for key, val in now.items()
                               if key not in self._objects[label] and _is_watched(val))
        function_modes, dispatch_modes = _active_modes()
        if not _same_objects(function_modes, self._modes[0]):
            changed.append("torch function mode left active")
        if not _same_objects(dispatch_modes, self._modes[1]):
            changed.append("torch dispatch mode left active")
        return changed


def _active_modes() -> tuple[list[Any], list[Any]]:
    """The torch function and dispatch mode stacks, innermost last (the objects themselves)."""
    import torch

    function = [torch._C._get_function_stack_at(i) for i in range(torch._C._len_torch_function_stack())]
    dispatch = [torch._C._get_dispatch_stack_at(i) for i in range(torch._C._len_torch_dispatch_stack())]
    return function, dispatch


def _same_objects(now: list[Any], then: list[Any]) -> bool:
    return len(now) == len(then) and all(a is b for a, b in zip(now, then))


@dataclass
class Tripwires:
    """Wrap introspection entry points; note calls made directly from the candidate's file."""

    candidate_file: str
    hits: list[str] = field(default_factory=list)

    def install(self) -> None:
        import gc
        import inspect

        import torch

        sys._getframe = self._wrap_getframe()
        inspect.currentframe, inspect.stack = self._wrap_inspect(inspect)
        for owner, attr, reason in (
            (gc, "get_objects", "tamper"),
            (gc, "get_referrers", "tamper"),
            (gc, "get_referents", "tamper"),
            (torch, "compile", "torch_compile"),
        ):
            setattr(owner, attr, self._wrap(getattr(owner, attr), f"{getattr(owner, '__name__', owner)}.{attr}", reason))
        self._wrap_library(torch)
        self._wrap_stream(torch)

    def _note_if_candidate(self, hit: str) -> None:
        """Record ``hit`` when the function calling our wrapper (two frames up) is the candidate's code."""
        if _getframe(2).f_code.co_filename == self.candidate_file:
            self.hits.append(hit)

    def _wrap_getframe(self) -> Callable:
        """``sys._getframe`` keeps its meaning (depth counted from the caller) for torch's own callers."""
        tripwires = self

        def getframe(depth: int = 0):
            tripwires._note_if_candidate("tamper:sys._getframe")
            return _getframe(depth + 1)

        return getframe

    def _wrap_inspect(self, inspect_module: Any) -> tuple[Callable, Callable]:
        """``inspect.currentframe``/``stack`` re-implemented on the real getter, so callers still get their own
        frame (torch.fx checks it is called at module level), and calls from the candidate are noted."""
        tripwires = self

        def currentframe():
            tripwires._note_if_candidate("tamper:inspect.currentframe")
            return _getframe(1)

        def stack(context: int = 1):
            tripwires._note_if_candidate("tamper:inspect.stack")
            return inspect_module.getouterframes(_getframe(1), context)

        return currentframe, stack

    def _wrap(self, original: Callable, label: str, reason: str) -> Callable:
        """A pass-through wrapper that notes calls from the candidate (also used for ``__init__``/``__new__``)."""
        tripwires = self

        def wrapper(*args, **kwargs):
            tripwires._note_if_candidate(f"{reason}:{label}")
            return original(*args, **kwargs)

        wrapper.__wrapped__ = original
        return wrapper

    def _wrap_library(self, torch_module: Any) -> None:
        """Registering new kernels for aten ops from the candidate replaces the reference's ops."""
        library_cls = torch_module.library.Library
        library_cls.__init__ = self._wrap(library_cls.__init__, "torch.library.Library", "tamper")

    def _wrap_stream(self, torch_module: Any) -> None:
        """Streams the candidate creates: their work could escape a timer that watches one stream."""
        stream_cls = torch_module.cuda.Stream
        stream_cls.__new__ = self._wrap(stream_cls.__new__, "torch.cuda.Stream", "side_stream")

    @property
    def side_stream(self) -> bool:
        return any(hit.startswith("side_stream") for hit in self.hits)

    def reasons(self) -> list[str]:
        """Hack reasons (side streams are not a hack: they change how the candidate is timed)."""
        return sorted({hit.split(":", 1)[0] for hit in self.hits} - {"side_stream"})
