"""A typed kind's JSON body (the modelled API groups: resource.k8s.io, coordination, scheduling, ...) read
with each of its checks done once, on the common path.

A create or update of such a kind walks its body several times: decoded to plain data, checked for repeated
keys (:func:`dralloc.api.parsing.repeats_no_key`) and for fields its schema lacks (the text decoded again,
into the kind's shape: :mod:`dralloc.api.strict`), its times checked as Go parses them, converted into the
model (``objects.typed``), and the defaulted model turned into the stored dict (``objects.stored_form``).
For the common body, :func:`read` answers the same questions with fewer walks:

- a body without a backslash and without ``ime`` in it names no time field (every such field's name,
  ``creationTimestamp``, ``time``, ``timeAdded``, ..., holds it): no time is looked for;
- the model object is converted once, and kept on the request's target for ``typed()``;
- the stored form (the defaulted object's ``to_dict``) is made once and kept for ``stored_form()``, which
  would default the object and make it again;
- when no API default changes the object, that form equals the body exactly when the body has no field its
  schema lacks: converting drops such a field (and a value written in another form than the stored one, a
  quantity ``1000m`` or an explicit ``null``, only makes the two differ, which leaves the answer to the
  shape, as it is for a kind whose defaults apply). The one null every Go client sends, a new object's
  ``creationTimestamp``, is left out of the comparison.

Whatever the checks cannot settle is left to the general path, which then answers, with its own messages,
exactly as before: :func:`read` never refuses a body.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import msgspec

from dralloc.api import conversion, gotime, strict
from dralloc.api.codec import decode, to_dict
from dralloc.api.defaults import apply_defaults
from dralloc.api.kinds import model_for
from dralloc.api.parsing import repeats_no_key
from dralloc.errors import DecodeError
from dralloc.server.http.routing import Target


class _Plan(NamedTuple):
    """What reading a body of one (apiVersion, kind) needs, found once."""

    shape: msgspec.json.Decoder[Any] | None  # the kind's shape (None: it has none, the walk decides)
    time_needles: tuple[bytes, ...]  # text one of which a body naming a time field holds


@functools.lru_cache(maxsize=256)
def _plan(api_version: str, kind: str) -> _Plan | None:
    """None for what :func:`read` does not take: a kind dralloc does not model, or an older version of
    resource.k8s.io (converted to v1 before it is decoded)."""
    model = model_for(api_version, kind)
    if model is None or api_version in conversion.SERVED_VERSIONS and api_version != conversion.V1:
        return None
    keys = gotime.model_time_keys(kind)
    needles = (b"ime",) if all("ime" in key for key in keys) else tuple(key.encode() for key in sorted(keys))
    return _Plan(strict.model_shape_decoder(model), needles)


def applies(t: Target) -> bool:
    """Whether :func:`read` may read the bodies sent to ``t``: a kind of a modelled group stored as itself
    (not a view of another resource's objects)."""
    return bool(t.resource.group) and t.resource.stored_as is None


def read(raw: bytes, data: dict[str, Any], t: Target, mode: str) -> bool:
    """Read a JSON body ``raw`` (decoded into ``data``, whose kind, apiVersion and metadata have their JSON
    types) sent to ``t`` with ``fieldValidation`` ``mode``. When it decodes into the model, the object is
    kept in ``t.decoded``. True when the body certainly has nothing to report: no repeated key and no
    unknown field (or ``mode`` is Ignore). False says nothing: the caller's own checks decide."""
    api_version, kind = t.api_version, t.resource.kind
    if data.get("apiVersion") != api_version or data.get("kind") != kind:
        return False  # (typed() says what is wrong with these, or fills them in)
    plan = _plan(api_version, kind)
    if plan is None:
        return False
    obj = _decoded(raw, data, plan)
    if obj is None:
        return False
    t.decoded = (data, obj)
    defaulted = apply_defaults(obj)
    form = to_dict(defaulted)
    _FORMS.keep(obj, form)
    if mode == "Ignore":
        return True
    if not repeats_no_key(raw, data):
        return False
    if defaulted is obj and (form == data or form == _without_null_creation_time(data)):
        return True  # (no default applied: the form is the object as decoded)
    return plan.shape is not None and _decodes(plan.shape, raw)


def _without_null_creation_time(data: dict[str, Any]) -> dict[str, Any] | None:
    """The body without a ``"creationTimestamp": null`` in its metadata, which every Go client writes into a
    new object (a zero ``metav1.Time`` marshals as null, whatever omitempty says) and the object's form leaves
    out; None when it has none. (The field is known: leaving it out hides no unknown field.)"""
    meta = data.get("metadata")
    if type(meta) is not dict or "creationTimestamp" not in meta or meta["creationTimestamp"] is not None:
        return None
    return {**data, "metadata": {key: value for key, value in meta.items() if key != "creationTimestamp"}}


def _decoded(raw: bytes, data: dict[str, Any], plan: _Plan) -> Any:
    """``data`` in its model, as ``objects.typed`` decodes it (its times parsed first), or None when that
    would fail (typed() then words the error)."""
    if b"\\" in raw or any(needle in raw for needle in plan.time_needles):
        if gotime.model_time_error(data) is not None:
            return None
    try:
        return decode(data)
    except DecodeError:
        return None


def _decodes(decoder: msgspec.json.Decoder[Any], raw: bytes) -> bool:
    try:
        decoder.decode(raw)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return False
    return True


class _Forms:
    """The stored forms :func:`read` made, each found by the object it was made of, until ``stored_form()``
    takes it (once: the stored dict is then the caller's to change).

    ``stored_form()`` gets the object a create made of the decoded one: the same fields but its metadata
    (a namespace set, a name generated). Entries are found by the identity
    of the object's ``spec`` (each entry holds its object, so no other object takes that identity while the
    entry is kept), and the form of the new metadata replaces the old. Entries nobody takes (a create that
    fails validation) are dropped once there are more than ``LIMIT``."""

    LIMIT = 64

    def __init__(self) -> None:
        self._by_spec: dict[int, tuple[Any, dict[str, Any]]] = {}

    def keep(self, obj: Any, form: dict[str, Any]) -> None:
        spec = getattr(obj, "spec", None)
        if spec is None or "metadata" not in form:
            return
        if len(self._by_spec) >= self.LIMIT:
            self._by_spec.clear()
        self._by_spec[id(spec)] = (obj, form)

    def take(self, obj: Any) -> dict[str, Any] | None:
        """The stored form of ``obj`` (before defaulting: API defaults never read the metadata, so the form
        kept of the defaulted object stands) when it was kept for an object that differs from ``obj`` only in
        its metadata; None otherwise."""
        spec = getattr(obj, "spec", None)
        if spec is None:
            return None
        entry = self._by_spec.pop(id(spec), None)  # (one atomic step: the controllers' threads share this)
        if entry is None:
            return None
        source, form = entry
        if type(source) is not type(obj):
            return None
        for name in obj.__struct_fields__:
            if name != "metadata" and getattr(obj, name) is not getattr(source, name):
                return None
        metadata = to_dict(obj.metadata)
        if not metadata:
            return None  # (an empty metadata is left out of the stored form: made the general way)
        stored = dict(form)
        stored["metadata"] = metadata  # (in its place: the key is there already)
        return stored


_FORMS = _Forms()


def stored_dict(obj: Any) -> dict[str, Any] | None:
    """The stored form :func:`read` made of ``obj``'s decoded body (see :class:`_Forms`), or None."""
    return _FORMS.take(obj)
