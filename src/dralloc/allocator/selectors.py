"""Class and request CEL selectors, evaluated lazily and cached per device.

Upstream evaluates the class selectors first, then the request's, each list in order, stopping at the first
false. A compile error or a runtime error on a device the search reaches is a hard error. Outcomes are
cached per (device object, expression) — a new slice generation brings new device objects, so the cache
never serves stale answers — and per (device, selector list) for the combined answer.
"""

from __future__ import annotations

from typing import Any

from dralloc.allocator.errors import SelectorError
from dralloc.cel import compile_selector

_NO_SUCH_KEY_HINT = (". consider using CEL optional chaining (.? followed by orValue()) or guarding the check "
                     "with has() for optional fields")


def compile_message(exc: BaseException) -> str:
    """Upstream's compile error text: ``compilation failed: <issues>``, ``program instantiation failed: ...``."""
    detail = getattr(exc, "detail", None)
    if isinstance(detail, str):
        return detail
    text = str(exc)
    return text if text.startswith("compilation failed: ") else f"compilation failed: {text}"


def runtime_message(exc: BaseException) -> str:
    """Upstream's EnhanceRuntimeError: "no such key" errors get a hint about optional chaining."""
    text = str(exc)
    if "no such key:" in text and not text.endswith(_NO_SUCH_KEY_HINT):
        text += _NO_SUCH_KEY_HINT
    return text


class SelectorFailure:
    """Why a selector list could not be evaluated on a device (formatted when the search reaches it)."""

    __slots__ = ("compile", "class_name", "index", "message", "device_id")

    def __init__(self, compile_: bool, class_name: str | None, index: int, message: str, device_id: str) -> None:
        self.compile = compile_
        self.class_name = class_name
        self.index = index
        self.message = message
        self.device_id = device_id

    def error(self, claim_ref: str) -> SelectorError:
        who = f"class {self.class_name}" if self.class_name is not None else f"claim {claim_ref}"
        if self.compile:
            return SelectorError(f"{who}: selector #{self.index}: CEL compile error: {self.message}")
        return SelectorError(f"{who}: selector #{self.index} on device {self.device_id}: CEL runtime error: {self.message}")

    def __repr__(self) -> str:  # for explanations
        return self.message


_COMPILE_ERROR = object()
_COMPILED_MAX = 4096


class SelectorCache:
    """The compiled expressions an allocator has used (compile errors included) and the evaluation helpers."""

    __slots__ = ("_compiled",)

    def __init__(self) -> None:
        self._compiled: dict[str, Any] = {}

    def compiled(self, expr: str) -> Any:
        c = self._compiled.get(expr)
        if c is None:
            try:
                c = compile_selector(expr)
            except Exception as exc:  # noqa: BLE001 - CELCompileError, or a crash: both are compile errors here
                c = (_COMPILE_ERROR, compile_message(exc))
            if len(self._compiled) >= _COMPILED_MAX:
                self._compiled.clear()
            self._compiled[expr] = c
        return c

    def expr_outcome(self, info: Any, expr: str) -> Any:
        """True / False / ("compile"|"runtime", message) for one expression on one device."""
        cache = info.expr_cache
        out = cache.get(expr)
        if out is not None:
            return out
        c = self.compiled(expr)
        if type(c) is tuple:
            out = ("compile", c[1])
        else:
            try:
                out = bool(c.matches(info.device, info.driver, info.cel_input()))
            except Exception as exc:  # noqa: BLE001 - CELRuntimeError, or a crash: never a traceback
                out = ("runtime", runtime_message(exc))
        cache[expr] = out
        return out

    def outcome(self, info: Any, key: Any, class_name: str | None, class_exprs: tuple[str, ...],
                request_exprs: tuple[str, ...]) -> Any:
        """Combined class-then-request outcome: True, False or a SelectorFailure. Cached per device."""
        cache = info.match_cache
        out = cache.get(key)
        if out is not None:
            return out
        out = True
        for src, exprs in ((class_name, class_exprs), (None, request_exprs)):
            for i, expr in enumerate(exprs):
                o = self.expr_outcome(info, expr)
                if o is True:
                    continue
                if o is False:
                    out = False
                else:
                    out = SelectorFailure(o[0] == "compile", src, i, o[1], info.id)
                break
            if out is not True:
                break
        cache[key] = out
        return out
