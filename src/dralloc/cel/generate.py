"""The generate phase: a checked and planned AST → Python closures.

Every node compiles to ``(fn, hint)``: ``fn(act)`` evaluates it against an activation (a dict of variable
values) and ``hint`` is what the generator knows statically about the value (a CEL type name, the DRA
device's maps, or ``"dyn"``), used to pick fast paths such as one closure for
``device.attributes["domain"].name``. All rejection happens before, in :mod:`dralloc.cel.checker`; a
program compiled without the check phase (parse-only semantics) meets type problems at evaluation, and the
generated code raises cel-go's runtime errors (``no such overload``, ``no such key``).

Evaluation errors are raised as :class:`CELError`; ``&&``, ``||``, ``all`` and ``exists`` absorb them the way
CEL's commutative logic requires (``false && error`` is false, ``error && false`` is false too).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dralloc.api.quantity import Quantity
from dralloc.api.semver import Semver
from dralloc.cel import library
from dralloc.cel.errors import CELError
from dralloc.cel.syntax import Node, UInt
from dralloc.cel.timevalues import Duration, Timestamp
from dralloc.cel.values import (
    INT64_MAX,
    INT64_MIN,
    NONE,
    TYPES,
    UINT64_MAX,
    CelType,
    Optional,
    check_int,
    compare,
    equal_op,
    equals,
    map_get,
    map_key_ok,
    no_overload,
    type_name,
)

Fn = Callable[[dict[str, Any]], Any]

COST_LIMIT = 1_000_000
COST_KEY = "@cost"

DYN = "dyn"

TYPE_IDENTS = {"bool", "int", "uint", "double", "string", "bytes", "list", "map", "null_type", "type", "optional_type"}


class DomainMap(dict[str, Any]):
    """``device.attributes`` / ``device.capacity``: an unknown domain is an empty map, as upstream does."""

    __slots__ = ()


_EMPTY: dict[str, Any] = {}


@dataclass
class Env:
    """What a program may reference: declared variables (name → static type) and options."""

    variables: dict[str, str] = field(default_factory=dict)
    container: str = ""


def _map_value_type(t: str) -> str:
    if t.startswith("map(") and t.endswith(")"):
        inner = t[4:-1]
        depth = 0
        for i, ch in enumerate(inner):
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            elif ch == "," and depth == 0:
                return inner[i + 1:].strip()
    return DYN


def _list_elem_type(t: str) -> str:
    if t.startswith("list(") and t.endswith(")"):
        return t[5:-1].strip()
    return DYN


def _kind(t: str) -> str:
    """The type's constructor: list(int) → list, map(string, dyn) → map."""
    if t.startswith("list("):
        return "list"
    if t.startswith("map(") or t.startswith("dra.domainmap("):
        return "map"
    if t.startswith("optional_type("):
        return "optional_type"
    return t


# The DRA device object type (k8s.io/dynamic-resource-allocation/cel: kubernetes.DRADevice).
DEVICE_TYPE = "kubernetes.DRADevice"
DEVICE_FIELDS = {
    "driver": "string",
    "attributes": "dra.domainmap(map(string, dyn))",
    "capacity": "dra.domainmap(map(string, kubernetes.Quantity))",
    "allowMultipleAllocations": "bool",
}


class Generator:
    def __init__(self, env: Env, text: str) -> None:
        self.env = env
        self.text = text
        self.locals: dict[str, str] = {}
        self.needs_root = False  # the program reads a variable hidden by a comprehension variable

    def undeclared(self, node: Node, message: str) -> tuple[Fn, str]:
        """A reference the checker would reject; unchecked (parse-only) programs fail when they reach it."""
        return _raise(message), DYN

    # --- entry --------------------------------------------------------------------------------------

    def compile(self, node: Node) -> tuple[Fn, str]:
        method = getattr(self, "_" + node.kind)
        return method(node)

    # --- leaves -------------------------------------------------------------------------------------

    def _lit(self, node: Node) -> tuple[Fn, str]:
        return _const(node.value), type_name(node.value)

    def _ident(self, node: Node) -> tuple[Fn, str]:
        if isinstance(node.extra, tuple) and node.extra[0] == "type":
            return _const(TYPES.get(node.extra[1]) or CelType(node.extra[1])), "type"
        name = node.value
        if name in self.locals:
            return _var(name), self.locals[name]
        resolved = self._resolve(name)
        if resolved is not None:
            if name.startswith(".") and resolved in self.locals:
                # ".y" names the declared variable even where a comprehension variable y hides it
                self.needs_root = True
                return _root_var(resolved), self.env.variables[resolved]
            return _var(resolved), self.env.variables[resolved]
        if name in TYPE_IDENTS:
            return _const(TYPES.get(name) or CelType(name)), "type"
        if name.lstrip(".") in TYPE_IDENTS:
            return _const(TYPES.get(name.lstrip(".")) or CelType(name.lstrip("."))), "type"
        return self.undeclared(node, f"undeclared reference to '{name.lstrip('.')}' (in container '{self.env.container}')")

    def _resolve(self, name: str) -> str | None:
        """Resolve a (possibly qualified) variable name against the container, as CEL namespaces do."""
        if name.startswith("."):
            bare = name[1:]
            return bare if bare in self.env.variables else None
        container = self.env.container
        candidates = []
        while container:
            candidates.append(f"{container}.{name}")
            container = container.rpartition(".")[0]
        candidates.append(name)
        for c in candidates:
            if c in self.env.variables:
                return c
        return None

    def _qualified(self, node: Node) -> str | None:
        """``a.b.c`` as a dotted name if the select chain is made of identifiers only."""
        parts = []
        while node.kind == "select" and not node.test_only and not node.optional:
            parts.append(node.value)
            node = node.target
        if node.kind != "ident":
            return None
        parts.append(node.value)
        return ".".join(reversed(parts))

    # --- select -------------------------------------------------------------------------------------

    def _select(self, node: Node) -> tuple[Fn, str]:
        if isinstance(node.extra, tuple) and node.extra[0] == "type":  # the checker resolved a type's name
            return _const(TYPES.get(node.extra[1]) or CelType(node.extra[1])), "type"
        # A qualified variable name (e.g. a declared "a.b.c") wins over field selection.
        if not node.test_only and not node.optional:
            qname = self._qualified(node)
            if qname is not None and qname.split(".")[0].lstrip(".") not in self.locals:
                resolved = self._resolve(qname)
                if resolved is not None:
                    return _var(resolved), self.env.variables[resolved]
        fused = self._fused_device_select(node)
        if fused is not None:
            return fused
        target_fn, target_type = self.compile(node.target)
        name = node.value
        if target_type == DEVICE_TYPE:
            if name not in DEVICE_FIELDS:
                return self.undeclared(node, f"undefined field '{name}'")
            ftype = DEVICE_FIELDS[name]
            if node.test_only:
                return (lambda act: True), "bool"
            return _device_field(target_fn, name), ftype
        value_type = _map_value_type(target_type[len("dra.domainmap("):-1]) if target_type.startswith("dra.") \
            else _map_value_type(target_type)
        if node.test_only:
            return _has(target_fn, name), "bool"
        if node.optional:
            return _opt_select(target_fn, name), "optional_type"
        if target_type.startswith("dra.domainmap("):
            return _domain_select(target_fn, name), target_type[len("dra.domainmap("):-1]
        return _select(target_fn, name), value_type

    def _is_device(self, node: Node) -> bool:
        return node.kind == "ident" and node.value == "device" and "device" not in self.locals and \
            self.env.variables.get("device") == DEVICE_TYPE

    def _fused_device_select(self, node: Node) -> tuple[Fn, str] | None:
        """Hot paths of DRA selectors compiled into one closure each:
        ``device.driver`` and ``device.attributes["domain"].name`` / ``device.capacity["domain"].name``."""
        if node.test_only or node.optional:
            return None
        target = node.target
        if self._is_device(target) and node.value in DEVICE_FIELDS:
            field_name = node.value

            def device_field(act: dict[str, Any]) -> Any:
                return act["device"][field_name]

            return device_field, DEVICE_FIELDS[field_name]
        if not (target.kind == "call" and target.value == "_[_]" and not target.optional):
            return None
        coll, key = target.args
        if not (coll.kind == "select" and not coll.test_only and not coll.optional and self._is_device(coll.target)
                and coll.value in ("attributes", "capacity") and key.kind == "lit" and type(key.value) is str):
            return None
        group, domain, name = coll.value, key.value, node.value

        def domain_field(act: dict[str, Any]) -> Any:
            try:
                return act["device"][group].get(domain, _EMPTY)[name]
            except KeyError:
                raise CELError(f"no such key: {name}") from None

        return domain_field, "kubernetes.Quantity" if group == "capacity" else DYN

    # --- literals -----------------------------------------------------------------------------------

    def _list(self, node: Node) -> tuple[Fn, str]:
        compiled = [self.compile(e) for e in node.args]
        optional = set(node.extra or ())
        elem_type = _common([t if i not in optional else _opt_inner(t) for i, (_, t) in enumerate(compiled)])
        fns = [f for f, _ in compiled]
        if optional:
            flags = [i in optional for i in range(len(fns))]

            def build_opt(act: dict[str, Any]) -> list[Any]:
                out = []
                for f, is_opt in zip(fns, flags):
                    v = f(act)
                    if is_opt:
                        if type(v) is not Optional:
                            raise no_overload("optional list element", v)
                        if v.present:
                            out.append(v.value)
                    else:
                        out.append(v)
                return out

            return build_opt, "list"
        if all(_is_const(f) for f in fns):
            values = [f({}) for f in fns]
            return (lambda act: list(values)), f"list({elem_type})"
        return (lambda act: [f(act) for f in fns]), f"list({elem_type})"

    def _map(self, node: Node) -> tuple[Fn, str]:
        entries = []
        key_types, value_types = [], []
        for key, value, optional in node.extra:
            kf, kt = self.compile(key)
            vf, vt = self.compile(value)
            key_types.append(kt)
            value_types.append(vt if not optional else _opt_inner(vt))
            entries.append((kf, vf, optional))
        kt = _common(key_types)
        vt = _common(value_types)

        def build(act: dict[str, Any]) -> dict[Any, Any]:
            out: dict[Any, Any] = {}
            for kf, vf, optional in entries:
                k = kf(act)
                if not map_key_ok(k):
                    raise CELError(f"unsupported key type: {type_name(k)}")
                found, _ = map_get(out, k)
                if found:
                    raise CELError(f"Failed with repeated key: {_key_text(k)}")
                v = vf(act)
                if optional:
                    if type(v) is not Optional:
                        raise no_overload("optional map entry", v)
                    if not v.present:
                        continue
                    v = v.value
                out[k] = v
            return out

        return build, f"map({kt}, {vt})"

    def _struct(self, node: Node) -> tuple[Fn, str]:
        return self.undeclared(node, f"undeclared reference to '{node.value}' (in container '{self.env.container}')")

    # --- bind and comprehensions ----------------------------------------------------------------------

    def _bind(self, node: Node) -> tuple[Fn, str]:
        name = node.value
        init_fn, init_type = self.compile(node.args[0])
        saved = self.locals.get(name)
        self.locals[name] = init_type
        try:
            body_fn, body_type = self.compile(node.args[1])
        finally:
            _restore(self.locals, name, saved)

        def bind(act: dict[str, Any]) -> Any:
            old = act.get(name, _MISSING)
            act[name] = init_fn(act)
            try:
                return body_fn(act)
            finally:
                if old is _MISSING:
                    act.pop(name, None)
                else:
                    act[name] = old

        return bind, body_type

    def _comp(self, node: Node) -> tuple[Fn, str]:
        kind = node.value
        v1, v2 = node.extra
        range_fn, range_type = self.compile(node.target)
        if kind in ("optMap", "optFlatMap"):
            elem_type = DYN
        elif _kind(range_type) == "list":
            elem_type = _list_elem_type(range_type)
        elif _kind(range_type) == "map":
            elem_type = range_type[4:-1].split(",")[0].strip() if range_type.startswith("map(") else DYN
        else:
            elem_type = DYN
        saved = {v: self.locals.get(v) for v in (v1, v2) if v}
        if v2:
            self.locals[v1] = "int" if _kind(range_type) == "list" else elem_type
            self.locals[v2] = elem_type if _kind(range_type) == "list" else _map_value_type(range_type)
        else:
            self.locals[v1] = elem_type
        try:
            bodies = [self.compile(b) for b in node.args]
        finally:
            for v, old in saved.items():
                _restore(self.locals, v, old)
        weight = 1 + _count(node.args)
        fns = [f for f, _ in bodies]
        builder = _COMPREHENSIONS[kind]
        result_type = {"all": "bool", "exists": "bool", "exists_one": "bool", "filter": range_type,
                       "map": "list", "transformList": "list", "transformMap": "map", "transformMapEntry": "map",
                       "sortBy": range_type, "optMap": "optional_type", "optFlatMap": "optional_type"}[kind]
        return builder(range_fn, v1, v2, fns, weight), result_type

    # --- calls --------------------------------------------------------------------------------------

    def _call(self, node: Node) -> tuple[Fn, str]:
        name = node.value
        special = getattr(self, "_op_" + _OP_METHODS.get(name, ""), None) if name in _OP_METHODS else None
        if special is not None:
            return special(node)
        if isinstance(node.extra, tuple) and node.extra[0] == "function":
            # the checker resolved a (possibly namespaced) global function
            if node.extra[1] in library.GLOBALS:
                return self._global_call(node, node.extra[1])
            return self.undeclared(node, f"undeclared reference to '{node.extra[1]}'")
        if node.target is not None:
            qname = self._qualified(node.target)
            if qname is not None and self._resolve(qname) is None and qname.split(".")[0] not in self.locals:
                full = f"{qname}.{name}"
                if full in library.GLOBALS:
                    return self._global_call(node, full)
                if qname.split(".")[0] not in TYPE_IDENTS and name not in library.MEMBERS:
                    return self.undeclared(node, f"undeclared reference to '{full}' (in container '{self.env.container}')")
            return self._member_call(node)
        if name in library.GLOBALS:
            return self._global_call(node, name)
        return self.undeclared(node, f"undeclared reference to '{name}' (in container '{self.env.container}')")

    def _global_call(self, node: Node, name: str) -> tuple[Fn, str]:
        compiled = [self.compile(a) for a in node.args]
        impl = library.GLOBALS[name]
        fns = [f for f, _ in compiled]
        result = library.RESULT_TYPES.get(name, DYN)
        if name == "dyn":
            return fns[0], DYN
        if len(fns) == 1:
            f0 = fns[0]
            if _is_const(f0) and name in ("quantity", "semver"):
                try:
                    value = impl(f0({}))
                except CELError:
                    pass  # reported when evaluated, as upstream does for non-literal validation
                else:
                    return _const(value), result
            return _call1(impl, f0), result
        return _calln(impl, fns), result


    def _member_call(self, node: Node) -> tuple[Fn, str]:
        name = node.value
        impl = library.MEMBERS.get(name)
        if impl is None:
            return self.undeclared(node, f"undeclared reference to '{name}' (in container '{self.env.container}')")
        target_fn, target_type = self.compile(node.target)
        compiled = [self.compile(a) for a in node.args]
        fns = [f for f, _ in compiled]
        result = library.RESULT_TYPES.get(name, DYN)
        if name in ("min", "max", "sum") and _kind(target_type) == "list":
            result = _list_elem_type(target_type)
        if name in ("value", "orValue"):
            result = DYN
        if not fns:
            return _call1(impl, target_fn), result
        if len(fns) == 1:
            f1 = fns[0]
            return _call2(impl, target_fn, f1), result
        return _calln(impl, [target_fn, *fns]), result


    # --- operators ----------------------------------------------------------------------------------

    def _op_and(self, node: Node) -> tuple[Fn, str]:
        (a, _), (b, _) = self.compile(node.args[0]), self.compile(node.args[1])
        return _and(a, b), "bool"

    def _op_or(self, node: Node) -> tuple[Fn, str]:
        (a, _), (b, _) = self.compile(node.args[0]), self.compile(node.args[1])
        return _or(a, b), "bool"

    def _op_not(self, node: Node) -> tuple[Fn, str]:
        f, _ = self.compile(node.args[0])

        def not_(act: dict[str, Any]) -> bool:
            v = f(act)
            if v is True:
                return False
            if v is False:
                return True
            raise no_overload("!_", v)

        return not_, "bool"

    def _op_neg(self, node: Node) -> tuple[Fn, str]:
        f, t = self.compile(node.args[0])

        def neg(act: dict[str, Any]) -> Any:
            v = f(act)
            tv = type(v)
            if tv is int:
                return check_int(-v)
            if tv is float:
                return -v
            raise no_overload("-_", v)

        return neg, t

    def _op_cond(self, node: Node) -> tuple[Fn, str]:
        (c, _), (a, ta), (b, tb) = (self.compile(x) for x in node.args)

        def cond(act: dict[str, Any]) -> Any:
            v = c(act)
            if v is True:
                return a(act)
            if v is False:
                return b(act)
            raise no_overload("_?_:_", v)

        return cond, ta if ta == tb else DYN

    def _op_eq(self, node: Node) -> tuple[Fn, str]:
        return self._equality(node, negate=False)

    def _op_ne(self, node: Node) -> tuple[Fn, str]:
        return self._equality(node, negate=True)

    def _equality(self, node: Node, negate: bool) -> tuple[Fn, str]:
        (a, _), (b, _) = self.compile(node.args[0]), self.compile(node.args[1])
        if _is_const(b):
            c = b({})
            ct = type(c)
            if ct is str or ct is bool:
                if negate:
                    return (lambda act: not _eq_const(a(act), c, ct, equals)), "bool"
                return (lambda act: _eq_const(a(act), c, ct, equal_op)), "bool"
        # != is "not (left == right) is true": it never fails where == does (cel-go's evalNe)
        if negate:
            return (lambda act: not equals(a(act), b(act))), "bool"
        return (lambda act: equal_op(a(act), b(act))), "bool"

    def _relational(self, node: Node, op: str, test: Callable[[int], bool]) -> tuple[Fn, str]:
        (a, _), (b, _) = self.compile(node.args[0]), self.compile(node.args[1])

        def rel(act: dict[str, Any]) -> bool:
            r = compare(a(act), b(act), op)
            return False if r == 2 else test(r)

        return rel, "bool"

    def _op_lt(self, node: Node) -> tuple[Fn, str]:
        return self._relational(node, "_<_", lambda r: r < 0)

    def _op_le(self, node: Node) -> tuple[Fn, str]:
        return self._relational(node, "_<=_", lambda r: r <= 0)

    def _op_gt(self, node: Node) -> tuple[Fn, str]:
        return self._relational(node, "_>_", lambda r: r > 0)

    def _op_ge(self, node: Node) -> tuple[Fn, str]:
        return self._relational(node, "_>=_", lambda r: r >= 0)

    def _op_in(self, node: Node) -> tuple[Fn, str]:
        (a, _), (b, _) = self.compile(node.args[0]), self.compile(node.args[1])

        def in_(act: dict[str, Any]) -> bool:
            x, coll = a(act), b(act)
            tc = type(coll)
            if tc is list or tc is tuple:
                return any(equals(x, y) for y in coll)
            if isinstance(coll, dict):
                return map_get(coll, x)[0]
            raise no_overload("@in", x, coll)

        return in_, "bool"

    def _op_index(self, node: Node) -> tuple[Fn, str]:
        (a, ta), (b, _) = self.compile(node.args[0]), self.compile(node.args[1])
        if node.optional:
            return _opt_index(a, b), "optional_type"
        if ta.startswith("dra.domainmap("):
            inner = ta[len("dra.domainmap("):-1]
            if _is_const(b):
                key = b({})
                return (lambda act: a(act).get(key, _EMPTY)), inner
            return (lambda act: _domain_index(a(act), b(act))), inner
        kind = _kind(ta)
        if kind == "list":
            return _index(a, b), _list_elem_type(ta)
        if kind == "map":
            return _index(a, b), _map_value_type(ta)
        return _index(a, b), DYN

    def _arith(self, node: Node, op: str) -> tuple[Fn, str]:
        (a, ta), (b, tb) = self.compile(node.args[0]), self.compile(node.args[1])
        ka, kb = _kind(ta), _kind(tb)
        impl = _ARITH[op]
        rt = ta if ta != DYN else tb
        if ka == "list" or kb == "list":
            rt = "list" if ta != tb else ta
        return (lambda act: impl(a(act), b(act))), rt

    def _op_add(self, node: Node) -> tuple[Fn, str]:
        return self._arith(node, "_+_")

    def _op_sub(self, node: Node) -> tuple[Fn, str]:
        return self._arith(node, "_-_")

    def _op_mul(self, node: Node) -> tuple[Fn, str]:
        return self._arith(node, "_*_")

    def _op_div(self, node: Node) -> tuple[Fn, str]:
        return self._arith(node, "_/_")

    def _op_mod(self, node: Node) -> tuple[Fn, str]:
        return self._arith(node, "_%_")


_OP_METHODS = {
    "_&&_": "and", "_||_": "or", "!_": "not", "-_": "neg", "_?_:_": "cond", "_==_": "eq", "_!=_": "ne",
    "_<_": "lt", "_<=_": "le", "_>_": "gt", "_>=_": "ge", "@in": "in", "_[_]": "index",
    "_+_": "add", "_-_": "sub", "_*_": "mul", "_/_": "div", "_%_": "mod",
}

_MISSING = object()


def _restore(d: dict[str, Any], key: str, old: Any) -> None:
    if old is None:
        d.pop(key, None)
    else:
        d[key] = old


def _common(types: list[str]) -> str:
    """The static type of a literal's elements: the one known type they share, else dyn."""
    known = {t for t in types if t != DYN}
    if len(known) == 1 and len(known) == len(set(types)):
        return known.pop()
    return DYN


def _opt_inner(t: str) -> str:
    return DYN


def _count(nodes: list[Node]) -> int:
    total = 0
    stack = list(nodes)
    while stack:
        n = stack.pop()
        total += 1
        if isinstance(n, Node):
            stack.extend(a for a in n.args if isinstance(a, Node))
            if isinstance(n.target, Node):
                stack.append(n.target)
    return total


def _key_text(k: Any) -> str:
    return str(k).lower() if type(k) is bool else str(k)


def _const(value: Any) -> Fn:
    def const(act: dict[str, Any]) -> Any:
        return value

    const.const = value  # type: ignore[attr-defined]
    return const


def _is_const(f: Fn) -> bool:
    return hasattr(f, "const")


ROOT_KEY = "@root"  # the activation as given, for root-scope references (".y") under a shadowing variable


def _root_var(name: str) -> Fn:
    def root_var(act: dict[str, Any]) -> Any:
        try:
            return act.get(ROOT_KEY, act)[name]
        except KeyError:
            raise CELError(f"no such attribute: {name}") from None

    return root_var


def _var(name: str) -> Fn:
    def var(act: dict[str, Any]) -> Any:
        try:
            return act[name]
        except KeyError:
            raise CELError(f"no such attribute: {name}") from None

    return var


def _device_field(target: Fn, name: str) -> Fn:
    def field_(act: dict[str, Any]) -> Any:
        return target(act)[name]

    return field_


def _select(target: Fn, name: str) -> Fn:
    def select(act: dict[str, Any]) -> Any:
        m = target(act)
        if isinstance(m, dict):
            try:
                return m[name]
            except KeyError:
                raise CELError(f"no such key: {name}") from None
        if type(m) is Optional:  # optional chaining: opt.f is opt.?f
            if not m.present:
                return NONE
            inner = m.value
            if isinstance(inner, dict):
                return Optional(inner[name], True) if name in inner else NONE
            raise CELError(f"type '{type_name(inner)}' does not support field selection")
        raise CELError(f"type '{type_name(m)}' does not support field selection")

    return select


def _domain_select(target: Fn, name: str) -> Fn:
    def select(act: dict[str, Any]) -> Any:
        return target(act).get(name, _EMPTY)

    return select


def _has(target: Fn, name: str) -> Fn:
    def has(act: dict[str, Any]) -> bool:
        m = target(act)
        if type(m) is DomainMap:
            # upstream's domain maps find every domain (an unknown one is an empty map), and has() asks Find
            return True
        if isinstance(m, dict):
            return name in m
        if type(m) is Optional:
            return m.present and isinstance(m.value, dict) and name in m.value
        raise CELError(f"invalid type for field selection: {type_name(m)}")

    return has


def _opt_select(target: Fn, name: str) -> Fn:
    def opt_select(act: dict[str, Any]) -> Optional:
        m = target(act)
        if type(m) is Optional:
            if not m.present:
                return NONE
            m = m.value
        if type(m) is DomainMap:  # every domain is found, as has() sees it
            return Optional(m.get(name, _EMPTY), True)
        if isinstance(m, dict):
            if name in m:
                return Optional(m[name], True)
            return NONE
        raise CELError(f"type '{type_name(m)}' does not support field selection")

    return opt_select


def _index_value(coll: Any, key: Any) -> Any:
    tc = type(coll)
    if tc is list or tc is tuple:
        tk = type(key)
        if tk is int or tk is UInt:
            i = int(key)
        elif tk is float and key.is_integer():
            i = int(key)
        else:
            raise no_overload("_[_]", coll, key)
        if 0 <= i < len(coll):
            return coll[i]
        raise CELError(f"index out of bounds: {i}")
    if isinstance(coll, dict):
        if not map_key_ok(key) and type(key) is not float:
            raise no_overload("_[_]", coll, key)
        found, v = map_get(coll, key)
        if found:
            return v
        raise CELError(f"no such key: {_key_text(key)}")
    raise no_overload("_[_]", coll, key)


def _index(a: Fn, b: Fn) -> Fn:
    def index(act: dict[str, Any]) -> Any:
        coll = a(act)
        if type(coll) is Optional:
            if not coll.present:
                return NONE
            try:
                return Optional(_index_value(coll.value, b(act)), True)
            except CELError:
                return NONE
        return _index_value(coll, b(act))

    return index


def _opt_index(a: Fn, b: Fn) -> Fn:
    def opt_index(act: dict[str, Any]) -> Optional:
        coll = a(act)
        if type(coll) is Optional:
            if not coll.present:
                return NONE
            coll = coll.value
        key = b(act)
        if type(coll) is DomainMap and type(key) is str:
            return Optional(coll.get(key, _EMPTY), True)
        if isinstance(coll, dict):
            found, v = map_get(coll, key)
            return Optional(v, True) if found else NONE
        if type(coll) in (list, tuple):
            i = int(key) if type(key) in (int, UInt) else None
            if i is None:
                raise no_overload("_[?_]", coll, key)
            return Optional(coll[i], True) if 0 <= i < len(coll) else NONE
        raise no_overload("_[?_]", coll, key)

    return opt_index


def _domain_index(m: dict[str, Any], key: Any) -> Any:
    if type(key) is not str:
        raise no_overload("_[_]", m, key)
    return m.get(key, _EMPTY)


def _eq_const(v: Any, c: Any, ct: type, slow: Callable[[Any, Any], bool]) -> bool:
    if type(v) is ct:
        return v == c
    return slow(v, c)


def _raise(message: str) -> Fn:
    def fail(act: dict[str, Any]) -> Any:
        raise CELError(message)

    return fail


def _call1(impl: Callable[..., Any], f: Fn) -> Fn:
    def call(act: dict[str, Any]) -> Any:
        v = f(act)
        try:
            return impl(v)
        except TypeError:
            raise no_overload(getattr(impl, "__name__", "call").lstrip("_"), v) from None

    return call


def _calln(impl: Callable[..., Any], fns: list[Fn]) -> Fn:
    def call(act: dict[str, Any]) -> Any:
        args = [f(act) for f in fns]
        try:
            return impl(*args)
        except TypeError:
            raise no_overload(getattr(impl, "__name__", "call").lstrip("_"), *args) from None

    return call


def _call2(impl: Callable[..., Any], a: Fn, b: Fn) -> Fn:
    def call(act: dict[str, Any]) -> Any:
        x, y = a(act), b(act)
        try:
            return impl(x, y)
        except TypeError:
            raise no_overload(getattr(impl, "__name__", "call").lstrip("_"), x, y) from None

    return call


def _and(a: Fn, b: Fn) -> Fn:
    def and_(act: dict[str, Any]) -> bool:
        err: CELError | None = None
        try:
            x = a(act)
        except CELError as exc:
            err = exc
        else:
            if x is False:
                return False
            if x is not True:
                err = no_overload("_&&_", x)
        try:
            y = b(act)
        except CELError as exc:
            raise (err or exc) from None
        if y is False:
            return False
        if y is not True:
            raise err or no_overload("_&&_", y)
        if err is not None:
            raise err
        return True

    return and_


def _or(a: Fn, b: Fn) -> Fn:
    def or_(act: dict[str, Any]) -> bool:
        err: CELError | None = None
        try:
            x = a(act)
        except CELError as exc:
            err = exc
        else:
            if x is True:
                return True
            if x is not False:
                err = no_overload("_||_", x)
        try:
            y = b(act)
        except CELError as exc:
            raise (err or exc) from None
        if y is True:
            return True
        if y is not False:
            raise err or no_overload("_||_", y)
        if err is not None:
            raise err
        return False

    return or_


# --- arithmetic -------------------------------------------------------------------------------------


def _add(x: Any, y: Any) -> Any:
    tx, ty = type(x), type(y)
    if tx is int and ty is int:
        return check_int(x + y)
    if tx is Duration and ty is Duration:
        return Duration(x.nanos + y.nanos)
    if tx is Timestamp and ty is Duration:
        return Timestamp(x.nanos + y.nanos)
    if tx is Duration and ty is Timestamp:
        return Timestamp(x.nanos + y.nanos)
    if tx is ty:
        if tx is UInt:
            r = int(x) + int(y)
            if r > UINT64_MAX:
                raise CELError("unsigned integer overflow")
            return UInt(r)
        if tx is float or tx is str or tx is bytes:
            return x + y
        if tx is list:
            return x + y
    if tx in (list, tuple) and ty in (list, tuple):
        return list(x) + list(y)
    raise no_overload("_+_", x, y)


def _sub(x: Any, y: Any) -> Any:
    tx, ty = type(x), type(y)
    if tx is int and ty is int:
        return check_int(x - y)
    if tx is Duration and ty is Duration:
        return Duration(x.nanos - y.nanos)
    if tx is Timestamp and ty is Duration:
        return Timestamp(x.nanos - y.nanos)
    if tx is Timestamp and ty is Timestamp:
        return Duration(x.nanos - y.nanos)
    if tx is ty:
        if tx is UInt:
            r = int(x) - int(y)
            if r < 0:
                raise CELError("unsigned integer overflow")
            return UInt(r)
        if tx is float:
            return x - y
    raise no_overload("_-_", x, y)


def _mul(x: Any, y: Any) -> Any:
    tx, ty = type(x), type(y)
    if tx is int and ty is int:
        return check_int(x * y)
    if tx is ty:
        if tx is UInt:
            r = int(x) * int(y)
            if r > UINT64_MAX:
                raise CELError("unsigned integer overflow")
            return UInt(r)
        if tx is float:
            return x * y
    raise no_overload("_*_", x, y)


def _div(x: Any, y: Any) -> Any:
    tx, ty = type(x), type(y)
    if tx is int and ty is int:
        if y == 0:
            raise CELError("division by zero")
        if x == INT64_MIN and y == -1:
            raise CELError("integer overflow")
        q = abs(x) // abs(y)
        return q if (x >= 0) == (y > 0) else -q
    if tx is ty:
        if tx is UInt:
            if y == 0:
                raise CELError("division by zero")
            return UInt(int(x) // int(y))
        if tx is float:
            if y == 0:
                if x == 0 or math.isnan(x):
                    return math.nan
                return math.copysign(math.inf, x) * math.copysign(1, y)
            return x / y
    raise no_overload("_/_", x, y)


def _mod(x: Any, y: Any) -> Any:
    tx, ty = type(x), type(y)
    if tx is int and ty is int:
        if y == 0:
            raise CELError("modulus by zero")
        if x == INT64_MIN and y == -1:
            raise CELError("integer overflow")
        r = abs(x) % abs(y)
        return r if x >= 0 else -r
    if tx is ty and tx is UInt:
        if y == 0:
            raise CELError("modulus by zero")
        return UInt(int(x) % int(y))
    raise no_overload("_%_", x, y)


_ARITH = {"_+_": _add, "_-_": _sub, "_*_": _mul, "_/_": _div, "_%_": _mod}


# --- comprehensions ---------------------------------------------------------------------------------


def _charge(act: dict[str, Any], amount: int) -> None:
    cost = act.get(COST_KEY)
    if cost is not None:
        cost[0] += amount
        if cost[0] > cost[1]:
            raise CELError("operation cancelled: actual cost limit exceeded")


def _iter_pairs(coll: Any) -> list[tuple[Any, Any]]:
    t = type(coll)
    if t is list or t is tuple:
        return list(enumerate(coll))
    if isinstance(coll, dict):
        return list(coll.items())
    raise CELError(f"got '{_GO_TYPE_NAMES.get(type_name(coll), type_name(coll))}', expected iterable type")


# cel-go's Go type names, which its runtime errors print
_GO_TYPE_NAMES = {"int": "types.Int", "uint": "types.Uint", "double": "types.Double", "string": "types.String",
                  "bool": "types.Bool", "bytes": "types.Bytes", "null_type": "types.Null",
                  "kubernetes.Quantity": "cel.Quantity", "kubernetes.Semver": "cel.Semver",
                  "optional_type": "*types.Optional", "type": "*types.Type"}


class _Bound:
    """Bind comprehension variables in the activation and restore them afterwards."""

    __slots__ = ("act", "names", "saved")

    def __init__(self, act: dict[str, Any], names: tuple[str, ...]) -> None:
        self.act = act
        self.names = names
        self.saved = [act.get(n, _MISSING) for n in names]

    def restore(self) -> None:
        for n, old in zip(self.names, self.saved):
            if old is _MISSING:
                self.act.pop(n, None)
            else:
                self.act[n] = old


def _loop(range_fn: Fn, v1: str, v2: str | None, weight: int,
          body: Callable[[dict[str, Any], Any, Any], Any]) -> Fn:
    names = (v1, v2) if v2 else (v1,)

    def run(act: dict[str, Any]) -> Any:
        coll = range_fn(act)
        pairs = _iter_pairs(coll)
        is_list = type(coll) in (list, tuple)
        bound = _Bound(act, names)
        try:
            return body(act, pairs, is_list)
        finally:
            bound.restore()

    return run


def _assign(act: dict[str, Any], v1: str, v2: str | None, key: Any, value: Any, is_list: bool) -> None:
    if v2:
        act[v1] = key
        act[v2] = value
    else:
        act[v1] = value if is_list else key


def _each(act: dict[str, Any], pairs: list[Any], is_list: bool, v1: str, v2: str | None, weight: int) -> Any:
    """Iterate a comprehension's range: charge the cost, bind the variables, yield (key, value)."""
    for k, v in pairs:
        _charge(act, weight)
        _assign(act, v1, v2, k, v, is_list)
        yield k, v


def _keep(pred: Fn | None, act: dict[str, Any]) -> bool:
    """A comprehension filter's verdict (no filter keeps everything)."""
    if pred is None:
        return True
    r = pred(act)
    if r is True or r is False:
        return r
    raise no_overload("_?_:_", r)


def _comp_all(range_fn: Fn, v1: str, v2: str | None, fns: list[Fn], weight: int) -> Fn:
    pred = fns[0]

    def body(act: dict[str, Any], pairs: list[Any], is_list: bool) -> bool:
        err = None
        for _k, _v in _each(act, pairs, is_list, v1, v2, weight):
            try:
                r = pred(act)
            except CELError as exc:
                err = err or exc
                continue
            if r is False:
                return False
            if r is not True:
                err = err or no_overload("_&&_", r)
        if err is not None:
            raise err
        return True

    return _loop(range_fn, v1, v2, weight, body)


def _comp_exists(range_fn: Fn, v1: str, v2: str | None, fns: list[Fn], weight: int) -> Fn:
    pred = fns[0]

    def body(act: dict[str, Any], pairs: list[Any], is_list: bool) -> bool:
        err = None
        for _k, _v in _each(act, pairs, is_list, v1, v2, weight):
            try:
                r = pred(act)
            except CELError as exc:
                err = err or exc
                continue
            if r is True:
                return True
            if r is not False:
                err = err or no_overload("_||_", r)
        if err is not None:
            raise err
        return False

    return _loop(range_fn, v1, v2, weight, body)


def _comp_exists_one(range_fn: Fn, v1: str, v2: str | None, fns: list[Fn], weight: int) -> Fn:
    pred = fns[0]

    def body(act: dict[str, Any], pairs: list[Any], is_list: bool) -> bool:
        count = 0
        for _k, _v in _each(act, pairs, is_list, v1, v2, weight):
            r = pred(act)
            if r is True:
                count += 1
            elif r is not False:
                raise no_overload("_?_:_", r)
        return count == 1

    return _loop(range_fn, v1, v2, weight, body)


def _comp_filter(range_fn: Fn, v1: str, v2: str | None, fns: list[Fn], weight: int) -> Fn:
    pred = fns[0]

    def body(act: dict[str, Any], pairs: list[Any], is_list: bool) -> list[Any]:
        out = []
        for k, v in _each(act, pairs, is_list, v1, v2, weight):
            if _keep(pred, act):
                out.append(v if is_list else k)
        return out

    return _loop(range_fn, v1, v2, weight, body)


def _comp_map(range_fn: Fn, v1: str, v2: str | None, fns: list[Fn], weight: int) -> Fn:
    if len(fns) == 2:
        pred, expr = fns
    else:
        pred, expr = None, fns[0]

    def body(act: dict[str, Any], pairs: list[Any], is_list: bool) -> list[Any]:
        out = []
        for _k, _v in _each(act, pairs, is_list, v1, v2, weight):
            if not _keep(pred, act):
                continue
            out.append(expr(act))
        return out

    return _loop(range_fn, v1, v2, weight, body)


def _comp_transform_map(range_fn: Fn, v1: str, v2: str | None, fns: list[Fn], weight: int) -> Fn:
    pred, expr = (fns[0], fns[1]) if len(fns) == 2 else (None, fns[0])

    def body(act: dict[str, Any], pairs: list[Any], is_list: bool) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for k, _v in _each(act, pairs, is_list, v1, v2, weight):
            if not _keep(pred, act):
                continue
            out[k] = expr(act)
        return out

    return _loop(range_fn, v1, v2, weight, body)


def _comp_transform_entry(range_fn: Fn, v1: str, v2: str | None, fns: list[Fn], weight: int) -> Fn:
    pred, expr = (fns[0], fns[1]) if len(fns) == 2 else (None, fns[0])

    def body(act: dict[str, Any], pairs: list[Any], is_list: bool) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for _k, _v in _each(act, pairs, is_list, v1, v2, weight):
            if not _keep(pred, act):
                continue
            entry = expr(act)
            if not isinstance(entry, dict):
                raise no_overload("transformMapEntry", entry)
            for ek, ev in entry.items():
                if map_get(out, ek)[0]:
                    raise CELError(f"insert failed: key {_key_text(ek)} already exists")
                out[ek] = ev
        return out

    return _loop(range_fn, v1, v2, weight, body)


def _comp_sort_by(range_fn: Fn, v1: str, v2: str | None, fns: list[Fn], weight: int) -> Fn:
    key_fn = fns[0]

    def body(act: dict[str, Any], pairs: list[Any], is_list: bool) -> list[Any]:
        if not is_list:
            raise no_overload("sortBy", dict(pairs))
        keyed = []
        for _, v in pairs:
            _charge(act, weight)
            act[v1] = v
            keyed.append((key_fn(act), v))
        keys = [k for k, _ in keyed]
        library.sort_key_check(keys, "sortBy")
        return [v for _, v in sorted(keyed, key=lambda kv: kv[0])]

    return _loop(range_fn, v1, v2, weight, body)


def _comp_opt_map(range_fn: Fn, v1: str, v2: str | None, fns: list[Fn], weight: int, flat: bool = False) -> Fn:
    expr = fns[0]

    def run(act: dict[str, Any]) -> Any:
        opt = range_fn(act)
        if type(opt) is not Optional:
            raise no_overload("optMap", opt)
        if not opt.present:
            return NONE
        bound = _Bound(act, (v1,))
        try:
            act[v1] = opt.value
            r = expr(act)
        finally:
            bound.restore()
        if flat:
            if type(r) is not Optional:
                raise no_overload("optFlatMap", r)
            return r
        return Optional(r, True)

    return run


_COMPREHENSIONS: dict[str, Callable[..., Fn]] = {
    "all": _comp_all,
    "exists": _comp_exists,
    "exists_one": _comp_exists_one,
    "filter": _comp_filter,
    "map": _comp_map,
    "transformList": _comp_map,
    "transformMap": _comp_transform_map,
    "transformMapEntry": _comp_transform_entry,
    "sortBy": _comp_sort_by,
    "optMap": _comp_opt_map,
    "optFlatMap": lambda r, v1, v2, f, w: _comp_opt_map(r, v1, v2, f, w, flat=True),
}


__all__ = ["COST_KEY", "COST_LIMIT", "Generator", "DomainMap", "Env", "DEVICE_TYPE", "Quantity", "Semver",
           "INT64_MAX"]
