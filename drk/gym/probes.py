"""Kernel-usage probes decided by the judge: the candidate's source with every Triton kernel body replaced.

Whether the candidate's Triton kernels do the work cannot be decided from evidence the candidate's process
reports (it can rewrite any reporter). Instead the judge, which only *parses* the candidate, writes two variants of
its source and has them run on inputs whose answers only the judge knows:

* ``noop``: every ``@triton.jit`` function's body becomes ``pass``. A launch then writes nothing, so if the
  outputs are still right in any pass, the kernels did not compute them (``decoy`` when none of them was launched,
  ``no_effect`` otherwise).
* ``raise``: every body raises. Launching fails (at compile time on a GPU, at once under the interpreter), so if
  the outputs are still right, the forward caught the failure and fell back to other code (``fallback``).

Kernels that are never launched are never compiled, so stubbing helpers alongside kernels is harmless.
"""

from __future__ import annotations

import ast

VARIANTS = ("noop", "raise")
_STUB = {
    "noop": "pass",
    "raise": "raise RuntimeError('drk probe: this Triton kernel is disabled')",
}


def _is_triton_jit(node: ast.AST) -> bool:
    """``triton.jit``, ``tl.jit``-like aliases ending in ``jit`` (``jit``, ``triton.jit(...)``) and
    ``triton.autotune``/``heuristics`` wrappers are recognised by their last attribute name."""
    target = node.func if isinstance(node, ast.Call) else node
    while isinstance(target, ast.Call):
        target = target.func
    name = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else ""
    return name == "jit"


def jit_function_names(source: str) -> list[str]:
    """Names of the functions in ``source`` decorated with (or passed to) a ``jit`` decorator."""
    return [node.name for node in _jit_functions(ast.parse(source))]


def _jit_functions(tree: ast.Module) -> list[ast.FunctionDef]:
    wrapped: set[str] = set()
    for node in ast.walk(tree):  # k = triton.jit(fn)
        if isinstance(node, ast.Call) and _is_triton_jit(node.func) and node.args and isinstance(node.args[0], ast.Name):
            wrapped.add(node.args[0].id)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name in wrapped or any(_is_triton_jit(d) for d in node.decorator_list):
                found.append(node)
    return found


def make_variant(source: str, variant: str) -> str:
    """``source`` with every jit function's body replaced by the ``variant`` stub (docstrings kept out)."""
    if variant not in VARIANTS:
        raise ValueError(f"variant {variant!r}: choose one of {VARIANTS}")
    tree = ast.parse(source)
    stub = ast.parse(_STUB[variant]).body
    for fn in _jit_functions(tree):
        fn.body = [ast.fix_missing_locations(ast.copy_location(s, fn.body[0])) for s in stub]
    return ast.unparse(ast.fix_missing_locations(tree))
