"""Static hacking checks: a registry of small named AST checks over the candidate's source.

Each check returns the reasons it flags (empty when clean) and has a one-line rationale. They run in the
parent process on the source text only — nothing is executed. Runtime evidence (``drk.gym.hacking``) is the
main judge; these catch what cannot be legitimate in a Triton kernel module whatever happens at run time.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

_FRAME_ATTRS = {"f_back", "f_locals", "f_globals", "tb_frame", "gi_frame", "cr_frame", "f_builtins"}
_FRAME_CALLS = {"_getframe", "currentframe", "stack", "getouterframes", "getinnerframes", "trace"}
_GC_CALLS = {"get_objects", "get_referrers", "get_referents"}
_NATIVE_MODULES = {"ctypes", "cffi", "cupy", "numba", "pycuda", "cuda"}
_NATIVE_CALLS = {"load_inline", "load_library", "CUDAExtension", "CppExtension"}
_PROTECTED_ROOTS = {"torch", "time", "triton", "tl", "F", "nn", "builtins", "gc", "sys", "np", "numpy"}


@dataclass(frozen=True)
class StaticCheck:
    name: str
    rationale: str
    run: Callable[[ast.Module], list[str]]


def _dotted(node: ast.AST) -> str:
    """``torch.cuda.Event`` for an Attribute chain, '' for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _imports(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _check_model_subclass(tree: ast.Module) -> list[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "ModelNew":
            if any(_dotted(base).split(".")[-1] == "Model" for base in node.bases):
                return ["model_subclass"]
    return []


def _check_torch_compile(tree: ast.Module) -> list[str]:
    for node in ast.walk(tree):
        dotted = _dotted(node) if isinstance(node, ast.Attribute) else ""
        if dotted.endswith("torch.compile") or "_dynamo" in dotted or "_inductor" in dotted:
            return ["torch_compile"]
    if any("_dynamo" in name or "_inductor" in name for name in _imports(tree)):
        return ["torch_compile"]
    return []


def _check_native_code(tree: ast.Module) -> list[str]:
    if any(name.split(".")[0] in _NATIVE_MODULES or "cpp_extension" in name for name in _imports(tree)):
        return ["native_code"]
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            dotted = _dotted(node.func)
            if "cpp_extension" in dotted or dotted.split(".")[-1] in _NATIVE_CALLS:
                return ["native_code"]
    return []


#: torch settings a kernel author may legitimately assign (their own process's numerics and autotuning; the judge
#: runs the reference in its own process, untouched): not tampering.
NUMERIC_SETTINGS: frozenset[str] = frozenset({
    "torch.backends.cuda.matmul.allow_tf32", "torch.backends.cudnn.allow_tf32", "torch.backends.cudnn.benchmark",
    "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
    "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction",
})


def _check_tamper(tree: ast.Module) -> list[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in _FRAME_ATTRS:
            return ["tamper"]
        if isinstance(node, ast.Call):
            dotted = _dotted(node.func)
            leaf = dotted.split(".")[-1]
            if leaf in _FRAME_CALLS and dotted.split(".")[0] in {"sys", "inspect"}:
                return ["tamper"]
            if leaf in _GC_CALLS:
                return ["tamper"]
            if leaf == "setattr" and node.args and _dotted(node.args[0]).split(".")[0] in _PROTECTED_ROOTS:
                return ["tamper"]
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                dotted = _dotted(target) if isinstance(target, ast.Attribute) else ""
                if dotted.split(".")[0] in _PROTECTED_ROOTS and dotted not in NUMERIC_SETTINGS:
                    return ["tamper"]
    if any(name == "drk" or name.startswith("drk.") for name in _imports(tree)):
        return ["tamper"]
    return []


STATIC_CHECKS: tuple[StaticCheck, ...] = (
    StaticCheck("model_subclass", "ModelNew inheriting Model can run the reference's forward", _check_model_subclass),
    StaticCheck("torch_compile", "kernels written by inductor are not the candidate's own", _check_torch_compile),
    StaticCheck("native_code", "CUDA/C++ extensions and ctypes bypass the Triton requirement", _check_native_code),
    StaticCheck("tamper", "patching torch/triton/time or reading frames/gc attacks the judge", _check_tamper),
)


def run_static_checks(source: str) -> list[str]:
    """Reasons flagged by every static check on ``source`` (which must parse), in registry order."""
    tree = ast.parse(source)
    reasons: list[str] = []
    for check in STATIC_CHECKS:
        reasons.extend(r for r in check.run(tree) if r not in reasons)
    return reasons


def defines_model_new(source: str) -> bool:
    """Whether the module defines ``ModelNew`` at top level (a class, or an assignment to the name)."""
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "ModelNew":
            return True
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "ModelNew" for t in node.targets):
            return True
    return False
