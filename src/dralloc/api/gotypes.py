"""The JSON types of a core/v1 object's values, checked as kube-apiserver's decoder checks them.

kube-apiserver decodes a body into its Go types (sigs.k8s.io/json's fork of ``encoding/json``) before it
does anything else with it, and answers 400 when a value does not fit its field:
``Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field
PodSpec.spec.hostname of type string``. What dralloc does not model of the core/v1 kinds it would otherwise
store as sent, and every Go client would then fail to decode the object. The rules, from Go's decoder:

- a value of another JSON type than its field's: ``json: cannot unmarshal <what> into Go struct field
  <S>.<path> of type <T>``, where <what> is ``string``, ``number``, ``bool``, ``array`` or ``object``, <S> the
  innermost Go struct holding the field, <path> the JSON field names from the root (no list indices, no map
  keys) and <T> the Go type (``v1.Protocol``, ``[]v1.Container``, ``map[string]string``);
- an integer field (int32, int64; uint8 for the items of a ``[]uint8`` written as a list) takes a JSON
  number only when ``strconv.ParseInt`` reads its text and it fits: else <what> is ``number <text>``, the
  number as the body wrote it (``number 1.5``, ``number 1e2``, ``number 4294967296``);
- ``null`` is the zero value anywhere;
- a ``[]uint8`` (Secret.data, ConfigMap.binaryData) is base64: ``illegal base64 data at input byte N``;
- a ``resource.Quantity`` goes through ``Quantity.UnmarshalJSON`` (any JSON value; the parser's error as it
  is; a string is parsed as written, between its quotes: one written with an escape never parses), an ``intstr.IntOrString`` is a string or an int32 (its inner decoding's error, given the field's
  context), a ``metav1.Time`` / ``MicroTime`` is a string that parses (dralloc.api.gotime's errors);
- a type error is noted and decoding goes on, so the first one in document order is reported; but the error
  of a type that decodes itself (Quantity, IntOrString, Time) stops decoding at once, and is reported even
  when a type error came before it.

Fields the schema lacks are not looked at (dralloc.api.strict reports those). The common case, a body with
no wrong value, is answered by msgspec (:func:`fits_shape`): a struct per schema struct whose leaves are typed
as Go's are; only a body that shape refuses is walked here, in Python, to word Go's error.
"""

from __future__ import annotations

import functools
import re
from typing import Annotated, Any, Literal, NamedTuple

import msgspec

from dralloc.api import core_v1_fields, core_v1_zeros, gotime, sent_json
from dralloc.api.gojson import go_float_text, go_json_type
from dralloc.api.quantity import ERR_FORMAT_WRONG, Quantity
from dralloc.api.sent_json import EscapedString, SentNumber

# the kinds of Go type a value is checked against
_STRUCT, _LIST, _MAP, _STRING, _BOOL, _INT, _QUANTITY, _INT_OR_STRING, _TIME, _MICRO_TIME, _BYTES, _ANY = range(12)
_SCALARS = {"string": _STRING, "bool": _BOOL, "int32": _INT, "int64": _INT, "uint8": _INT,
            "resource.Quantity": _QUANTITY, "intstr.IntOrString": _INT_OR_STRING, "v1.Time": _TIME,
            "v1.MicroTime": _MICRO_TIME, "v1.FieldsV1": _ANY, "runtime.RawExtension": _ANY}
_RANGES = {"int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1), "uint8": (0, 255)}
_INT32 = _RANGES["int32"]
_COLLECTIONS = (_LIST, _MAP, _BYTES)


class GoType:
    """A Go type compiled from the field table: what it is (``kind``), how Go prints it (``name``), and
    below it the fields of a struct (by JSON name) or the type of a list's items or a map's values."""

    __slots__ = ("kind", "name", "struct", "key", "fields", "item", "low", "high")

    def __init__(self, kind: int, name: str) -> None:
        self.kind = kind
        self.name = name
        self.struct = ""  # a struct's Go name (PodSpec): the "<S>" of the errors of its fields
        self.key = ""  # a struct's key in the field table (events.k8s.io/v1.Event)
        self.fields: dict[str, GoType] = {}
        self.item: GoType | None = None
        self.low, self.high = _RANGES.get(name, (0, 0))


@functools.cache
def go_type(name: str) -> GoType:
    """The compiled Go type of a name of the field table (``v1.PodSpec``, ``[]string``, ``v1.ResourceList``),
    compiled once (the table never changes; no core/v1 type holds itself)."""
    underlying = core_v1_fields.NAMED.get(name, name)
    if underlying in _SCALARS:
        return GoType(_SCALARS[underlying], name)
    if underlying == "[]uint8":
        compiled = GoType(_BYTES, name)
        compiled.item = go_type("uint8")
    elif underlying.startswith("[]"):
        compiled = GoType(_LIST, name)
        compiled.item = go_type(underlying[2:])
    elif underlying.startswith("map["):
        compiled = GoType(_MAP, name)
        compiled.item = go_type(underlying[4:].split("]", 1)[1])  # (the keys are strings: JSON's are)
    else:
        struct = underlying.removeprefix("v1.")
        compiled = GoType(_STRUCT, name)
        compiled.struct = struct.rsplit(".", 1)[-1]  # (events.k8s.io/v1.Event is Go's Event)
        compiled.key = struct
        compiled.fields = {field: go_type(field_type)
                           for field, field_type in core_v1_fields.GO_TYPES[struct].items()}
    return compiled


@functools.cache
def root_type(api_version: str, kind: str) -> GoType:
    """The Go type of a kind of the field table: its own (``events.k8s.io/v1.Event``) where the kind is also
    a core/v1 kind's name, else the type of its name (every group's Go package is named v1: apps/v1, batch/v1)."""
    qualified = f"{api_version}.{kind}"
    return go_type(qualified if qualified in core_v1_fields.GO_TYPES else "v1." + kind)


@functools.cache
def holds_quantity(api_version: str, kind: str) -> bool:
    """Whether an object of a kind of the field table can hold a ``resource.Quantity`` anywhere (a ConfigMap,
    a Secret, a Namespace cannot: their bodies' escaped strings need no second look). True for a kind the
    table lacks (nothing is known of it)."""
    if not has_go_types(api_version, kind):
        return True
    seen: set[int] = set()
    stack = [root_type(api_version, kind)]
    while stack:
        t = stack.pop()
        if t.kind == _QUANTITY:
            return True
        if id(t) in seen:
            continue
        seen.add(id(t))
        stack.extend(t.fields.values())
        if t.item is not None:
            stack.append(t.item)
    return False


class TypeProblem(NamedTuple):
    """A value Go's decoder refuses: where it is (``spec.containers[0].stdin``) and Go's error text;
    ``quotes_number``: the text quotes a number (``number 1.5``), as the JSON text wrote it where that is known."""

    path: str
    message: str
    quotes_number: bool = False


def has_go_types(api_version: Any, kind: Any) -> bool:
    """Whether the field table holds this kind: the core/v1 kinds dralloc stores or reads, the apps/v1
    and batch/v1 workload kinds (whose pod templates hold core/v1 types) and events.k8s.io/v1's Event."""
    if api_version == "v1":
        return kind in core_v1_fields.ROOTS
    return kind in core_v1_fields.GROUP_ROOTS.get(api_version, ())


def type_problem(data: Any, kind: str | None = None, api_version: Any = "v1",
                 sent: bytes | str | None = None) -> TypeProblem | None:
    """Go's decoding error of an object of the field table's kinds (None for others, and when every value
    fits). ``kind`` and ``api_version``: the object's when the object need not say (a request body, its
    URL's). ``sent``: the JSON text ``data`` was decoded from, whose numbers Go's errors quote as written
    (without it, as Go's encoder writes them: a YAML body reaches Go's decoder so)."""
    if not isinstance(data, dict):
        return None
    if kind is None:
        kind, api_version = data.get("kind"), data.get("apiVersion")  # (has_go_types checks their types)
    if not has_go_types(api_version, kind):
        return None
    root = root_type(api_version, kind)  # (has_go_types: both are strings)
    if sent is not None and holds_quantity(api_version, kind):
        suspects = sent_json.quantity_suspects(sent)
        if suspects:  # (a string written with escapes that a quantity may hold: only the text says where)
            return _first_problem(sent_json.sent_tree(sent, suspects), root, False)
    return None if fits_shape(data, root) else walk(data, root, sent)


def type_error(data: Any, kind: str | None = None, api_version: str = "v1",
               sent: bytes | str | None = None) -> str | None:
    """:func:`type_problem`'s message."""
    problem = type_problem(data, kind, api_version, sent)
    return None if problem is None else problem.message


# --- the walk: Go's error, worded ---------------------------------------------------------------------------


class _Stop(Exception):
    """An error of a type that decodes itself: decoding ends there."""

    def __init__(self, problem: TypeProblem) -> None:
        self.problem = problem


def walk(data: dict[str, Any], root: GoType, sent: bytes | str | None = None) -> TypeProblem | None:
    """The error Go's decoder gives ``data`` (decoded JSON or YAML) as ``root``, or None. ``sent``: the JSON
    text of ``data`` (see :func:`type_problem`)."""
    problem = _first_problem(data, root, sent is None)
    if problem is not None and problem.quotes_number and sent is not None:
        # Decoding forgot how the number was written (1e2 is 100.0): the text is read again, every number
        # kept with its text, only for a body Go refuses for a number.
        problem = _first_problem(sent_json.sent_tree(sent), root, False)
    return problem


def _first_problem(data: dict[str, Any], root: GoType, encoded: bool) -> TypeProblem | None:
    """``encoded``: ``data`` reaches Go's decoder as Go's encoder writes it (a YAML body), not as sent."""
    noted: list[TypeProblem] = []
    try:
        _check(data, root, "", (), "", noted, encoded)
    except _Stop as stop:
        return stop.problem
    return noted[0] if noted else None


# What Go's encoder writes as an escape in a string (a quantity holding one never parses): quotes,
# backslashes, control characters, the HTML characters and the two Unicode line separators
_ENCODER_ESCAPES = re.compile('["\\<>&\x00-\x1f\u2028\u2029]')


def _number_text(value: int | float, sent: str | None) -> str:
    """A number as Go's errors quote it: as the JSON text wrote it when that is known, else as Go's encoder
    writes it (an int's digits; a float's shortest digits, 0.00001, 1e+21)."""
    if sent is not None:
        return sent
    return str(value) if type(value) is int else go_float_text(value)


def _type_message(what: str, struct: str, fields: tuple[str, ...], name: str) -> str:
    if struct or fields:
        return f"json: cannot unmarshal {what} into Go struct field {struct}.{'.'.join(fields)} of type {name}"
    return f"json: cannot unmarshal {what} into Go value of type {name}"


def _check(value: Any, t: GoType, struct: str, fields: tuple[str, ...], path: str,
           noted: list[TypeProblem], encoded: bool) -> None:
    """Check ``value`` against ``t``: ``struct`` and ``fields`` are Go's error context (the innermost struct
    and the JSON field names to here), ``path`` the value's place with list indices and map keys; ``encoded``:
    see :func:`_first_problem`."""
    if value is None:
        return
    kind = t.kind
    vtype = type(value)
    sent = None  # a number's text (sent_json.sent_tree)
    escaped = False  # a string written with an escape (sent_json.sent_tree)
    if vtype is SentNumber:
        value, sent = value.value, value.text
        vtype = type(value)
    elif vtype is EscapedString:
        value, escaped = value.value, True
        vtype = str

    def note(what: str, name: str = t.name) -> None:
        if not noted:
            noted.append(TypeProblem(path, _type_message(what, struct, fields, name), what.startswith("number ")))

    def stop(message: str, quotes_number: bool = False) -> None:
        raise _Stop(TypeProblem(path, message, quotes_number))

    if kind == _STRUCT:
        if vtype is not dict:
            return note(go_json_type(value))
        for key, item in value.items():
            child = t.fields.get(key)
            if child is not None and item is not None:
                _check(item, child, t.struct, (*fields, key), f"{path}.{key}" if path else key, noted, encoded)
    elif kind == _LIST or (kind == _BYTES and vtype is list):
        if vtype is not list:
            return note(go_json_type(value))
        item_type = t.item
        assert item_type is not None
        for i, item in enumerate(value):
            _check(item, item_type, struct, fields, f"{path}[{i}]", noted, encoded)
    elif kind == _MAP:
        if vtype is not dict:
            return note(go_json_type(value))
        item_type = t.item
        assert item_type is not None
        for key, item in value.items():
            _check(item, item_type, struct, fields, f"{path}[{key}]", noted, encoded)
    elif kind == _STRING:
        if vtype is not str:
            note(go_json_type(value))
    elif kind == _BOOL:
        if vtype is not bool:
            note(go_json_type(value))
    elif kind == _INT:
        if vtype is int or vtype is float:
            if vtype is float or not t.low <= value <= t.high:
                note(f"number {_number_text(value, sent)}")
        else:
            note(go_json_type(value))
    elif kind == _BYTES:
        if vtype is not str:
            return note(go_json_type(value))
        if not noted and not _is_base64(value):
            offset = base64_error_offset(value.encode())
            noted.append(TypeProblem(path, f"illegal base64 data at input byte {offset}"))
    elif kind == _QUANTITY:
        if vtype is str:
            if escaped or encoded and _ENCODER_ESCAPES.search(value):
                stop(ERR_FORMAT_WRONG)  # (Go parses the text between the quotes: a backslash is no quantity's)
            try:
                Quantity(value.strip())
            except ValueError as exc:
                stop(str(exc))
        elif vtype is not int and vtype is not float:
            stop(ERR_FORMAT_WRONG)  # (Go hands the value's JSON text to the parser: "true", "{...}")
    elif kind == _INT_OR_STRING:
        if vtype is str:
            return
        if vtype is int and _INT32[0] <= value <= _INT32[1]:
            return
        numeric = vtype is int or vtype is float
        what = f"number {_number_text(value, sent)}" if numeric else go_json_type(value)
        stop(_type_message(what, struct, fields, "int32"), numeric)  # (its own decoding of the int, in context)
    elif kind == _TIME or kind == _MICRO_TIME:
        if vtype is not str:
            stop(_type_message(go_json_type(value), struct, fields, "string"))  # (the string it decodes first)
        error = gotime.parse_error(value, kind == _MICRO_TIME)
        if error is not None:
            stop(error)
    return None


# --- base64 as Go's encoding/base64 StdEncoding reads it --------------------------------------------------------

_BASE64_ALPHABET = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_NEWLINES = (0x0A, 0x0D)  # skipped anywhere


def base64_error_offset(src: bytes) -> int | None:
    """The offset Go's ``base64.StdEncoding.Decode`` reports as ``illegal base64 data at input byte N``, or
    None when it decodes. Go reads quanta of four symbols, skipping newlines; padding ends the input."""
    si = 0
    end = len(src)
    while si < end:
        j = 0
        while j < 4:
            if si == end:
                if j == 0:
                    return None
                return si - j  # a short quantum: StdEncoding requires padding
            byte = src[si]
            si += 1
            if byte in _BASE64_ALPHABET:
                j += 1
                continue
            if byte in _NEWLINES:
                continue
            if byte != 0x3D or j < 2:  # not "=", or padding where two symbols are needed first
                return si - 1
            if j == 2:  # "==" needed: the second "=" after any newlines
                while si < end and src[si] in _NEWLINES:
                    si += 1
                if si == end:
                    return end
                if src[si] != 0x3D:
                    return si - 1
                si += 1
            while si < end and src[si] in _NEWLINES:
                si += 1
            return si if si < end else None  # anything after the padding is trailing garbage
    return None


# --- the fast path: a msgspec shape that refuses what Go refuses ------------------------------------------------
# Each struct becomes a msgspec struct, every field optional, unknown fields refused; each leaf a msgspec type
# that accepts what Go accepts there: ints within their Go width, strings, booleans in C; a quantity, a time
# or base64 text through one hook, which takes a quantity the parser reads (most are in its cache), a time
# or base64 text Go reads (the plain forms at once, by a regular expression). A value the
# shape takes certainly decodes in Go; one it refuses may still (a null list item, an unknown field): the
# walk answers then. (A pattern constraint would do the leaves' work in msgspec, but costs it some
# microseconds per string; the hook, one call.)


class _Accepted:
    """What the hook gives back for a leaf it takes (msgspec wants an instance of the leaf's type)."""

    __slots__ = ()


class _QuantityLeaf(_Accepted):
    __slots__ = ()


class _TimeLeaf(_Accepted):
    __slots__ = ()


class _MicroTimeLeaf(_Accepted):
    __slots__ = ()


class _BytesLeaf(_Accepted):
    __slots__ = ()


_QUANTITY_OK, _TIME_OK, _MICRO_TIME_OK, _BYTES_OK = _QuantityLeaf(), _TimeLeaf(), _MicroTimeLeaf(), _BytesLeaf()
_PLAIN_DATE = r"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
_PLAIN_ZONE = r"(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])"
_PLAIN_TIME = re.compile(_PLAIN_DATE + r"(\.[0-9]{1,9})?" + _PLAIN_ZONE)
_PLAIN_MICRO_TIME = re.compile(_PLAIN_DATE + r"\.[0-9]{6}" + _PLAIN_ZONE)
_CANONICAL_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")


def _leaf_hook(leaf: type, value: Any) -> Any:
    """msgspec's dec_hook for the shapes' leaves that Python checks; a ValueError refuses the value."""
    vtype = type(value)
    if leaf is _QuantityLeaf:
        if vtype is str:
            if _in_stored_form(value):  # (a ValueError when it does not parse)
                return _QUANTITY_OK
            raise ValueError("not in the form it is stored in")  # (settle_zeros writes that form)
    elif vtype is str:
        if leaf is _TimeLeaf:
            if _time_parses(value):
                return _TIME_OK
        elif leaf is _MicroTimeLeaf:
            if _micro_time_parses(value):
                return _MICRO_TIME_OK
        elif _is_base64(value):
            return _BYTES_OK
    raise ValueError("Go's decoder refuses it")


# The same few quantities recur in every manifest: each text's answer is remembered.
@functools.lru_cache(maxsize=4096)
def _in_stored_form(value: str) -> bool:
    """Whether a quantity's JSON string is parsed by Go as written and stored as it is (False: an escape may
    be in its text, which the walk reads, or it is stored in another form). A ValueError if it does not parse."""
    return not _ENCODER_ESCAPES.search(value) and str(Quantity(value.strip())) == value


# An object repeats its few times (creation, managed fields, conditions), and the regular expression costs
# ten dict lookups: each text's answer is remembered.
@functools.lru_cache(maxsize=4096)
def _time_parses(value: str) -> bool:
    return bool(_PLAIN_TIME.fullmatch(value)) or gotime.parse_error(value) is None


@functools.lru_cache(maxsize=4096)
def _micro_time_parses(value: str) -> bool:
    return bool(_PLAIN_MICRO_TIME.fullmatch(value)) or gotime.parse_error(value, True) is None


def _is_base64(text: str) -> bool:
    """Whether Go's StdEncoding decodes ``text`` (canonical base64 at once, anything else by Go's rules).
    (Not binascii's strict mode: it takes "AAAA=", which Go refuses.)"""
    return bool(_CANONICAL_BASE64.fullmatch(text)) or base64_error_offset(text.encode()) is None


_SHAPE_LEAVES: dict[int, Any] = {
    _STRING: str, _BOOL: bool, _ANY: Any, _QUANTITY: _QuantityLeaf, _TIME: _TimeLeaf,
    _MICRO_TIME: _MicroTimeLeaf, _BYTES: _BytesLeaf,
    _INT_OR_STRING: Annotated[int, msgspec.Meta(ge=_INT32[0], le=_INT32[1])] | str,
}
@functools.cache
def shape(t: GoType) -> Any:
    """The msgspec type of ``t``'s shape, made once per type (go_type makes one GoType per name)."""
    kind = t.kind
    if kind == _INT:
        return Annotated[int, msgspec.Meta(ge=t.low, le=t.high)]
    if kind in _SHAPE_LEAVES:
        return _SHAPE_LEAVES[kind]
    if kind == _LIST:
        assert t.item is not None
        return list[shape(t.item)]  # type: ignore[misc]
    if kind == _MAP:
        assert t.item is not None
        return dict[str, shape(t.item)]  # type: ignore[misc]
    fields: list[tuple[str, Any, Any]] = []
    rename: dict[str, str] = {}
    for i, (field, child) in enumerate(t.fields.items()):
        fields.append((f"f{i}", _field_shape(f"{t.key}.{field}", child), None))  # (core/v1 types hold no cycles)
        rename[f"f{i}"] = field  # (JSON names need not be identifiers)
    return msgspec.defstruct(t.struct, fields, rename=rename, forbid_unknown_fields=True, gc=False)


def _field_shape(name: str, t: GoType) -> Any:
    """A struct field's shape, which also refuses the nulls and zero values kube-apiserver would not store as
    sent (settle_zeros: the body is then walked): a null but where Go writes one (a time held by value, a
    pointer or list without omitempty), and an omitempty field's zero unless it is a pointer (an int's
    negative values too: no Go int field of these kinds is negative when valid)."""
    field_shape = shape(t)
    kind = t.kind
    if name not in core_v1_zeros.NOT_OMITEMPTY and name not in core_v1_zeros.POINTERS:
        if kind == _STRING:
            field_shape = Annotated[str, msgspec.Meta(min_length=1)]
        elif kind == _BOOL:
            field_shape = Literal[True]
        elif kind == _INT:
            field_shape = Annotated[int, msgspec.Meta(ge=1, le=t.high)]
        elif kind == _LIST or kind == _MAP:
            field_shape = Annotated[field_shape, msgspec.Meta(min_length=1)]
    null_written = name in core_v1_zeros.VALUE_TIMES or name in core_v1_zeros.NOT_OMITEMPTY and (
        name in core_v1_zeros.POINTERS or kind in _COLLECTIONS)
    return field_shape | None if null_written else field_shape


def fits_shape(data: dict[str, Any], root: GoType) -> bool:
    """Whether msgspec converts ``data`` into ``root``'s shape: then Go's decoder takes every value (and no
    field is unknown)."""
    try:
        msgspec.convert(data, shape(root), dec_hook=_leaf_hook)
    except msgspec.ValidationError:
        return False
    return True


@functools.cache
def shape_decoder(kind: str) -> msgspec.json.Decoder[Any]:
    """A JSON decoder into a core/v1 kind's shape (dralloc.api.strict's fast path for unknown fields)."""
    return msgspec.json.Decoder(shape(go_type("v1." + kind)), dec_hook=_leaf_hook)


# --- nulls and zero values, as kube-apiserver stores them ------------------------------------------------------
# kube-apiserver decodes a body into the Go types and stores what Go's encoder writes of them. Decoding a null
# leaves a field as it was (zero, in a new object): a null is its field's zero. The encoder does not write a
# zero (null, "", 0, false, an empty list or map) of an omitempty field that is no pointer, so such a field
# is neither stored nor returned (nor owned in managedFields); a pointer's zero value (a *bool's false) is
# written, its null (nil) is not. A field without omitempty is written whatever it holds: a null scalar as
# its zero, a null list or map as null. A struct is written whether or not it is zero: a null struct is as
# if absent (dralloc's defaults write it as Go does), but a time held by value writes its zero as null (a pod
# template's ``creationTimestamp: null``), so its null stays. A null list item or map value is its type's
# zero value: ``[null, "x"]`` is ``["", "x"]``, a null quantity ``"0"``.

# a zero of the JSON type of each kind of scalar or collection field (a value of another type is left to
# the type check)
_ZERO: dict[int, Any] = {_STRING: "", _INT: 0, _BOOL: False, _QUANTITY: "0", _INT_OR_STRING: 0}


def _is_zero(value: Any, kind: int) -> bool:
    vtype = type(value)
    if kind == _STRING or kind == _BYTES:
        return value == "" if vtype is str else kind == _BYTES and vtype is list and not value
    if kind == _BOOL:
        return value is False
    if kind == _INT:
        return vtype is int and value == 0
    if kind == _LIST:
        return vtype is list and not value
    return kind == _MAP and vtype is dict and not value


def stored_as_sent(data: Any, kind: str, api_version: str) -> bool:
    """Whether an object of the field table's kinds is certainly stored as sent: its shape (whose fields
    refuse what :func:`settle_zeros` changes) takes it. (False says nothing: settle_zeros then walks it.)"""
    return not has_go_types(api_version, kind) or fits_shape(data, root_type(api_version, kind))


def settle_zeros(data: Any, kind: str, api_version: str) -> None:
    """Change, in place, an object of the field table's kinds as kube-apiserver stores it (see above): its
    nulls and zero values. Values of another JSON type than their field's are left as they are (the type
    check refuses them), so this may run before it."""
    if isinstance(data, dict) and has_go_types(api_version, kind):
        _settle(data, root_type(api_version, kind))


def _settle(value: Any, t: GoType) -> None:
    kind = t.kind
    if kind == _STRUCT and type(value) is dict:
        dropped: list[str] = []
        zeroed: list[tuple[str, Any]] = []
        for key, item in value.items():
            child = t.fields.get(key)
            if child is None:
                continue  # (an unknown field: dropped with the others)
            child_kind = child.kind
            if item is None:
                name = f"{t.key}.{key}"
                if child_kind in _ZERO or child_kind in _COLLECTIONS:
                    if name not in core_v1_zeros.NOT_OMITEMPTY:
                        dropped.append(key)
                    elif name not in core_v1_zeros.POINTERS and child_kind in _ZERO:
                        zeroed.append((key, _ZERO[child_kind]))  # (a collection's nil is written as null)
                elif name not in core_v1_zeros.VALUE_TIMES:
                    dropped.append(key)  # (a struct: as if absent)
            elif child_kind == _QUANTITY:
                stored = _stored_quantity(item)
                if stored is not None and stored != item:
                    zeroed.append((key, stored))
            elif _is_zero(item, child_kind):
                name = f"{t.key}.{key}"
                if name not in core_v1_zeros.NOT_OMITEMPTY and name not in core_v1_zeros.POINTERS:
                    dropped.append(key)
            elif type(item) is dict or type(item) is list:
                _settle(item, child)
        for key in dropped:
            del value[key]
        for key, zero in zeroed:
            value[key] = zero
    elif (kind == _LIST or kind == _BYTES) and type(value) is list or kind == _MAP and type(value) is dict:
        item_type = t.item
        assert item_type is not None
        places = range(len(value)) if type(value) is list else list(value)
        for place in places:
            item = value[place]
            if item is None:
                value[place] = {} if item_type.kind == _STRUCT else _ZERO.get(item_type.kind)
            elif type(item) is dict or type(item) is list:
                _settle(item, item_type)
            elif item_type.kind == _QUANTITY:
                stored = _stored_quantity(item)
                if stored is not None:
                    value[place] = stored


def _stored_quantity(value: Any) -> str | None:
    """A quantity as kube-apiserver stores it: parsed from its JSON text (a number's as Go's encoder writes
    it: the text kubectl sends) and written as Quantity's MarshalJSON writes it (``1000m`` is ``1``, ``0.5``
    is ``500m``); None for a value that does not parse (the type check's)."""
    vtype = type(value)
    text = value.strip() if vtype is str else str(value) if vtype is int else go_float_text(value) \
        if vtype is float else None
    if text is None:
        return None
    try:
        return str(Quantity(text))
    except ValueError:
        return None
