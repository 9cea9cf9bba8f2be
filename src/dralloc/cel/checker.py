"""The CEL type checker: every node of a parsed expression gets its CEL type, every call its overloads.

It follows cel-go's checker (github.com/google/cel-go/checker) on dralloc's AST: identifiers resolve against
comprehension scopes, then declared variables (with the container's namespaces), then type names; a select
on a map yields the value type, on an object the declared field type; a call resolves against the
overloads of the environment's table (:mod:`dralloc.cel.decls`), unifying type parameters, and yields
``dyn`` when several overloads with different results match. Macros are checked as cel-go expands them
(``all`` as ``accu && p``, ``filter`` as ``p ? accu + [x] : accu`` …), so their errors read the same.

All problems are collected and reported together, sorted by position, in cel-go's format. When the check
passes, the AST validators of the Kubernetes environment run: homogeneous aggregate literals, regex,
duration and timestamp literals, and literal format strings (strings library).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from dralloc.cel.decls import Environment, Overload
from dralloc.cel.errors import CELCompileError, render_issues
from dralloc.cel.syntax import Node, UInt
from dralloc.cel.types import (
    BOOL,
    BYTES,
    DOUBLE,
    DURATION,
    DYN,
    ERROR,
    INT,
    NULL,
    STRING,
    TIMESTAMP,
    UINT,
    Mapping,
    Type,
    assignable,
    assignable_list,
    equivalent,
    has_params,
    is_dyn_or_error,
    is_optional,
    list_of,
    map_of,
    most_general,
    obj,
    optional_of,
    param,
    parse_type,
    simple_assignable,
    substitute,
    type_of,
)

_TYPE_IDENTS = {"bool": BOOL, "int": INT, "uint": UINT, "double": DOUBLE, "string": STRING, "bytes": BYTES,
                "null_type": NULL, "type": Type("type", "type"), "list": list_of(param("A")),
                "map": map_of(param("A"), param("B")), "optional_type": optional_of(param("A"))}


@dataclass
class Checked:
    """A checked expression: node types (by node identity), resolved overloads and the result type."""

    root: Node
    types: dict[int, Type]
    overloads: dict[int, list[Overload]]
    result: Type

    def type(self, node: Node) -> Type:
        return self.types.get(id(node), DYN)


@dataclass
class _Issue:
    pos: int
    message: str


@dataclass
class Checker:
    env: Environment
    text: str
    variables: dict[str, Type] = field(default_factory=dict)
    container: str = ""
    homogeneous_literals: bool = False
    issues: list[_Issue] = field(default_factory=list)
    mapping: Mapping = field(default_factory=dict)
    types: dict[int, Type] = field(default_factory=dict)
    overloads: dict[int, list[Overload]] = field(default_factory=dict)
    scopes: list[dict[str, Type]] = field(default_factory=list)
    _fresh: int = 0

    # --- entry ------------------------------------------------------------------------------------

    def run(self, root: Node) -> Checked:
        result = self.check(root)
        for key, t in self.types.items():
            self.types[key] = substitute(self.mapping, t, True)
        result = substitute(self.mapping, result, True)
        if not self.issues:
            self._validate(root)
        if self.issues:
            raise CELCompileError(self.render())
        return Checked(root, self.types, self.overloads, result)

    def render(self) -> str:
        return render_issues(self.text, [(i.pos, i.message) for i in self.issues])

    def error(self, pos: int, message: str) -> None:
        self.issues.append(_Issue(pos, message))

    def set(self, node: Node, t: Type) -> Type:
        self.types[id(node)] = t
        return t

    def fresh(self) -> Type:
        self._fresh += 1
        return param(f"_var{self._fresh - 1}")

    def sub(self, t: Type) -> Type:
        return substitute(self.mapping, t, False)

    def is_assignable(self, t1: Type, t2: Type) -> bool:
        m = assignable(self.mapping, t1, t2)
        if m is None:
            return False
        self.mapping = m
        return True

    # --- dispatch ---------------------------------------------------------------------------------

    def check(self, node: Node) -> Type:
        kind = node.kind
        if kind == "lit":
            return self.set(node, _literal_type(node.value))
        if kind == "ident":
            return self.set(node, self._ident(node))
        if kind == "select":
            return self.set(node, self._select(node))
        if kind == "call":
            return self.set(node, self._call(node))
        if kind == "list":
            return self.set(node, self._list(node))
        if kind == "map":
            return self.set(node, self._map(node))
        if kind == "struct":
            self.error(node.pos, f"undeclared reference to '{node.value}' (in container '{self.container}')")
            return self.set(node, ERROR)
        if kind == "comp":
            return self.set(node, self._comp(node))
        if kind == "bind":
            return self.set(node, self._bind(node))
        raise AssertionError(kind)

    # --- identifiers and selection ----------------------------------------------------------------

    def _local(self, name: str) -> Type | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def _candidates(self, name: str) -> Iterator[str]:
        if name.startswith("."):
            yield name[1:]
            return
        container = self.container
        while container:
            yield f"{container}.{name}"
            container = container.rpartition(".")[0]
        yield name

    def resolve_variable(self, name: str) -> str | None:
        for c in self._candidates(name):
            if c in self.variables:
                return c
        return None

    def _ident(self, node: Node) -> Type:
        name: str = node.value
        if not name.startswith("."):
            local = self._local(name)
            if local is not None:
                return local
        resolved = self.resolve_variable(name)
        if resolved is not None:
            return self.variables[resolved]
        bare = name.lstrip(".")
        if bare in _TYPE_IDENTS:
            return type_of(_TYPE_IDENTS[bare])
        named = self._type_name(bare)
        if named is not None:
            node.extra = ("type", named)
            return type_of(named_type(named))
        self.error(node.pos, f"undeclared reference to '{bare}' (in container '{self.container}')")
        return ERROR

    def _type_name(self, name: str) -> str | None:
        for c in self._candidates(name):
            if c in self.env.type_names:
                return c
        return None

    def qualified_name(self, node: Node) -> str | None:
        """``a.b.c`` for a chain of plain selects on an identifier that is not a local variable."""
        parts = []
        while node.kind == "select" and not node.test_only and not node.optional:
            parts.append(node.value)
            node = node.target
        if node.kind != "ident" or not parts and node.kind != "ident":
            return None
        if not node.value.startswith(".") and self._local(node.value) is not None:
            return None
        parts.append(node.value)
        return ".".join(reversed(parts))

    def _select(self, node: Node) -> Type:
        if not node.test_only and not node.optional:
            qname = self.qualified_name(node)
            if qname is not None:
                resolved = self.resolve_variable(qname)
                if resolved is not None:
                    node.extra = ("variable", resolved)  # the generator reads it as one variable
                    return self.variables[resolved]
                named = self._type_name(qname.lstrip("."))
                if named is not None:
                    node.extra = ("type", named)  # a registered type's name, e.g. net.IP
                    return type_of(named_type(named))
        result = self._select_field(node, node.target, node.value, node.optional)
        return BOOL if node.test_only else result

    def _select_field(self, node: Node, operand: Node, name: str, optional: bool) -> Type:
        operand_type = self.sub(self.check(operand))
        target, was_optional = (operand_type.params[0], True) if is_optional(operand_type) else (operand_type, False)
        result = ERROR
        if target.kind == "map":
            result = target.params[1]
        elif target.kind == "struct":
            fields = self.env.struct_fields.get(target.name)
            if fields is None:
                self.error(node.pos, f"unexpected failed resolution of '{target.name}'")
            elif name in fields:
                result = fields[name]
            else:
                self.error(node.pos, f"undefined field '{name}'")
        elif target.kind == "param":
            self.is_assignable(DYN, target)
            result = DYN
        else:
            if not is_dyn_or_error(target):
                self.error(node.pos, f"type '{target}' does not support field selection")
            result = DYN
        if was_optional or optional:
            return optional_of(result)
        return result

    # --- calls ------------------------------------------------------------------------------------

    def lookup_function(self, name: str) -> str | None:
        for c in self._candidates(name):
            if c in self.env.functions:
                return c
        return None

    def _call(self, node: Node) -> Type:
        name: str = node.value
        if name == "_[_]" and node.optional:
            name = "_[?_]"
        if node.target is None:
            for a in node.args:
                self.check(a)
            fn = self.lookup_function(name)
            if fn is None:
                self.error(node.pos, f"undeclared reference to '{name.lstrip('.')}' (in container '{self.container}')")
                return ERROR
            node.extra = ("function", fn)
            return self.resolve(node, fn, None, node.args)
        for a in node.args:
            self.check(a)
        qname = self.qualified_name(node.target)
        if qname is not None:
            fn = self.lookup_function(f"{qname}.{name}")
            if fn is not None:
                node.extra = ("function", fn)  # a namespaced global function, not a member call
                return self.resolve(node, fn, None, node.args)
        self.check(node.target)
        if name not in self.env.functions:
            self.error(node.pos, f"undeclared reference to '{name}' (in container '{self.container}')")
            return ERROR
        return self.resolve(node, name, node.target, node.args)

    def resolve(self, node: Node, fn: str, target: Node | None, args: list[Node]) -> Type:
        arg_types = ([self.types[id(target)]] if target is not None else []) + [self.types[id(a)] for a in args]
        return self.resolve_types(node, fn, arg_types, target is not None, args)

    def resolve_types(self, node: Node, fn: str, arg_types: list[Type], member: bool,
                      arg_nodes: list[Node] | None = None) -> Type:
        result: Type | None = None
        matched: list[Overload] = []
        concrete = not any(has_params(t) for t in arg_types)
        for o in self.env.functions[fn]:
            if o.member != member:
                continue
            if fn in ("_&&_", "_||_"):
                ok = True
                for i, t in enumerate(arg_types):
                    if not self.is_assignable(BOOL, t):
                        at = arg_nodes[i].pos if arg_nodes else node.pos
                        self.error(at, f"expected type 'bool' but found '{self.sub(t)}'")
                        ok = False
                self.overloads[id(node)] = [o]
                return BOOL if ok else ERROR
            if concrete and not o.type_params:
                # no type parameter on either side: nothing to bind, so no trial mapping to copy
                if len(o.args) != len(arg_types) or not all(
                        simple_assignable(p, t) for p, t in zip(o.args, arg_types)):
                    continue
                matched.append(o)
                if result is None:
                    result = o.result
                elif result.kind != "dyn" and o.result != result:
                    result = DYN
                continue
            params, res = o.args, o.result
            if o.type_params:
                fresh = {p: self.fresh() for p in sorted(o.type_params)}
                params = tuple(substitute(fresh, p, False) for p in params)
                res = substitute(fresh, res, False)
            m = assignable_list(self.mapping, arg_types, params)
            if m is None:
                continue
            self.mapping = m
            matched.append(o)
            r = self.sub(res)
            if result is None:
                result = r
            elif result.kind != "dyn" and r != result:
                result = DYN
        if result is None:
            shown = [substitute(self.mapping, t, True) for t in arg_types]
            if member:
                sig = f"{shown[0]}.({', '.join(str(t) for t in shown[1:])})"
            else:
                sig = f"({', '.join(str(t) for t in shown)})"
            self.error(node.pos, f"found no matching overload for '{fn}' applied to '{sig}'")
            return ERROR
        self.overloads[id(node)] = matched
        return result

    # --- literals ---------------------------------------------------------------------------------

    def _join(self, node: Node, previous: Type | None, current: Type) -> Type:
        if previous is None:
            return current
        if self.is_assignable(previous, current):
            return most_general(previous, current)
        return DYN

    def _unwrap_optional_entry(self, node: Node, t: Type) -> Type:
        if is_optional(t):
            return t.params[0]
        if t.kind != "dyn":
            self.error(node.pos, f"expected type '{optional_of(t)}' but found '{t}'")
        return t

    def _list(self, node: Node) -> Type:
        optional = set(node.extra or ())
        elem: Type | None = None
        for i, e in enumerate(node.args):
            t = self.check(e)
            if i in optional:
                t = self._unwrap_optional_entry(e, t)
            elem = self._join(e, elem, t)
        return list_of(elem if elem is not None else self.fresh())

    def _map(self, node: Node) -> Type:
        key: Type | None = None
        value: Type | None = None
        for k, v, optional in node.extra:
            key = self._join(k, key, self.check(k))
            vt = self.check(v)
            if optional:
                vt = self._unwrap_optional_entry(v, vt)
            value = self._join(v, value, vt)
        if key is None or value is None:
            return map_of(self.fresh(), self.fresh())
        return map_of(key, value)

    # --- comprehensions and bind ------------------------------------------------------------------

    def _bind(self, node: Node) -> Type:
        init = self.check(node.args[0])
        self.scopes.append({node.value: init})
        try:
            return self.check(node.args[1])
        finally:
            self.scopes.pop()

    def _range_vars(self, node: Node, range_type: Type, two: bool) -> tuple[Type, Type]:
        if range_type.kind == "list":
            elem = range_type.params[0]
            return (INT, elem) if two else (elem, DYN)
        if range_type.kind == "map":
            return range_type.params[0], range_type.params[1]
        if range_type.kind in ("dyn", "error", "param"):
            self.is_assignable(DYN, range_type)
            return DYN, DYN
        self.error(node.target.pos, f"expression of type '{range_type}' cannot be range of a comprehension "
                                    f"(must be list, map, or dynamic)")
        return ERROR, ERROR

    def _comp(self, node: Node) -> Type:
        kind: str = node.value
        v1, v2 = node.extra
        if kind in ("optMap", "optFlatMap"):
            return self._opt_map(node, kind)
        if kind == "sortBy":
            return self._sort_by(node)
        if (v2 is not None or kind.startswith("transform")) and "transformList" not in self.env.macros:
            # before two-variable comprehensions existed, this was a call of an undeclared member function
            self.error(node.pos, f"undeclared reference to '{kind}' (in container '{self.container}')")
            return ERROR
        range_type = self.sub(self.check(node.target))
        t1, t2 = self._range_vars(node, range_type, v2 is not None)
        scope = {v1: t1}
        if v2 is not None:
            scope[v2] = t2
        self.scopes.append(scope)
        try:
            bodies = [self.check(b) for b in node.args]
        finally:
            self.scopes.pop()
        if kind in ("all", "exists"):
            fn = "_&&_" if kind == "all" else "_||_"
            self.resolve_types(node, fn, [BOOL, bodies[0]], False, [node, node.args[0]])
            return BOOL
        if kind == "exists_one":
            self._step_ternary(node, bodies[0], INT, INT)
            return BOOL
        if kind in ("map", "transformList", "filter"):
            accu = list_of(self.fresh())
            elem = t1 if kind == "filter" and v2 is None else bodies[-1]
            if kind == "filter" and v2 is not None:
                elem = t1
            step = self.resolve_types(node, "_+_", [accu, list_of(elem)], False)
            if len(bodies) == 2 or kind == "filter":
                step = self._step_ternary(node, bodies[0], step, accu)
            self._assert(node, accu, step)
            return self.sub(accu)
        if kind in ("transformMap", "transformMapEntry"):
            accu = map_of(self.fresh(), self.fresh())
            if kind == "transformMap":
                step = self.resolve_types(node, "cel.@mapInsert", [accu, t1, bodies[-1]], False)
            else:
                step = self.resolve_types(node, "cel.@mapInsert", [accu, bodies[-1]], False)
            if len(bodies) == 2:
                step = self._step_ternary(node, bodies[0], step, accu)
            self._assert(node, accu, step)
            return self.sub(accu)
        raise AssertionError(kind)

    def _step_ternary(self, node: Node, cond: Type, then: Type, other: Type) -> Type:
        return self.resolve_types(node, "_?_:_", [cond, then, other], False)

    def _assert(self, node: Node, expected: Type, actual: Type) -> None:
        if not self.is_assignable(expected, actual):
            self.error(node.pos, f"expected type '{self.sub(expected)}' but found '{self.sub(actual)}'")

    def _opt_map(self, node: Node, kind: str) -> Type:
        # opt.hasValue() ? optional.of(cel.bind(v, opt.value(), e)) : optional.none()   (optFlatMap: no of())
        target_type = self.check(node.target)
        self.resolve_types(node, "hasValue", [target_type], True)
        value = self.resolve_types(node, "value", [target_type], True)
        self.scopes.append({node.extra[0]: value})
        try:
            body = self.check(node.args[0])
        finally:
            self.scopes.pop()
        then = self.resolve_types(node, "optional.of", [body], False) if kind == "optMap" else body
        none = self.resolve_types(node, "optional.none", [], False)
        return self._step_ternary(node, BOOL, then, none)

    def _sort_by(self, node: Node) -> Type:
        # cel.bind(@in, target, @in.@sortByAssociatedKeys(@in.map(v, key)))
        target_type = self.sub(self.check(node.target))
        t1, _ = self._range_vars(node, target_type, False)
        self.scopes.append({node.extra[0]: t1})
        try:
            key = self.check(node.args[0])
        finally:
            self.scopes.pop()
        if "@sortByAssociatedKeys" not in self.env.functions:
            self.error(node.pos, f"undeclared reference to 'sortBy' (in container '{self.container}')")
            return ERROR
        return self.resolve_types(node, "@sortByAssociatedKeys", [target_type, list_of(key)], True)

    # --- Kubernetes AST validators ----------------------------------------------------------------

    def _validate(self, root: Node) -> None:
        for node, exempted in _walk(root, exempt=("format",)):
            if node.kind == "call" and node.value in ("matches", "duration", "timestamp") and node.args:
                self._literal_argument(node)
            if node.kind == "call" and node.value == "format" and "strings.quote" in self.env.functions:
                self._format_literal(node)
            if not self.homogeneous_literals or exempted:
                continue
            if node.kind == "list":
                self._homogeneous(node)
            elif node.kind == "map":
                self._homogeneous_map(node)

    def _literal_argument(self, node: Node) -> None:
        fn = node.value
        if (node.extra or ("", ""))[1] != fn and not (fn == "matches" and node.target is not None):
            return
        # cel-go validates the call's first argument: the pattern of s.matches(p), but the string of the
        # global matches(s, p) (a quirk of its validator, reproduced on purpose)
        arg = node.args[0]
        if arg.kind != "lit" or type(arg.value) is not str:
            return
        from dralloc.cel import library

        try:
            if fn == "matches":
                library.regex(arg.value)
            else:
                library.GLOBALS[fn](arg.value)
        except Exception:  # noqa: BLE001 - any failure makes the literal invalid, as upstream
            self.error(arg.pos, f"invalid {fn} argument")

    def _format_literal(self, node: Node) -> None:
        """cel-go's string format validator: a literal format string with a list literal of arguments is
        checked against the arguments' types when the expression is compiled."""
        target = node.target
        if target is None or target.kind != "lit" or type(target.value) is not str or len(node.args) != 1 \
                or node.args[0].kind != "list":
            return
        text, args = target.value, node.args[0].args
        i, index, requested = 0, 0, 0
        while i < len(text):
            if text[i] != "%":
                i += 1
                continue
            if text[i + 1:i + 2] == "%":
                i += 2
                continue
            requested += 1
            current = index
            if i + 1 >= len(text):
                self.error(node.pos, "unexpected end of string")
                return
            if index >= len(args):
                self.error(node.pos, f"index {index} out of range")
                return
            j = i + 1
            if text[j] == ".":
                j += 1
                start = j
                while j < len(text) and text[j].isdigit():
                    j += 1
                if j >= len(text):
                    self.error(node.pos, "could not parse formatting clause: error while parsing precision: "
                                         "could not find end of precision specifier")
                    return
                if j == start:
                    self.error(node.pos, "could not parse formatting clause: error while parsing precision: error "
                                         'while converting precision to integer: strconv.Atoi: parsing "": '
                                         "invalid syntax")
                    return
            verb = text[j]
            problem = _format_argument_problem(verb, args[current], self.types)
            if problem is None:
                self.error(node.pos, f'could not parse formatting clause: unrecognized formatting clause "{verb}"')
                return
            if problem:
                bad, message = problem
                self.error(bad.pos, f"error during formatting: {message}, was given {_base_name(self.types[id(bad)])}")
                return
            i = j + 1
            index += 1
        if len(args) > requested:
            self.error(node.pos, f"too many arguments supplied to string.format (expected {requested}, "
                                 f"got {len(args)})")

    def _homogeneous(self, node: Node) -> None:
        optional = set(node.extra or ())
        first: Type | None = None
        for i, e in enumerate(node.args):
            t = self.types[id(e)]
            if i in optional and is_optional(t):
                t = t.params[0]
            if first is None:
                first = t
            elif not equivalent(first, t):
                self.error(e.pos, f"expected type '{first}' but found '{t}'")
                return

    def _homogeneous_map(self, node: Node) -> None:
        kt: Type | None = None
        vt: Type | None = None
        for k, v, optional in node.extra:
            k_type, v_type = self.types[id(k)], self.types[id(v)]
            if optional and is_optional(v_type):
                v_type = v_type.params[0]
            if kt is None or vt is None:
                kt, vt = k_type, v_type
                continue
            if not equivalent(kt, k_type):
                self.error(k.pos, f"expected type '{kt}' but found '{k_type}'")
            if not equivalent(vt, v_type):
                self.error(v.pos, f"expected type '{vt}' but found '{v_type}'")


def _walk(root: Node, exempt: tuple[str, ...]) -> Iterator[tuple[Node, bool]]:
    """Every node, with whether it sits under a call exempt from the homogeneous-literal rule."""
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        n, exempted = stack.pop()
        yield n, exempted
        inner = exempted or (n.kind == "call" and n.value in exempt)
        stack.extend((c, inner) for c in reversed(_children(n)))


_FORMAT_KINDS = {
    "d": (("int", "uint"), "decimal clause can only be used on integers"),
    "f": (("double", "string"), "fixed-point clause can only be used on doubles"),
    "e": (("double", "string"), "scientific clause can only be used on doubles"),
    "b": (("int", "uint", "bool"), "only integers and bools can be formatted as binary"),
    "x": (("int", "uint", "string", "bytes"), "only integers, byte buffers, and strings can be formatted as hex"),
    "X": (("int", "uint", "string", "bytes"), "only integers, byte buffers, and strings can be formatted as hex"),
    "o": (("int", "uint"), "octal clause can only be used on integers"),
}
_STRING_KINDS = ("list", "map", "int", "uint", "double", "bool", "string", "timestamp", "bytes", "duration", "type",
                 "null")
_STRING_CLAUSE = ("string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, "
                  "durations, and timestamps")


def _format_argument_problem(verb: str, arg: Node, types: dict[int, Type]) -> tuple[Node, str] | tuple[()] | None:
    """None for an unknown verb, () when the argument suits the verb, else (offending node, message)."""
    if verb == "s":
        bad = _string_clause_offender(arg, types)
        return () if bad is None else (bad, _STRING_CLAUSE)
    if verb not in _FORMAT_KINDS:
        return None
    kinds, message = _FORMAT_KINDS[verb]
    t = types[id(arg)]
    return () if t.kind == "dyn" or t.kind in kinds else (arg, message)


def _string_clause_offender(arg: Node, types: dict[int, Type]) -> Node | None:
    t = types[id(arg)]
    if t.kind != "dyn" and t.kind not in _STRING_KINDS:
        return arg
    if arg.kind == "list":
        for e in arg.args:
            bad = _string_clause_offender(e, types)
            if bad is not None:
                return bad
    if arg.kind == "map":
        for k, v, _ in arg.extra:
            for part in (k, v):
                bad = _string_clause_offender(part, types)
                if bad is not None:
                    return bad
    return None


def _base_name(t: Type) -> str:
    """cel-go's TypeName(): the type without its parameters."""
    return "null_type" if t.kind == "null" else t.name


def _children(n: Node) -> list[Node]:
    out: list[Node] = []
    if isinstance(n.target, Node):
        out.append(n.target)
    out.extend(a for a in n.args if isinstance(a, Node))
    if n.kind == "map":
        for k, v, _ in n.extra:
            out.extend((k, v))
    return out


def named_type(name: str) -> Type:
    """The type a registered type name denotes (the well-known protobuf ones are CEL's own)."""
    return {"google.protobuf.Duration": DURATION, "google.protobuf.Timestamp": TIMESTAMP}.get(name) or obj(name)


def _literal_type(value: object) -> Type:
    t = type(value)
    if t is bool:
        return BOOL
    if t is UInt:
        return UINT
    if t is int:
        return INT
    if t is float:
        return DOUBLE
    if t is str:
        return STRING
    if t is bytes:
        return BYTES
    if value is None:
        return NULL
    raise AssertionError(t)


def declared(declarations: dict[str, str] | None) -> dict[str, Type]:
    """Variable declarations from their CEL spelling (``"list(int)"``, ``"map(string, dyn)"``)."""
    return {name: parse_type(t) for name, t in (declarations or {}).items()}

