"""What decoding a custom resource does with its CustomResourceDefinition's structural schema, as
kube-apiserver's custom resource handler does it: pruning of the fields the schema does not declare (unless under
``x-kubernetes-preserve-unknown-fields``; an embedded resource keeps its apiVersion, kind and metadata) and
defaulting from ``default``.

A schema is read once into a tree of plans (:class:`Decoding`), one per node, that say only what a walk needs
there: the declared fields and what is below them, whether unknown fields are kept, and, for defaulting, the
defaults and the parts below that hold one. A walk then visits only the values a plan can change: the scalars of
an object are not called into, and a part of the schema without defaults is not walked at all. Hold one
:class:`Decoding` per schema (a CRD version's) and reuse it.
"""

from __future__ import annotations

import copy
from typing import Any

from dralloc.validation import field as f

Schema = dict[str, Any]
PRESERVE = "x-kubernetes-preserve-unknown-fields"
EMBEDDED = "x-kubernetes-embedded-resource"
INT_OR_STRING = "x-kubernetes-int-or-string"
# What an embedded resource (and the root) keeps whatever its schema says: its type and object metadata.
TYPE_META = frozenset(("apiVersion", "kind", "metadata"))


class _Pruning:
    """What pruning reads of one schema node."""

    __slots__ = ("declared", "additional", "keeps_unknown", "keeps_type_meta", "items", "known")

    def __init__(self, schema: Any, root: bool = False) -> None:
        if not isinstance(schema, dict):
            # (a structural schema's nodes are objects; anything else is read as a node that declares nothing)
            schema = {}
        properties = schema.get("properties")
        additional = schema.get("additionalProperties")
        # a declared field's plan (a field declared as null is not declared: additionalProperties applies)
        self.declared: dict[str, _Pruning] = {
            key: _Pruning(child) for key, child in properties.items() if child is not None
        } if isinstance(properties, dict) else {}
        self.additional = _Pruning(additional) if isinstance(additional, dict) else None
        self.keeps_unknown = schema.get(PRESERVE) is True or additional is True
        self.keeps_type_meta = root or bool(schema.get(EMBEDDED))
        items = schema.get("items")
        self.items = _Pruning(items) if isinstance(items, dict) else None
        # the keys an object here keeps (None: every key), to see at once that it has no unknown one
        self.known: frozenset[str] | None = None
        if self.additional is None and not self.keeps_unknown:
            self.known = frozenset(self.declared) | (TYPE_META if self.keeps_type_meta else frozenset())


def _prune_object(value: dict[str, Any], plan: _Pruning, path: str, removed: list[str], remove: bool) -> None:
    """The unknown fields of ``value`` and below (``remove``: taken out of it, else left; a null member is then
    not looked at, as in the unknown-field check of a body, where a null removes the field)."""
    declared, additional = plan.declared, plan.additional
    known = plan.known
    if known is None or value.keys() <= known:  # (nearly always: nothing to remove here, only below)
        keeps_type_meta = plan.keeps_type_meta
        for key, item in value.items():
            if not isinstance(item, (dict, list)):
                continue  # (a scalar has nothing below it)
            if keeps_type_meta and key in TYPE_META:
                continue
            child = declared.get(key, additional)
            if child is None:
                continue  # (an unknown field kept as it is)
            at = f"{path}.{key}" if path else key
            if isinstance(item, dict):
                _prune_object(item, child, at, removed, remove)
            elif child.items is not None:
                _prune_list(item, child.items, at, removed, remove)
        return
    gone: list[str] | None = None
    for key, item in value.items():
        if plan.keeps_type_meta and key in TYPE_META:
            continue  # (object metadata is ObjectMeta's: checked by the metadata rules)
        child = declared.get(key)
        if child is None:
            child = additional
            if child is None:
                if plan.keeps_unknown or (item is None and not remove):
                    continue
                removed.append(f.child(path, key))
                if remove:
                    if gone is None:
                        gone = []
                    gone.append(key)
                continue
        if isinstance(item, dict):
            _prune_object(item, child, f.child(path, key), removed, remove)
        elif isinstance(item, list) and child.items is not None:
            _prune_list(item, child.items, f.child(path, key), removed, remove)
    if gone is not None:
        for key in gone:
            del value[key]


def _prune_list(value: list[Any], items: _Pruning, path: str, removed: list[str], remove: bool) -> None:
    for i, item in enumerate(value):
        if isinstance(item, dict):
            _prune_object(item, items, f"{path}[{i}]", removed, remove)
        elif isinstance(item, list) and items.items is not None:
            _prune_list(item, items.items, f"{path}[{i}]", removed, remove)


class _Defaulting:
    """What defaulting reads of one schema node: its fields' defaults and its parts that default something."""

    __slots__ = ("filled", "below", "additional", "items", "item_default")

    def __init__(self, schema: Schema) -> None:
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        # (field, its default, whether a null stays null), in the schema's order
        self.filled: list[tuple[str, Any, bool]] = [
            (key, child["default"], bool(child.get("nullable"))) for key, child in properties.items()
            if isinstance(child, dict) and "default" in child]
        self.below: list[tuple[str, _Defaulting]] = [
            (key, plan) for key, child in properties.items()
            if isinstance(child, dict) and (plan := _defaulting(child)) is not None]
        additional = schema.get("additionalProperties")
        self.additional = _defaulting(additional) if isinstance(additional, dict) else None
        items = schema.get("items")
        self.items: _Defaulting | None = None
        # a null item's default, when the items' schema has one and is not nullable
        self.item_default: tuple[Any] | None = None
        if isinstance(items, dict):
            self.items = _defaulting(items)
            if "default" in items and not items.get("nullable"):
                self.item_default = (items["default"],)
                if self.items is None:
                    self.items = _Defaulting({})

    def defaults_something(self) -> bool:
        return bool(self.filled or self.below or self.additional is not None or self.items is not None)


def _defaulting(schema: Schema) -> _Defaulting | None:
    """A node's defaulting plan, None when neither it nor anything below it has a default."""
    plan = _Defaulting(schema)
    return plan if plan.defaults_something() else None


def _with_defaults(value: Any, plan: _Defaulting) -> Any:
    if isinstance(value, dict):
        out: dict[str, Any] | None = None
        for key, default, nullable in plan.filled:
            if key not in value or (value[key] is None and not nullable):
                if out is None:
                    out = dict(value)
                out[key] = _copy(default)
        for key, child in plan.below:
            current = out if out is not None else value
            if key in current:
                item = current[key]
                shown = _with_defaults(item, child)
                if shown is not item:
                    if out is None:
                        out = dict(value)
                    out[key] = shown
        additional = plan.additional
        if additional is not None:
            for key, item in (out if out is not None else value).items():
                shown = _with_defaults(item, additional)
                if shown is not item:
                    if out is None:
                        out = dict(value)
                    out[key] = shown
        return out if out is not None else value
    if isinstance(value, list):
        items = plan.items
        if items is None:
            return value
        listed: list[Any] | None = None
        for i, item in enumerate(value):
            if item is None and plan.item_default is not None:
                shown = _with_defaults(_copy(plan.item_default[0]), items)
            else:
                shown = _with_defaults(item, items)
            if shown is not item:
                if listed is None:
                    listed = list(value)
                listed[i] = shown
        return listed if listed is not None else value
    return value


def _copy(default: Any) -> Any:
    """A default's own copy (a scalar is shared: it cannot change)."""
    return copy.deepcopy(default) if isinstance(default, (dict, list)) else default


class Decoding:
    """Pruning and defaulting of the objects of one schema, its nodes read once (see the module's note)."""

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self._pruning = _Pruning(schema, root=True)
        self._defaulting = _defaulting(schema)

    def prune(self, obj: dict[str, Any]) -> list[str]:
        """Remove, in place, every field of ``obj`` (a whole custom resource) that the schema does not declare,
        unless under ``x-kubernetes-preserve-unknown-fields``; the paths removed (``spec.foo``), sorted, as
        kube-apiserver's field validation reports them (``unknown field "spec.foo"``)."""
        removed: list[str] = []
        _prune_object(obj, self._pruning, "", removed, True)
        return sorted(removed)

    def unknown_fields(self, obj: dict[str, Any]) -> list[str]:
        """The paths :meth:`prune` would remove from ``obj`` with its null members left out (in a merge patch a
        null removes the field: what is checked is the patched object), without changing ``obj``."""
        removed: list[str] = []
        _prune_object(obj, self._pruning, "", removed, False)
        return sorted(removed)

    def with_defaults(self, value: Any) -> Any:
        """``value`` with every missing field whose schema has a ``default`` filled in (and a ``null`` where the
        schema is not nullable), then the defaults below it, without changing ``value``: the parts that take no
        default are ``value``'s own (shared), and ``value`` itself comes back when nothing is defaulted. Reads
        default every object they show: most need nothing, and a copy of each would cost more than the look."""
        if self._defaulting is None:
            return value
        return _with_defaults(value, self._defaulting)

    def apply_defaults(self, value: Any) -> None:
        """Fill in, in place, what :meth:`with_defaults` fills in, as kube-apiserver's structural defaulting
        does on every write and on every read from storage. (``value`` itself is changed; a part below it that
        takes a default is replaced by a defaulted copy.)"""
        shown = self.with_defaults(value)
        if shown is value:
            return
        if isinstance(value, dict):
            value.clear()
            value.update(shown)
        elif isinstance(value, list):
            value[:] = shown


def prune(obj: dict[str, Any], schema: Schema) -> list[str]:
    """:meth:`Decoding.prune` with a schema read for this call."""
    return Decoding(schema).prune(obj)


def with_defaults(value: Any, schema: Schema | None) -> Any:
    """:meth:`Decoding.with_defaults` with a schema read for this call (``None``: no schema, nothing to do)."""
    return value if schema is None else Decoding(schema).with_defaults(value)


def apply_defaults(value: Any, schema: Schema | None) -> None:
    """:meth:`Decoding.apply_defaults` with a schema read for this call (``None``: no schema, nothing to do)."""
    if schema is not None:
        Decoding(schema).apply_defaults(value)
