"""The CEL environment of admission expressions (k8s.io/apiserver/pkg/admission/plugin/cel): what a
ValidatingAdmissionPolicy's validations, messageExpressions, variables and matchConditions, and a webhook's
matchConditions, are compiled against.

Declared, as kube-apiserver declares them: ``object`` and ``oldObject`` (dyn: the request's objects),
``request`` and ``namespaceObject`` (kube-apiserver gives them object types; here they are maps, so a field
upstream does not declare is found missing when evaluated rather than refused when compiled), ``params`` (dyn,
only when the policy has a paramKind), ``authorizer`` (declared so that expressions using it compile; its
checks fail when evaluated, see the README) and ``variables`` (a map of the policy's variables, evaluated when
first read). An expression is compiled once per text and set of declarations."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from dralloc.cel import CELCompileError, Program, compile_expression

AUTHORIZER_TYPE = "kubernetes.authorization.Authorizer"


@dataclass(frozen=True, slots=True)
class Declarations:
    """Which optional variables an expression may use (upstream's OptionalVariableDeclarations, plus whether
    the policy declares variables: composition)."""

    params: bool = False
    authorizer: bool = False
    variables: bool = False

    def table(self) -> dict[str, str]:
        declared = {"object": "dyn", "oldObject": "dyn", "request": "map(string, dyn)",
                    "namespaceObject": "map(string, dyn)"}
        if self.params:
            declared["params"] = "dyn"
        if self.authorizer:
            declared["authorizer"] = AUTHORIZER_TYPE
        if self.variables:
            declared["variables"] = "map(string, dyn)"
        return declared


@dataclass(frozen=True, slots=True)
class Compiled:
    """An expression compiled for one return type: its program, or kube-apiserver's error detail (``error``)."""

    program: Program | None
    error: str = ""


@lru_cache(maxsize=4096)
def compile_admission(expression: str, returns: str, declarations: Declarations) -> Compiled:
    """``expression`` compiled as kube-apiserver's admission compiler does: ``compilation failed: <cel-go's
    issues>``, or ``must evaluate to <type>`` when its type is not ``returns`` ("" accepts any type: a
    variable's)."""
    try:
        program = compile_expression(expression, declarations.table())
    except CELCompileError as exc:
        return Compiled(None, f"compilation failed: {exc}")
    if returns and program.result_type != returns:
        return Compiled(None, f"must evaluate to {returns}")
    return Compiled(program)
