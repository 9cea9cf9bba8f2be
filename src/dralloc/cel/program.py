"""Compiled CEL programs: parse, check, compile once; evaluate many times."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dralloc.cel.checker import Checker, declared
from dralloc.cel.closures import COST_KEY, COST_LIMIT, ROOT_KEY
from dralloc.cel.cost import estimate
from dralloc.cel.decls import DEFAULT_VERSION, environment
from dralloc.cel.errors import CELCompileError, CELError, CELRuntimeError
from dralloc.cel.generate import Env, Generator
from dralloc.cel.plan import plan
from dralloc.cel.syntax import parse


class Program:
    """A compiled expression. ``evaluate(activation)`` returns the CEL value or raises CELRuntimeError."""

    __slots__ = ("expression", "_fn", "result_type", "cost_limit", "max_cost", "_needs_root")

    def __init__(self, expression: str, fn: Any, result_type: str, cost_limit: int | None,
                 max_cost: int | None = None, needs_root: bool = False) -> None:
        self._needs_root = needs_root
        self.expression = expression
        self._fn = fn
        self.result_type = result_type  # the checker's type (cel-go's spelling), "dyn" when not checked
        self.cost_limit = cost_limit
        self.max_cost = max_cost  # cel-go's estimated worst case (None when not checked)

    def evaluate(self, activation: dict[str, Any] | None = None) -> Any:
        act = dict(activation or {})
        if self._needs_root:
            act[ROOT_KEY] = dict(act)
        if self.cost_limit is not None:
            act[COST_KEY] = [0, self.cost_limit]
        try:
            return self._fn(act)
        except CELError as exc:
            raise CELRuntimeError(exc.message) from None
        except RecursionError:
            raise CELRuntimeError("expression recursion limit exceeded") from None

    def evaluate_counted(self, activation: dict[str, Any] | None = None) -> tuple[Any, int, CELRuntimeError | None]:
        """:meth:`evaluate`, with the runtime cost it spent, as the cost limit counts it (each comprehension
        step, weighed by its body), also when it fails: (value, cost, None) or (None, cost, the error)."""
        act = dict(activation or {})
        if self._needs_root:
            act[ROOT_KEY] = dict(act)
        spent = [0, self.cost_limit if self.cost_limit is not None else _NO_LIMIT]
        act[COST_KEY] = spent
        try:
            return self._fn(act), spent[0], None
        except CELError as exc:
            return None, spent[0], CELRuntimeError(exc.message)
        except RecursionError:
            return None, spent[0], CELRuntimeError("expression recursion limit exceeded")


_NO_LIMIT = 2**63 - 1  # (a program compiled without a cost limit still counts its cost)


def compile_expression(
    expression: str,
    declarations: dict[str, str] | None = None,
    *,
    container: str = "",
    homogeneous_literals: bool = False,
    macros: bool = True,
    check: bool = True,
    cost_limit: int | None = COST_LIMIT,
    version: str = DEFAULT_VERSION,
    functions: list[str] | None = None,
    escaped_identifiers: bool = False,
    cost_sizes: Mapping[tuple[str, ...], int] | None = None,
) -> Program:
    """Compile a CEL expression over declared variables (name → CEL type such as "int", "list(string)",
    "map(string, dyn)" or "dyn") with the functions of the Kubernetes ``version``: parse, type-check (unless
    ``check`` is False: parse-only semantics, type problems surface at evaluation), plan, generate.
    ``functions`` declares extra overloads for the checker (``"fn(string, int) -> string"``, see
    :mod:`dralloc.cel.decls`); ``escaped_identifiers`` allows cel-go's opt-in ``a.`b-c``` field syntax;
    ``cost_sizes`` gives the cost estimate the largest size of values by path (:func:`dralloc.cel.cost.estimate`).
    Raises CELCompileError."""
    try:
        ast = parse(expression, macros=macros, escaped_identifiers=escaped_identifiers)
        result_type = "dyn"
        max_cost = None
        if check:
            declarations_table = environment(version)
            if functions:
                declarations_table = declarations_table.extended(functions)
            checked = Checker(declarations_table, expression, declared(declarations), container, homogeneous_literals).run(ast)
            max_cost = estimate(checked, cost_sizes)
            plan(checked)
            result_type = checked.result.type_name()
        generator = Generator(Env(variables=dict(declarations or {}), container=container), expression)
        fn, _ = generator.compile(ast)
    except RecursionError:
        raise CELCompileError("ERROR: <input>:1:1: expression recursion limit exceeded") from None
    return Program(expression, fn, result_type, cost_limit, max_cost, generator.needs_root)
