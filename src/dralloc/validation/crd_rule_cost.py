"""The estimated cost of a CRD's ``x-kubernetes-validations`` rules, which kube-apiserver checks when the CRD is
written: a rule's worst-case cost (cel-go's estimate, sized by the schema), times the number of times it may
run in one object, must stay within 10,000,000, and all the rules of a version's schema together within
100,000,000 (``Forbidden: estimated rule cost exceeds budget by factor of 2.3x (try simplifying the rule, ...)``).

Sizes come from the schema as kube-apiserver derives them: a string's ``maxLength`` (else its longest ``enum``
value, else what fits in a 3 MiB request), a list's ``maxItems`` and a map's ``maxProperties`` (else as many of
their smallest items as fit in a request). A rule runs once per value of its node: the product of the
``maxItems`` and ``maxProperties`` of the lists and maps above it, or, under one without, as many of the node's
smallest values as fit in a request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dralloc.cel import CELCompileError, compile_expression
from dralloc.validation import field as f

RULES = "x-kubernetes-validations"
PER_EXPRESSION_LIMIT = 10_000_000  # apiextensions' StaticEstimatedCostLimit
PER_SCHEMA_LIMIT = 100_000_000  # apiextensions' StaticEstimatedCRDCostLimit
MAX_REQUEST_SIZE = 3 * 1024 * 1024  # celconfig.MaxRequestSizeBytes
MAX_COST = 2**64 - 1
_MOST_EXPENSIVE = 4  # how many of the dearest rules a total over the limit names
_VARIABLES = {"self": "dyn", "oldSelf": "dyn"}
# The smallest JSON of a string of each format (its quotes included)
_FORMAT_MIN_SIZES = {"duration": 4, "date": 12, "date-time": 22}
_FORMAT_MAX_SIZES = {"duration": 64, "date": 12, "date-time": 34}

Path = tuple[str, ...]
_TYPE_AND_META = {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                  "metadata": {"type": "object", "properties": {"name": {"type": "string"},
                                                                "generateName": {"type": "string"}}}}


def min_serialized_size(schema: dict[str, Any]) -> int:
    """The size of the smallest JSON a value of ``schema`` can have."""
    kind = schema.get("type")
    if schema.get("x-kubernetes-int-or-string"):
        return 1
    if kind == "string":
        return _FORMAT_MIN_SIZES.get(str(schema.get("format") or ""), 2)
    if kind == "boolean":
        return 4
    if kind in ("integer", "number"):
        return 1
    return 2  # [] or {}


def _max_string_length(schema: dict[str, Any]) -> int:
    if isinstance(schema.get("maxLength"), int):
        return max(0, schema["maxLength"])
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return max(len(str(v)) for v in enum)
    if schema.get("x-kubernetes-int-or-string"):
        return MAX_REQUEST_SIZE - 2
    return _FORMAT_MAX_SIZES.get(str(schema.get("format") or ""), MAX_REQUEST_SIZE - 2)


def max_elements(schema: dict[str, Any]) -> int | None:
    """The most items of a list, properties of a map, characters of a string (None: not one of those)."""
    kind = schema.get("type")
    if kind == "string" or schema.get("x-kubernetes-int-or-string"):
        return _max_string_length(schema)
    if kind == "array":
        if isinstance(schema.get("maxItems"), int):
            return max(0, schema["maxItems"])
        items = schema.get("items")
        return (MAX_REQUEST_SIZE - 2) // (min_serialized_size(items if isinstance(items, dict) else {}) + 1)
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        if isinstance(schema.get("maxProperties"), int):
            return max(0, schema["maxProperties"])
        return (MAX_REQUEST_SIZE - 2) // (min_serialized_size(schema["additionalProperties"]) + 6)
    return None


def sizes(schema: dict[str, Any], at: Path) -> dict[Path, int]:
    """The largest size of every value below ``at`` (``("self",)``) that has one, keyed as the cost estimator
    walks a rule: field names, ``@values`` for a list's items and a map's values, ``@keys`` for its keys."""
    out: dict[Path, int] = {}
    _sizes(schema, at, out, 0)
    return out


def _sizes(schema: Any, at: Path, out: dict[Path, int], depth: int) -> None:
    if not isinstance(schema, dict) or depth > 32:
        return
    most = max_elements(schema)
    if most is not None:
        out[at] = most
    elif schema.get("type") in ("integer", "number", "boolean"):
        out[at] = 1
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        _sizes(schema["items"], (*at, "@values"), out, depth + 1)
    elif isinstance(schema.get("additionalProperties"), dict):
        out[(*at, "@keys")] = MAX_REQUEST_SIZE - 2
        _sizes(schema["additionalProperties"], (*at, "@values"), out, depth + 1)
    elif isinstance(schema.get("properties"), dict):
        out.setdefault(at, len(schema["properties"]))
        for name, child in schema["properties"].items():
            _sizes(child, (*at, escaped(str(name))), out, depth + 1)


# CEL's reserved words, which a rule names as __word__ (cel.Escape)
_RESERVED = frozenset({"true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function",
                       "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while"})


def escaped(name: str) -> str:
    """A property's name as a rule selects it (``namespace`` as ``__namespace__``, ``a-b`` as ``a__dash__b``)."""
    if name in _RESERVED:
        return f"__{name}__"
    return (name.replace("__", "__underscores__").replace(".", "__dot__").replace("-", "__dash__")
            .replace("/", "__slash__"))


def _times(a: int, b: int) -> int:
    return 0 if a == 0 else min(MAX_COST, a * b)


@dataclass
class _Total:
    """The estimated cost of a schema's rules together, and the dearest of them (each at least 1% of the
    limit), dearest first."""

    cost: int = 0
    dearest: list[tuple[int, str]] = field(default_factory=list)

    def observe(self, path: str, cost: int) -> None:
        self.cost = min(MAX_COST, self.cost + cost)
        if cost < PER_SCHEMA_LIMIT // 100:
            return
        at = next((i for i, (c, _) in enumerate(self.dearest) if c < cost), len(self.dearest))
        self.dearest.insert(at, (cost, path))
        del self.dearest[_MOST_EXPENSIVE:]


def cost_message(what: str, cost: int, limit: int) -> str:
    """kube-apiserver's text for a cost over its limit (how many times over: Go's %f under 1.5, %.1f up to 100)."""
    factor = cost / limit
    if factor > 100.0:
        times = "more than 100x"
    elif factor < 1.5:
        times = f"{factor:f}x"
    else:
        times = f"{factor:.1f}x"
    return (f"{what} exceeds budget by factor of {times} (try simplifying the rule, or adding maxItems, "
            f"maxProperties, and maxLength where arrays, maps, and strings are declared)")


def cost_errors(schema: dict[str, Any], path: str, per_expression: bool = True) -> list[f.FieldError]:
    """The cost errors of the rules of a version's (structural) schema at ``path``; ``per_expression``: check
    each rule's own limit too (an update leaves it unchecked for a schema it does not change)."""
    errors: list[f.FieldError] = []
    total = _Total()
    # (at the root, a rule also reads the object's type fields and metadata's names: strings of any length)
    root = {**schema, "properties": {**(schema.get("properties") or {}), **_TYPE_AND_META}}
    _walk(root if schema.get("type") == "object" else schema, path, 1, total, errors, per_expression)
    if total.cost > PER_SCHEMA_LIMIT:
        for _, dear in total.dearest:
            errors.append(f.forbidden(dear, "contributed to estimated rule cost total exceeding cost limit for "
                                            "entire OpenAPIv3 schema"))
        errors.append(f.forbidden(path, cost_message("x-kubernetes-validations estimated rule cost total for "
                                                     "entire OpenAPIv3 schema", total.cost, PER_SCHEMA_LIMIT)))
    return errors


def _walk(schema: Any, path: str, cardinality: int | None, total: _Total, errors: list[f.FieldError],
          per_expression: bool) -> None:
    if not isinstance(schema, dict):
        return
    rules = schema.get(RULES) or ()
    if rules:
        runs = cardinality if cardinality is not None else MAX_REQUEST_SIZE // (min_serialized_size(schema) + 1)
        table = {**sizes(schema, ("self",)), **sizes(schema, ("oldSelf",))}
        for i, rule in enumerate(rules):
            if not isinstance(rule, dict):
                continue
            at = f.index(f.child(path, RULES), i)
            for key, what in (("rule", "estimated rule cost"), ("messageExpression",
                                                                 "estimated messageExpression cost")):
                text = rule.get(key)
                if not isinstance(text, str) or not text.strip():
                    continue
                try:
                    program = compile_expression(text, _VARIABLES, cost_sizes=table)
                except CELCompileError:
                    continue  # (its compile error is reported)
                # (a message's cost is not multiplied: it runs only when its rule fails)
                cost = _times(program.max_cost or 0, runs) if key == "rule" else program.max_cost or 0
                if per_expression and cost > PER_EXPRESSION_LIMIT:
                    errors.append(f.forbidden(f.child(at, key), cost_message(what, cost, PER_EXPRESSION_LIMIT)))
                total.observe(f.child(at, key), cost)
    for name, child in sorted((schema.get("properties") or {}).items()):
        _walk(child, f"{f.child(path, 'properties')}[{name}]", cardinality, total, errors, per_expression)
    if isinstance(schema.get("items"), dict):
        _walk(schema["items"], f.child(path, "items"), _child_cardinality(cardinality, schema), total, errors,
              per_expression)
    if isinstance(schema.get("additionalProperties"), dict):
        _walk(schema["additionalProperties"], f.child(path, "additionalProperties"),
              _child_cardinality(cardinality, schema), total, errors, per_expression)


def _child_cardinality(cardinality: int | None, schema: dict[str, Any]) -> int | None:
    """How many times a list's item or a map's value may occur: bounded only by declared maxima."""
    bound = schema.get("maxItems") if schema.get("type") == "array" else schema.get("maxProperties")
    if cardinality is None or not isinstance(bound, int):
        return None
    return _times(cardinality, max(0, bound))
