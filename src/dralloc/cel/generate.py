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

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dralloc.cel import arithmetic, closures, comprehensions, library
from dralloc.cel.closures import Fn
from dralloc.cel.errors import CELError
from dralloc.cel.syntax import Node
from dralloc.cel.values import (
    TYPES,
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

DYN = "dyn"

TYPE_IDENTS = {"bool", "int", "uint", "double", "string", "bytes", "list", "map", "null_type", "type", "optional_type"}


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
        return closures.raise_error(message), DYN

    # --- entry --------------------------------------------------------------------------------------

    def compile(self, node: Node) -> tuple[Fn, str]:
        method = getattr(self, "_" + node.kind)
        return method(node)

    # --- leaves -------------------------------------------------------------------------------------

    def _lit(self, node: Node) -> tuple[Fn, str]:
        return closures.const(node.value), type_name(node.value)

    def _ident(self, node: Node) -> tuple[Fn, str]:
        if isinstance(node.extra, tuple) and node.extra[0] == "type":
            return closures.const(TYPES.get(node.extra[1]) or CelType(node.extra[1])), "type"
        name = node.value
        if name in self.locals:
            return closures.var(name), self.locals[name]
        resolved = self._resolve(name)
        if resolved is not None:
            if name.startswith(".") and resolved in self.locals:
                # ".y" names the declared variable even where a comprehension variable y hides it
                self.needs_root = True
                return closures.root_var(resolved), self.env.variables[resolved]
            return closures.var(resolved), self.env.variables[resolved]
        if name in TYPE_IDENTS:
            return closures.const(TYPES.get(name) or CelType(name)), "type"
        if name.lstrip(".") in TYPE_IDENTS:
            return closures.const(TYPES.get(name.lstrip(".")) or CelType(name.lstrip("."))), "type"
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
            return closures.const(TYPES.get(node.extra[1]) or CelType(node.extra[1])), "type"
        # A qualified variable name (e.g. a declared "a.b.c") wins over field selection.
        if not node.test_only and not node.optional:
            qname = self._qualified(node)
            if qname is not None and qname.split(".")[0].lstrip(".") not in self.locals:
                resolved = self._resolve(qname)
                if resolved is not None:
                    return closures.var(resolved), self.env.variables[resolved]
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
            return closures.device_field(target_fn, name), ftype
        value_type = _map_value_type(target_type[len("dra.domainmap("):-1]) if target_type.startswith("dra.") \
            else _map_value_type(target_type)
        if node.test_only:
            return closures.has(target_fn, name), "bool"
        if node.optional:
            return closures.opt_select(target_fn, name), "optional_type"
        if target_type.startswith("dra.domainmap("):
            return closures.domain_select(target_fn, name), target_type[len("dra.domainmap("):-1]
        return closures.select(target_fn, name), value_type

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
                return act["device"][group].get(domain, closures.EMPTY_DOMAIN)[name]
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
        if all(closures.is_const(f) for f in fns):
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
                    raise CELError(f"Failed with repeated key: {closures.key_text(k)}")
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
            old = act.get(name, closures.MISSING)
            act[name] = init_fn(act)
            try:
                return body_fn(act)
            finally:
                if old is closures.MISSING:
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
        builder = comprehensions.BUILDERS[kind]
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
            if closures.is_const(f0) and name in ("quantity", "semver"):
                try:
                    value = impl(f0({}))
                except CELError:
                    pass  # reported when evaluated, as upstream does for non-literal validation
                else:
                    return closures.const(value), result
            return closures.call1(impl, f0), result
        return closures.calln(impl, fns), result


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
            return closures.call1(impl, target_fn), result
        if len(fns) == 1:
            f1 = fns[0]
            return closures.call2(impl, target_fn, f1), result
        return closures.calln(impl, [target_fn, *fns]), result


    # --- operators ----------------------------------------------------------------------------------

    def _op_and(self, node: Node) -> tuple[Fn, str]:
        (a, _), (b, _) = self.compile(node.args[0]), self.compile(node.args[1])
        return closures.and_(a, b), "bool"

    def _op_or(self, node: Node) -> tuple[Fn, str]:
        (a, _), (b, _) = self.compile(node.args[0]), self.compile(node.args[1])
        return closures.or_(a, b), "bool"

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
        if closures.is_const(b):
            c = b({})
            ct = type(c)
            if ct is str or ct is bool:
                if negate:
                    return (lambda act: not closures.eq_const(a(act), c, ct, equals)), "bool"
                return (lambda act: closures.eq_const(a(act), c, ct, equal_op)), "bool"
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
            return closures.opt_index(a, b), "optional_type"
        if ta.startswith("dra.domainmap("):
            inner = ta[len("dra.domainmap("):-1]
            if closures.is_const(b):
                key = b({})
                return (lambda act: a(act).get(key, closures.EMPTY_DOMAIN)), inner
            return (lambda act: closures.domain_index(a(act), b(act))), inner
        kind = _kind(ta)
        if kind == "list":
            return closures.index(a, b), _list_elem_type(ta)
        if kind == "map":
            return closures.index(a, b), _map_value_type(ta)
        return closures.index(a, b), DYN

    def _arith(self, node: Node, op: str) -> tuple[Fn, str]:
        (a, ta), (b, tb) = self.compile(node.args[0]), self.compile(node.args[1])
        ka, kb = _kind(ta), _kind(tb)
        impl = arithmetic.OPERATORS[op]
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


__all__ = ["DEVICE_TYPE", "Env", "Generator"]
