"""CEL for DRA device selectors, compiled to Python closures.

    from dralloc.cel import compile_selector
    sel = compile_selector('device.attributes["gpu.example.com"].model == "a100"')
    sel.matches(device, "gpu.example.com")      # True / False, or raises CELRuntimeError

``compile_selector`` raises :class:`CELCompileError` (cel-go's text: position and caret). Programs are cached
by expression and devices are converted once per device object. ``compile_expression`` compiles an
expression over arbitrary declared variables (used by the conformance tests and ``dralloc cel``).
``check_selector(expr)`` returns a selector's compile errors, for API validation.
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
