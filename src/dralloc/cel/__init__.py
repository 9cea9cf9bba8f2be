"""CEL for DRA device selectors, compiled to Python closures.

    from dralloc.cel import compile_selector
    sel = compile_selector('device.attributes["gpu.example.com"].model == "a100"')
    sel.matches(device, "gpu.example.com")      # True / False, or raises CELRuntimeError

An expression goes through kube-apiserver's phases: parse (:mod:`.syntax`), type-check against the
declarations of a Kubernetes version (:mod:`.checker`, :mod:`.decls`), estimate its cost (:mod:`.cost`), plan
(:mod:`.plan`: constant conversions fold or fail) and generate closures (:mod:`.generate`).
``compile_selector(expr, version="1.36")`` raises :class:`CELCompileError` (cel-go's text, position and caret;
``.detail`` is kube-apiserver's whole message). Selectors are cached by expression and version, devices are
converted once per device object. ``compile_expression`` compiles an expression over arbitrary declared
variables (the conformance tests use it). ``check_selector(expr)`` returns a selector's compile errors.
"""

from dralloc.cel.device import (
    CEL_SELECTOR_MAX_COST,
    CEL_SELECTOR_MAX_LENGTH,
    Selector,
    check_selector,
    compile_selector,
    device_activation,
)
from dralloc.cel.errors import CELCompileError, CELRuntimeError
from dralloc.cel.program import Program, compile_expression

__all__ = [
    "CEL_SELECTOR_MAX_COST",
    "CEL_SELECTOR_MAX_LENGTH",
    "CELCompileError",
    "CELRuntimeError",
    "Program",
    "Selector",
    "check_selector",
    "compile_expression",
    "compile_selector",
    "device_activation",
]
