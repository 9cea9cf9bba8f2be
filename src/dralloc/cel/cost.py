"""The worst-case cost of a checked selector, for kube-apiserver's "too complex, exceeds cost limit" check.

It follows cel-go's estimator (checker/cost.go) on the checked AST, for the maximum only: literals cost 0,
identifiers and field selections on maps and objects 1, list literals 10 and map literals 30 plus their
elements, a call 1 plus its arguments — ``&&``/``||`` their operands only, ``?:`` its condition plus the
dearer branch, string comparisons and ``contains``/``startsWith``/``endsWith``/``matches``/``in`` in
proportion to the sizes involved — and a macro its expansion's steps times the largest size of its range.
Sizes come from literals and from the DRA environment's declared limits for values read from ``device``
(compile.go: 63-character domains and driver, 32-character identifiers, 64-character attribute values,
32 attributes and capacities per device); a range of unknown size makes the cost unbounded, as upstream.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from dralloc.cel.checker import Checked
from dralloc.cel.syntax import Node

UNBOUNDED = 2**64 - 1
MAX_LIST_ATTRIBUTE_VALUES = 48  # resourceapi.ResourceSliceMaxAttributeValuesPerDevice
STRING_TRAVERSAL = 0.1  # cel-go common.StringTraversalCostFactor
REGEX_LENGTH = 0.25  # cel-go common.RegexStringLengthCostFactor

_NOMINAL = frozenset({"serviceAccount", "path", "group", "resource", "subresource", "namespace", "name", "allowed",
                      "reason", "error", "errored", "masked", "prefixLength", "family", "isUnspecified", "isLoopback",
                      "isLinkLocalMulticast", "isLinkLocalUnicast", "sign", "asInteger", "isInteger",
                      "asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo", "add", "sub"})


def _callee(node: Node) -> tuple[str, Node | None]:
    """The function a call resolved to and its receiver (none for a namespaced global like lists.range)."""
    if isinstance(node.extra, tuple) and node.extra[0] == "function":
        return node.extra[1], None
    return node.value, node.target


def _literal_uint(node: Node, default: int) -> int:
    if node.kind == "lit" and type(node.value) is int and node.value >= 0:
        return int(node.value)
    return default


# path (from the device variable) → largest size, as the DRA environment declares it
_DRA_SIZES = {
    ("device",): 0,
    ("device", "driver"): 63,
    ("device", "attributes"): 32,
    ("device", "attributes", "@keys"): 63,
    ("device", "attributes", "@values"): 32,
    ("device", "attributes", "@values", "@keys"): 32,
    ("device", "attributes", "@values", "@values"): 64,
    ("device", "capacity"): 32,
    ("device", "capacity", "@keys"): 63,
    ("device", "capacity", "@values"): 32,
    ("device", "capacity", "@values", "@keys"): 32,
}


def _add(*xs: int) -> int:
    return min(UNBOUNDED, sum(xs))


def _mul(a: int, b: int) -> int:
    return min(UNBOUNDED, a * b)


def _factor(size: int, factor: float) -> int:
    return UNBOUNDED if size >= UNBOUNDED else math.ceil(size * factor)


class _Estimator:
    def __init__(self, checked: Checked, known_sizes: Mapping[tuple[str, ...], int]) -> None:
        self.checked = checked
        self.known_sizes = known_sizes
        self.paths: dict[int, tuple[str, ...]] = {}
        self.sizes: dict[int, int] = {}
        self.locals: list[dict[str, tuple[str, ...] | int]] = []

    # --- sizes --------------------------------------------------------------------------------------

    def size(self, node: Node) -> int:
        if node.kind == "lit":
            v = node.value
            return len(v) if isinstance(v, (str, bytes)) else 1
        if node.kind == "list":
            return len(node.args)
        if node.kind == "map":
            return len(node.extra)
        if id(node) in self.sizes:
            return self.sizes[id(node)]
        path = self.paths.get(id(node))
        if path is not None and path in self.known_sizes:
            return self.known_sizes[path]
        t = self.checked.type(node)
        if t.kind in ("int", "uint", "double", "bool", "duration", "timestamp", "null", "struct", "opaque"):
            return 1
        if node.kind == "ident":
            for scope in reversed(self.locals):
                if node.value in scope and isinstance(scope[node.value], int):
                    return int(scope[node.value])  # type: ignore[arg-type]
        return UNBOUNDED

    def _path_of(self, node: Node, path: tuple[str, ...] | None) -> None:
        if path is not None:
            self.paths[id(node)] = path

    # --- costs --------------------------------------------------------------------------------------

    def cost(self, node: Node) -> int:
        kind = node.kind
        if kind == "lit":
            return 0
        if kind == "ident":
            for scope in reversed(self.locals):
                if node.value in scope:
                    v = scope[node.value]
                    if isinstance(v, tuple):
                        self._path_of(node, v)
                    break
            else:
                self._path_of(node, (node.value,))
            return 1
        if kind == "select":
            if isinstance(node.extra, tuple) and node.extra[0] == "variable":
                self._path_of(node, (node.extra[1],))
                return 1
            c = self.cost(node.target)
            if node.test_only:
                return c  # Kubernetes sets PresenceTestHasCost(false)
            if node.optional:
                return _add(c, 1)  # the optional select is a call
            parent = self.paths.get(id(node.target))
            if parent is not None:
                step = "@values" if self.checked.type(node.target).kind == "map" else node.value
                self._path_of(node, (*parent, step))
            if self.checked.type(node.target).kind in ("map", "struct", "param"):
                c = _add(c, 1)
            return c
        if kind == "list":
            return _add(10, *(self.cost(e) for e in node.args))
        if kind == "map":
            return _add(30, *(self.cost(p) for k, v, _ in node.extra for p in (k, v)))
        if kind == "struct":
            return 40
        if kind == "bind":
            init = self.cost(node.args[0])
            self.locals.append({node.value: self.paths.get(id(node.args[0])) or self.size(node.args[0])})
            try:
                body = self.cost(node.args[1])  # cel.bind is a comprehension over an empty list literal (10)
            finally:
                self.locals.pop()
            if id(node.args[1]) in self.sizes:
                self.sizes[id(node)] = self.sizes[id(node.args[1])]
            return _add(10, init, body)
        if kind == "comp":
            return self._comp(node)
        return self._call(node)

    def _call(self, node: Node) -> int:
        fn, receiver = _callee(node)
        if fn == "dyn" and len(node.args) == 1:
            c = self.cost(node.args[0])
            self._path_of(node, self.paths.get(id(node.args[0])))
            if id(node.args[0]) in self.sizes:
                self.sizes[id(node)] = self.sizes[id(node.args[0])]
            return _add(1, c)
        arg_costs = [self.cost(a) for a in node.args]
        target = self.cost(receiver) if receiver is not None else 0
        if fn in ("_&&_", "_||_"):
            return _add(*arg_costs)
        if fn == "_?_:_":
            self.sizes[id(node)] = max(self.size(node.args[1]), self.size(node.args[2]))
            return _add(arg_costs[0], max(arg_costs[1], arg_costs[2]))
        if fn == "_[_]" and node.args:
            parent = self.paths.get(id(node.args[0]))
            if parent is not None:
                self._path_of(node, (*parent, "@values"))
        call = self._call_cost(node)
        return _add(target, call, *arg_costs)

    def _call_cost(self, node: Node) -> int:
        """The cost of the call itself: the list library's and Kubernetes' estimators, cel-go's built-in
        ones, else 1."""
        (fn, target), args = _callee(node), node.args
        t0 = self.checked.type(args[0]).kind if args else ""
        # cel-go lists v3
        if fn == "lists.range" and len(args) == 1:
            n = args[0].value if args[0].kind == "lit" and type(args[0].value) is int else UNBOUNDED
            return self._list_call(node, 1, max(0, n))
        if target is not None and fn in ("reverse", "slice", "flatten", "distinct", "sort",
                                         "@sortByAssociatedKeys"):
            size = self.size(target)
            if fn == "reverse":
                return self._list_call(node, 1, size)
            if fn == "slice" and len(args) == 2:
                lo = _literal_uint(args[0], 0)
                hi = _literal_uint(args[1], size)
                return self._list_call(node, 1, max(0, hi - lo))
            if fn == "flatten":
                depth = _literal_uint(args[0], UNBOUNDED) if args else 1
                return self._list_call(node, depth, size)
            if fn == "distinct":
                return self._list_call(node, 2, _mul(size, size))
            keyed = args[0] if fn == "@sortByAssociatedKeys" else target
            keys = self.size(keyed)
            elem = self.checked.type(keyed)
            factor = 2.1 if elem.params and elem.params[0].kind in ("string", "bytes") else 2
            return self._list_call(node, factor, _mul(keys, keys))
        if fn in ("sets.contains", "sets.intersects", "sets.equivalent") and len(args) == 2:
            factor = 2 if fn == "sets.equivalent" else 1
            return _add(_mul(_mul(self.size(args[0]), self.size(args[1])), factor), 1)
        # Kubernetes' library.CostEstimator
        if fn == "check":
            return 350_000
        if fn in _NOMINAL:
            return 1
        if fn in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf") and target is not None:
            t = self.checked.type(target)
            if t.kind == "list":
                per = 1
                if t.params[0].kind in ("string", "bytes"):
                    per = _add(1, _factor(UNBOUNDED, STRING_TRAVERSAL))
                return _mul(self.size(target), per)
            return _factor(self.size(target), STRING_TRAVERSAL)
        if fn == "url" and len(args) == 1:
            return _factor(self.size(args[0]), STRING_TRAVERSAL)
        if fn in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
            self.sizes[id(node)] = self.size(target)
            return _factor(self.size(target), STRING_TRAVERSAL)
        if fn in ("replace", "split") and target is not None:
            return _factor(self.size(target), 2 * STRING_TRAVERSAL)
        if fn == "join" and target is not None:
            n = self.size(target)
            size = _mul(n, UNBOUNDED)
            if args:
                size = _add(size, _mul(self.size(args[0]), max(0, n - 1)))
            self.sizes[id(node)] = size
            return _factor(size, STRING_TRAVERSAL)
        if fn in ("find", "findAll") and target is not None and args:
            self.sizes[id(node)] = self.size(target)
            return _mul(_factor(_add(self.size(target), 1), STRING_TRAVERSAL),
                        _factor(self.size(args[0]), REGEX_LENGTH))
        if fn == "ip" and target is not None:
            return 1
        if fn == "containsIP" and target is not None and args:
            extra = _factor(self.size(args[0]), STRING_TRAVERSAL) if t0 == "string" else 0
            return _add(4, extra)
        if fn == "containsCIDR" and target is not None and args:
            extra = _factor(self.size(args[0]), STRING_TRAVERSAL) if t0 == "string" else 0
            return _add(7, extra)
        # cel-go's built-in estimates
        if fn == "format" and target is not None:
            return _factor(self.size(target), STRING_TRAVERSAL)
        if fn in ("string", "bytes") and len(args) == 1 and t0 in ("bytes", "string") and fn != t0:
            return _factor(self.size(args[0]), STRING_TRAVERSAL)
        if fn == "strings.quote" and len(args) == 1:
            return _factor(self.size(args[0]), STRING_TRAVERSAL)
        if fn in ("startsWith", "endsWith") and target is not None and len(args) == 1:
            return _factor(self.size(args[0]), STRING_TRAVERSAL)
        if fn == "@in" and len(args) == 2 and self.checked.type(args[1]).kind in ("list", "dyn"):
            return self.size(args[1])  # a dyn range may be a list: the list estimate is the larger
        if fn == "matches" and target is not None and len(args) == 1:
            return _mul(_factor(_add(self.size(target), 1), STRING_TRAVERSAL),
                        _factor(self.size(args[0]), REGEX_LENGTH))
        if fn == "contains" and target is not None and len(args) == 1:
            return _mul(_factor(self.size(target), STRING_TRAVERSAL), _factor(self.size(args[0]), STRING_TRAVERSAL))
        if fn == "_+_" and len(args) == 2 and t0 in ("string", "bytes", "list", "dyn"):
            size = _add(self.size(args[0]), self.size(args[1]))
            self.sizes[id(node)] = size
            return 1 if t0 == "list" else max(1, _factor(size, STRING_TRAVERSAL))
        if fn == "includes" and target is not None:
            return MAX_LIST_ATTRIBUTE_VALUES  # DRA: the longest list attribute
        relation = fn in ("_==_", "_!=_") or (fn in ("_<_", "_<=_", "_>_", "_>=_") and t0 in ("string", "bytes", "dyn"))
        if relation and len(args) == 2:
            return _factor(min(self.size(args[0]), self.size(args[1])), STRING_TRAVERSAL)
        return 1

    def _list_call(self, node: Node, factor: float, size: int) -> int:
        self.sizes[id(node)] = size
        return _add(_factor(size, factor), 1, 10)

    def _comp(self, node: Node) -> int:
        kind = node.value
        v1, v2 = node.extra
        total = self.cost(node.target)
        range_path = self.paths.get(id(node.target))
        range_size = self.size(node.target)
        if kind in ("optMap", "optFlatMap"):
            # hasValue() ? optional.of(cel.bind(v, value(), e)) : optional.none()
            # the expansion reads the target twice (hasValue() and value()) and binds the value
            self.locals.append({v1: UNBOUNDED})
            try:
                body = self.cost(node.args[0])
            finally:
                self.locals.pop()
            return _add(total, total, body, 13 if kind == "optMap" else 12)
        is_map = self.checked.type(node.target).kind == "map"
        scope: dict[str, tuple[str, ...] | int] = {}
        key_path = (*range_path, "@keys") if range_path else None
        val_path = (*range_path, "@values") if range_path else None
        first = key_path if is_map else val_path
        scope[v1] = first if first is not None else UNBOUNDED
        if v2 is not None:
            scope[v1] = key_path if is_map and key_path else 1
            scope[v2] = val_path if val_path is not None else UNBOUNDED
        self.locals.append(scope)
        try:
            bodies = [self.cost(b) for b in node.args]
        finally:
            self.locals.pop()
        if kind == "all":
            init, cond, step, result = 0, 2, _add(1, bodies[0]), 1
        elif kind == "exists":
            init, cond, step, result = 0, 3, _add(1, bodies[0]), 1
        elif kind == "exists_one":
            init, cond, step, result = 0, 0, _add(bodies[0], 2), 2
        elif kind == "filter":
            init, cond, step, result = 10, 0, _add(bodies[0], 13), 1
        elif kind in ("map", "transformList"):
            step = _add(12, bodies[-1])
            if len(bodies) == 2:
                step = _add(bodies[0], step)
            init, cond, result = 10, 0, 1
        elif kind in ("transformMap", "transformMapEntry"):
            step = _add(3 if kind == "transformMap" else 2, bodies[-1])
            if len(bodies) == 2:
                step = _add(bodies[0], step)
            init, cond, result = 30, 0, 1
        else:  # sortBy: cel.bind(in, range, in.@sortByAssociatedKeys(in.map(v, key)))
            keys = _add(1, 10, 1, _mul(range_size, _add(12, bodies[0])))
            sort = self._list_call(node, 2, _mul(range_size, range_size))
            return _add(10, total, 1, keys, sort)
        if kind in ("map", "transformList", "filter"):
            self.sizes[id(node)] = range_size
        return _add(total, init, result, _mul(range_size, _add(cond, step)))


def estimate(checked: Checked, sizes: Mapping[tuple[str, ...], int] | None = None) -> int:
    """The estimated worst-case cost of a checked expression (``UNBOUNDED`` when a size is unknown); ``sizes``:
    the largest size of values by their path from a variable (``("self", "spec", "ports")``, ``@values`` for
    items and map values, ``@keys`` for map keys), the DRA environment's limits when not given."""
    return _Estimator(checked, _DRA_SIZES if sizes is None else sizes).cost(checked.root)
