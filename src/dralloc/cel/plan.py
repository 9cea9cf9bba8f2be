"""Program planning: what cel-go does when it turns a checked expression into a program.

With Kubernetes' ``OptOptimize`` evaluation option, cel-go evaluates a type conversion (``int``, ``uint``,
``double``, ``string``, ``bytes``, ``bool``, ``dyn``, ``type``, ``duration``, ``timestamp``) whose single
argument is a constant once, while building the program: the call becomes a constant, and a conversion that
cannot succeed (``int("x")``, ``uint(-1)``) fails the program's instantiation instead of its evaluation.
Folding runs bottom-up, so ``string(int("1"))`` folds completely. Likewise a constant regular expression
given to ``matches``, ``find`` or ``findAll`` is compiled once here (the program keeps it; there is no
cache shared between programs), and an invalid one fails the
instantiation (the message is Python's description of the pattern error, after cel-go's
``error parsing regexp:`` prefix).
"""

from __future__ import annotations

from typing import Any

from dralloc.cel import library
from dralloc.cel.checker import Checked
from dralloc.cel.errors import CELCompileError, CELError
from dralloc.cel.syntax import Node

CONVERSIONS = frozenset({"int", "uint", "double", "string", "bytes", "bool", "dyn", "type", "duration",
                         "timestamp"})
PROGRAM_ERROR_PREFIX = "program instantiation failed: "


def plan(checked: Checked) -> None:
    """Fold constant conversions in place (the call node becomes a literal). Raises CELCompileError with
    upstream's ``program instantiation failed: ...`` text when a constant conversion fails."""
    _fold(checked.root)


def _is_constant(node: Node) -> bool:
    return node.kind == "lit"


def _fold(node: Node) -> None:
    for child in _children(node):
        _fold(child)
    if node.kind == "call":
        _compile_constant_regex(node)
    if node.kind != "call" or node.target is not None or len(node.args) != 1:
        return
    fn = (node.extra or ("", ""))[1] if isinstance(node.extra, tuple) else ""
    if fn not in CONVERSIONS or not _is_constant(node.args[0]):
        return
    impl = library.GLOBALS.get(fn)
    if impl is None:
        return
    try:
        value: Any = impl(node.args[0].value)
    except CELError as exc:
        raise CELCompileError(exc.message, prefix=PROGRAM_ERROR_PREFIX) from None
    node.kind, node.value, node.args, node.extra = "lit", value, [], None


def _compile_constant_regex(node: Node) -> None:
    fn = node.value
    if fn not in ("matches", "find", "findAll"):
        return
    index = 1 if node.target is None else 0  # matches(s, re) or s.matches(re) / s.find(re)
    if len(node.args) <= index:
        return
    pattern = node.args[index]
    if pattern.kind != "lit" or type(pattern.value) is not str:
        return
    try:
        pattern.value = library.constant_pattern(pattern.value)  # compiled once, kept by the program
    except CELError as exc:
        raise CELCompileError(exc.message, prefix=PROGRAM_ERROR_PREFIX) from None


def _children(node: Node) -> list[Node]:
    out: list[Node] = []
    if isinstance(node.target, Node):
        out.append(node.target)
    out.extend(a for a in node.args if isinstance(a, Node))
    if node.kind == "map":
        for k, v, _ in node.extra:
            out.extend((k, v))
    return out
