"""CEL types for the checker: primitives, parameterised list/map/optional/type, object types, type parameters.

A :class:`Type` is immutable and compared by value. ``str(t)`` is cel-go's formatting in checker messages
(``list(int)``, ``map(string, dyn)``, ``optional_type(int)``, ``null``). Type parameters (``A``, ``_var0``)
are bound through a :class:`Mapping` while the checker unifies argument types with overload signatures; the
rules follow cel-go's checker: ``dyn`` and errors are assignable both ways, ``null`` to object and opaque
types, parameterised types parameter by parameter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

# kinds
DYN_K, ERROR_K, NULL_K, PARAM_K, TYPE_K = "dyn", "error", "null", "param", "type"
LIST_K, MAP_K, OPAQUE_K, STRUCT_K = "list", "map", "opaque", "struct"
PRIMITIVE_KINDS = frozenset({"bool", "int", "uint", "double", "string", "bytes", "duration", "timestamp"})


@dataclass(frozen=True, slots=True)
class Type:
    kind: str
    name: str
    params: tuple[Type, ...] = ()
    # whether a type parameter occurs in it (then unification may bind it); computed once, for speed
    open: bool = field(default=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "open", self.kind == PARAM_K or any(p.open for p in self.params))

    def __str__(self) -> str:
        if self.kind == ERROR_K:
            return "!error!"
        if self.kind == NULL_K:
            return "null"
        if not self.params:
            return self.name
        return f"{self.name}({', '.join(str(p) for p in self.params)})"

    def type_name(self) -> str:
        """cel-go's Type.String(): like ``str()`` but ``null_type`` for null (used in "must evaluate to")."""
        return "null_type" if self.kind == NULL_K else str(self)


def prim(name: str) -> Type:
    return Type(name, name)


DYN = Type(DYN_K, "dyn")
ERROR = Type(ERROR_K, "*error*")
NULL = Type(NULL_K, "null_type")
BOOL, INT, UINT, DOUBLE = prim("bool"), prim("int"), prim("uint"), prim("double")
STRING, BYTES = prim("string"), prim("bytes")
DURATION, TIMESTAMP = prim("duration"), prim("timestamp")
TYPE = Type(TYPE_K, "type")


def list_of(elem: Type) -> Type:
    return Type(LIST_K, "list", (elem,))


def map_of(key: Type, value: Type) -> Type:
    return Type(MAP_K, "map", (key, value))


def optional_of(t: Type) -> Type:
    return Type(OPAQUE_K, "optional_type", (t,))


def type_of(t: Type) -> Type:
    return Type(TYPE_K, "type", (t,))


def param(name: str) -> Type:
    return Type(PARAM_K, name)


def obj(name: str) -> Type:
    return Type(STRUCT_K, name)


def is_dyn_or_error(t: Type) -> bool:
    return t.kind in (DYN_K, ERROR_K)


def is_optional(t: Type) -> bool:
    return t.kind == OPAQUE_K and t.name == "optional_type"


# --- parsing declaration strings ("list(A)", "map(string, dyn)", "kubernetes.Quantity") -------------------

_NAMED = {"dyn": DYN, "bool": BOOL, "int": INT, "uint": UINT, "double": DOUBLE, "string": STRING, "bytes": BYTES,
          "null_type": NULL, "null": NULL, "type": TYPE, "duration": DURATION, "timestamp": TIMESTAMP,
          "google.protobuf.Duration": DURATION, "google.protobuf.Timestamp": TIMESTAMP, "any": DYN}


def parse_type(text: str, type_params: frozenset[str] = frozenset()) -> Type:
    """A type from its CEL spelling. Single upper-case letters (and names in ``type_params``) are type
    parameters; other dotted names are object types."""
    t, rest = _parse(text.replace(" ", ""), type_params)
    if rest:
        raise ValueError(f"bad type {text!r}")
    return t


def _parse(s: str, tp: frozenset[str]) -> tuple[Type, str]:
    i = 0
    while i < len(s) and s[i] not in "(),":
        i += 1
    name, rest = s[:i], s[i:]
    params: list[Type] = []
    if rest.startswith("("):
        rest = rest[1:]
        while True:
            p, rest = _parse(rest, tp)
            params.append(p)
            if rest.startswith(","):
                rest = rest[1:]
                continue
            if not rest.startswith(")"):
                raise ValueError(f"bad type {s!r}")
            rest = rest[1:]
            break
    if name == "list":
        return list_of(params[0] if params else DYN), rest
    if name == "map":
        return map_of(*(params or [DYN, DYN])), rest
    if name == "optional_type":
        return optional_of(params[0] if params else DYN), rest
    if name == "type" and params:
        return type_of(params[0]), rest
    if name in _NAMED:
        return _NAMED[name], rest
    if name in tp or (len(name) == 1 and name.isupper()):
        return param(name), rest
    if params:
        return Type(OPAQUE_K, name, tuple(params)), rest
    return obj(name), rest


# --- substitutions and assignability -------------------------------------------------------------------

Mapping = dict[str, Type]


def substitute(m: Mapping, t: Type, params_to_dyn: bool) -> Type:
    if not t.open:
        return t
    if t.kind == PARAM_K:
        bound = m.get(t.name)
        if bound is not None:
            return substitute(m, bound, params_to_dyn)
        return DYN if params_to_dyn else t
    if t.params:
        return Type(t.kind, t.name, tuple(substitute(m, p, params_to_dyn) for p in t.params))
    return t


def _less_specific(t1: Type, t2: Type) -> bool:
    """t1 is equal to or less specific than t2 (dyn and type parameters are the least specific)."""
    if t1.kind in (DYN_K, PARAM_K):
        return True
    if t2.kind in (DYN_K, PARAM_K):
        return False
    if t1.kind != t2.kind:
        return False
    if t1.kind in (OPAQUE_K, LIST_K, MAP_K):
        return t1.name == t2.name and len(t1.params) == len(t2.params) and all(
            _less_specific(a, b) for a, b in zip(t1.params, t2.params))
    if t1.kind == TYPE_K:
        return True
    return t1 == t2


def most_general(t1: Type, t2: Type) -> Type:
    if t2.kind == NULL_K and _nullable(t1):
        return t1  # a nullable type is more general than null (cel-spec legacy_nullable_types)
    return t1 if _less_specific(t1, t2) else t2


def _not_referenced_in(m: Mapping, t: Type, within: Type) -> bool:
    if t == within:
        return False
    if within.kind == PARAM_K:
        sub = m.get(within.name)
        return True if sub is None else _not_referenced_in(m, t, sub)
    return all(_not_referenced_in(m, t, p) for p in within.params)


def _valid_substitution(m: Mapping, t1: Type, t2: Type) -> tuple[bool, bool]:
    if t1 == t2:
        return True, True
    sub = m.get(t2.name)
    if sub is not None:
        if t1 == sub:
            return True, True
        if _assignable(m, t1, sub):
            new = most_general(t1, sub)
            if _not_referenced_in(m, t2, new):
                m[t2.name] = new
            return True, True
        return False, True
    if _not_referenced_in(m, t2, t1):
        m[t2.name] = t1
        return True, False
    return False, False


def _assignable(m: Mapping, t1: Type, t2: Type) -> bool:
    """Whether a value of type t2 may be used where t1 is expected (binding type parameters in ``m``)."""
    if t2.kind == PARAM_K:
        valid, has_sub = _valid_substitution(m, t1, t2)
        if valid:
            return True
        if has_sub:
            return False
    if t1.kind == PARAM_K:
        return _valid_substitution(m, t2, t1)[0]
    if is_dyn_or_error(t1) or is_dyn_or_error(t2):
        return True
    if t1.kind == NULL_K:
        return _nullable(t2)
    if t2.kind == NULL_K:
        return _nullable(t1)
    if t1.kind == TYPE_K:
        return t2.kind == TYPE_K
    if t1.kind in (OPAQUE_K, LIST_K, MAP_K):
        return t1.kind == t2.kind and t1.name == t2.name and len(t1.params) == len(t2.params) and all(
            _assignable(m, a, b) for a, b in zip(t1.params, t2.params))
    return t1 == t2


def _nullable(t: Type) -> bool:
    return t.kind in (OPAQUE_K, STRUCT_K, "duration", "timestamp", NULL_K)


def assignable(m: Mapping, t1: Type, t2: Type) -> Mapping | None:
    """The extended mapping if t2 is assignable to t1, else None (``m`` is left untouched)."""
    trial = dict(m)
    return trial if _assignable(trial, t1, t2) else None


def assignable_list(m: Mapping, l1: list[Type] | tuple[Type, ...], l2: list[Type] | tuple[Type, ...]) \
        -> Mapping | None:
    if len(l1) != len(l2):
        return None
    trial = dict(m)
    for a, b in zip(l1, l2):
        if not _assignable(trial, a, b):
            return None
    return trial


def has_params(t: Type) -> bool:
    """Whether a type mentions a type parameter (then assignability may bind it)."""
    return t.open


@lru_cache(maxsize=16384)
def simple_assignable(t1: Type, t2: Type) -> bool:
    """Assignability of two types without type parameters (no binding needed)."""
    return _assignable({}, t1, t2)


def equivalent(t1: Type, t2: Type) -> bool:
    """Same type, ignoring type parameter names (cel-go's IsEquivalentType)."""
    if t1.kind != t2.kind or len(t1.params) != len(t2.params):
        return False
    if t1.kind != PARAM_K and t1.name != t2.name:
        return False
    return all(equivalent(a, b) for a, b in zip(t1.params, t2.params))
