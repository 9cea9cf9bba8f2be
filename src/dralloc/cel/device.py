"""The DRA selector environment: the ``device`` variable and compiled selectors.

``device`` has ``driver`` (string), ``attributes`` and ``capacity`` (domain → name → value; an unknown domain
is an empty map), and ``allowMultipleAllocations`` (bool). Attribute and capacity names without a domain
belong to the driver's domain, as upstream's parseQualifiedName places them; version attributes become
semver values, list attributes lists, capacities quantities.

Devices are converted once: the activation is cached per device object (and driver), so evaluating many
selectors on many devices converts each device a single time. A slice's new generation brings new device
objects, so the cache never serves stale values.
"""

from __future__ import annotations

import functools
from typing import Any

from dralloc.api.semver import Semver
from dralloc.cel.checker import Checker
from dralloc.cel.closures import COST_KEY, COST_LIMIT, DomainMap
from dralloc.cel.decls import DEFAULT_VERSION, DEVICE_TYPE_NAME, check_version, environment
from dralloc.cel.errors import CELCompileError, CELError, CELRuntimeError
from dralloc.cel.generate import DEVICE_TYPE, Env, Generator
from dralloc.cel.plan import plan
from dralloc.cel.syntax import parse
from dralloc.cel.types import obj

CEL_SELECTOR_MAX_LENGTH = 10 * 1024  # resourceapi.CELSelectorExpressionMaxLength
CEL_SELECTOR_MAX_COST = COST_LIMIT  # resourceapi.CELSelectorExpressionMaxCost


def _attribute_value(attr: Any) -> Any:
    if attr.string is not None:
        return attr.string
    if attr.int_ is not None:
        return attr.int_
    if attr.bool_ is not None:
        return attr.bool_
    if attr.version is not None:
        return Semver.parse(attr.version)
    if attr.strings is not None:
        return list(attr.strings)
    if attr.ints is not None:
        return list(attr.ints)
    if attr.bools is not None:
        return list(attr.bools)
    if attr.versions is not None:
        return [Semver.parse(v) for v in attr.versions]
    return None


def _split(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def _convert(device: Any, driver: str) -> dict[str, Any] | str:
    attributes: DomainMap = DomainMap()
    for name, attr in (device.attributes or {}).items():
        domain, ident = _split(name, driver)
        try:
            value = _attribute_value(attr)
        except ValueError as exc:
            return f"parse semantic version: {exc}"
        attributes.setdefault(domain, {})[ident] = value
    capacity: DomainMap = DomainMap()
    for name, cap in (device.capacity or {}).items():
        domain, ident = _split(name, driver)
        capacity.setdefault(domain, {})[ident] = cap.value
    return {"device": {
        "driver": driver,
        "attributes": attributes,
        "capacity": capacity,
        "allowMultipleAllocations": bool(device.allow_multiple_allocations),
    }}


def device_activation(device: Any, driver: str) -> dict[str, Any]:
    """The evaluation input of a device (callers that evaluate many selectors on one device keep it: the
    allocator caches it per device). Raises CELRuntimeError if the device cannot be represented (an
    unparsable version attribute)."""
    act = _convert(device, driver)
    if isinstance(act, str):
        raise CELRuntimeError(act)
    return act


class Selector:
    """A compiled device selector. ``matches(device, driver)`` → bool, or raises CELRuntimeError.
    ``max_cost`` is the estimated worst-case cost (cel-go's estimator with the DRA size limits)."""

    __slots__ = ("expression", "_fn", "_guarded", "max_cost")

    def __init__(self, expression: str, fn: Any, guarded: bool, max_cost: int = 0) -> None:
        self.expression = expression
        self._fn = fn
        self._guarded = guarded  # has comprehensions: enforce the runtime cost limit
        self.max_cost = max_cost

    def matches(self, device: Any, driver: str, activation: dict[str, Any] | None = None) -> bool:
        """``activation``: the device's :func:`device_activation`, when the caller keeps it."""
        act = activation if activation is not None else device_activation(device, driver)
        if self._guarded:
            act = {**act, COST_KEY: [0, CEL_SELECTOR_MAX_COST]}
        try:
            result = self._fn(act)
        except CELError as exc:
            raise CELRuntimeError(exc.message) from None
        except RecursionError:
            raise CELRuntimeError("expression recursion limit exceeded") from None
        if result is True or result is False:
            return result
        from dralloc.cel.values import type_name

        raise CELRuntimeError(f"CEL result of type {type_name(result)} could not be converted to bool")

    def __repr__(self) -> str:
        return f"Selector({self.expression!r})"


def compile_selector(expression: str, *, version: str = DEFAULT_VERSION) -> Selector:
    """Compile (or fetch from the cache) a DRA device selector with the CEL environment of a Kubernetes
    version ("1.31" … "1.36"). Raises CELCompileError (``.detail`` is kube-apiserver's message)."""
    compiled = _compiled(expression, version)
    if isinstance(compiled, CELCompileError):
        raise compiled
    return compiled


@functools.lru_cache(maxsize=50_000)
def _compiled(expression: str, version: str) -> Selector | CELCompileError:
    """A selector compiles to the same program every time (a compile error included), so each is compiled
    once per process."""
    return _compile(expression, check_version(version))


def _compile(expression: str, version: str) -> Selector | CELCompileError:
    from dralloc.cel.cost import estimate

    if len(expression.encode("utf-8")) > CEL_SELECTOR_MAX_LENGTH:
        return CELCompileError(f"expression too long ({len(expression.encode('utf-8'))} bytes, "
                               f"maximum {CEL_SELECTOR_MAX_LENGTH})")
    try:
        ast = parse(expression)
        checked = Checker(environment(version), expression, {"device": obj(DEVICE_TYPE_NAME)},
                          homogeneous_literals=True).run(ast)
        if checked.result.kind not in ("bool", "dyn"):
            return CELCompileError(f"must evaluate to bool or the unknown type, not {checked.result.type_name()}",
                                   prefix="")
        max_cost = estimate(checked)
        plan(checked)
        env = Env(variables={"device": DEVICE_TYPE})
        fn, _ = Generator(env, expression).compile(ast)
    except CELCompileError as exc:
        return exc
    except RecursionError:
        return CELCompileError("ERROR: <input>:1:1: expression recursion limit exceeded")
    return Selector(expression, fn, guarded="comp" in _kinds(ast), max_cost=max_cost)


def _kinds(node: Any) -> set[str]:
    kinds: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        kinds.add(n.kind)
        for a in n.args:
            if hasattr(a, "kind"):
                stack.append(a)
        if hasattr(n.target, "kind"):
            stack.append(n.target)
        if n.kind == "map":
            for k, v, _ in n.extra:
                stack.extend((k, v))
    return kinds


def check_selector(expression: str, *, version: str = DEFAULT_VERSION) -> list[str]:
    """Validation hook: the compile errors of a selector (empty when it compiles), as cel-go's issue text
    without kube-apiserver's prefix (``CELCompileError.detail`` carries it)."""
    try:
        compile_selector(expression, version=version)
    except CELCompileError as exc:
        return [str(exc)]
    return []


def estimate_cost(expression: str, *, version: str | None = None) -> int:
    """The estimated worst-case cost of a DRA selector (0 when it does not compile)."""
    try:
        return compile_selector(expression, version=version or DEFAULT_VERSION).max_cost
    except CELCompileError:
        return 0
