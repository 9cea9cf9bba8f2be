"""The single pass: a body as Go writes it, read by straight-line code compiled for the table's messages.

Go writes a message's fields in field-number order, each once, a list's items and a map's entries
together, every map entry as {1: key, 2: value}. Each message of a table is compiled once into a Python
function that reads exactly that form as straight-line code: per field, in field-number order, one
comparison of the next key with the field's own, then its value read in place; small messages are read in
place in the code of the message that holds them (no call). Anything else — another order, an unknown
field, a truncation, a bad byte — makes the function give up (_Unusual, or an IndexError,
UnicodeDecodeError or ProtobufError on the way) and decoder.py's :func:`message` reads the body again with
the two passes (walker.py), which answer every form and every error. Where a function returns, its object
is the two passes' object, key order included (tests/server/test_protobuf_reference.py compares them on
random bodies, and tests/server/test_protobuf_round_trip.py checks that Go's bodies are read by the single
pass).

A length read past the end of its message is not checked where it is read: the position then lies past
the message's end, no key matches any more, and the message's final check (its position is its end) fails.

What Go writes most is read with the fewest steps: sizes and integers of one byte (two for a size) without a
call, an empty string or time (a size of 0) skipped at once, a time seen before found by its bytes, a value
read by one expression written straight where it goes. A large message whose struct order is not its
field-number order (a PodSpec) is built in field-number order and rewritten in struct order only when a
field that breaks the order is in it (_struct_order); a small one is read into locals. A map entry or a
list item read a second time is kept by its bytes and then found (_Writer.memo): Go's bodies repeat them
(a driver's devices share most attributes, pods their tolerations), and what is found is what reading
those bytes gives, a new object each time.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from dralloc.server.protobuf.forms import _MICROTIMES, _TIMES, _int_or_string, _raw_json, _remembered_time
from dralloc.server.protobuf.plans import (
    _MAP,
    _MESSAGE,
    _PACKABLE,
    _REPEATED,
    _SCALAR,
    _SPECIAL,
    _STRING,
    MAX_DEPTH,
    _Plan,
    _plans,
    _recursive,
)
from dralloc.server.protobuf.schema import Field, Schema
from dralloc.server.protobuf.walker import _single, _zero
from dralloc.server.protobuf.wire import _packed, _varint


class _Unusual(Exception):
    """A body the single pass leaves to the two passes: a field repeated that is not a list or a map, fields
    out of field-number order, unknown fields, a map entry in an unusual form, anything truncated."""


# A compiled message: (body, start, end, depth) → the JSON object of body[start:end]
_Decoder = Callable[[bytes, int, int, int], dict[str, Any]]
# A compiled object: (body, start, end, apiVersion, kind) → the object, apiVersion and kind first
_ObjectReader = Callable[[bytes, int, int, str, str], dict[str, Any]]
_DECODERS: dict[int, tuple[Schema, dict[str, _Decoder]]] = {}
_NAMESPACES: dict[int, dict[str, Any]] = {}  # each table's functions, as their code finds them
_ABSENT = object()  # a field not read, in a small message whose struct order is restored at its end
_REORDERED_IN_LOCALS = 12  # the most fields of a message out of field-number order read into locals
_INLINE_LINES = 150  # a message whose code is at most this long is read in place (not called) ...
_INLINE_LEVELS = 3  # ... up to this many levels deep in one function


def _decoders(table: Schema) -> dict[str, _Decoder]:
    """The messages of ``table``, each compiled when it is first read (a table's every message at once would
    take a pod's first body some 0.4 s; the messages a body holds take a fraction of it)."""
    found = _DECODERS.get(id(table))
    if found is not None and found[0] is table:
        return found[1]
    writer = _Writer(_plans(table))
    namespace: dict[str, Any] = {
        "_Unusual": _Unusual, "_ABSENT": _ABSENT, "_rewritten": _rewritten, "_varint": _varint, "_single": _single,
        "_packed": _packed, "_TIMES": _TIMES, "_MICROTIMES": _MICROTIMES, "_remembered_time": _remembered_time,
        "_raw_json": _raw_json, "_int_or_string": _int_or_string, "b64encode": base64.b64encode}
    decoders: dict[str, _Decoder] = {}
    for name, function in writer.functions.items():
        namespace[function] = decoders[name] = _compiled_on_first_call(writer, name, namespace, decoders)
    namespace["_writer"] = writer
    _DECODERS[id(table)] = (table, decoders)
    _NAMESPACES[id(table)] = namespace
    return decoders


def object_reader(table: Schema, name: str, metadata: bool) -> _ObjectReader:
    """Message ``name`` of ``table`` as a whole object: its function's code, compiled again to start the object
    with its apiVersion and kind (and, with ``metadata``, an empty metadata the message's own takes the place
    of), as decoder.py's envelope gives them — the object in one call, no second dict to merge it into."""
    _decoders(table)
    namespace = _NAMESPACES[id(table)]
    writer: _Writer = namespace["_writer"]
    head = "{'apiVersion': api_version, 'kind': kind" + (", 'metadata': {}}" if metadata else "}")
    source = writer.function(writer.plans[name], head)
    namespace.update(writer.memos)
    exec(compile(source, f"<protobuf single pass: {name} object>", "exec"), namespace)  # noqa: S102 (the tables' own code)
    reader: _ObjectReader = namespace[f"object_{writer.functions[name]}"]
    return reader


def _compiled_on_first_call(writer: _Writer, name: str, namespace: dict[str, Any],
                            decoders: dict[str, _Decoder]) -> _Decoder:
    """A stand-in for message ``name``'s function: the first call compiles it, puts it in the stand-in's
    place (where the other functions and :func:`_decoders` find it) and reads with it."""
    function = writer.functions[name]

    def compile_then_read(buf: bytes, pos: int, end: int, depth: int) -> dict[str, Any]:
        compiled = namespace[function]
        if compiled is compile_then_read:
            source = writer.function(writer.plans[name])
            namespace.update(writer.memos)
            exec(compile(source, f"<protobuf single pass: {name}>", "exec"), namespace)  # noqa: S102 (the tables' own code)
            compiled = decoders[name] = namespace[function]
        result: dict[str, Any] = compiled(buf, pos, end, depth)
        return result

    return compile_then_read


# the special messages whose empty form (a size of 0) is JSON's null: the field is left out
_NULL_WHEN_EMPTY = frozenset({"Time", "MicroTime", "RawExtension", "FieldsV1"})
_SIGNED = {"bool": "{v} != 0", "int32": "(({v} & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000",
           "int64": "({v} ^ 0x8000000000000000) - 0x8000000000000000"}


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


def _string(start: str, end: str) -> str:
    return f"buf[{start}:{end}].decode()"


class _Writer:
    """The source of the single pass's functions of one table. The code of the message read at inline level
    L names its variables with the suffix L: it reads buf[posL:endL] into outL, its next key's first byte in
    kL (-1 at its end). Where Go writes the next field whatever its value (_always), the next key is read
    without a test of the end: in another form, the byte there is the next field of the message that holds
    this one (or the envelope's last fields, or the zero decoder.py puts after a message that ends its
    buffer), and a field seemingly read there goes past endL, so that the message's last test fails."""

    def __init__(self, plans: dict[str, _Plan]) -> None:
        self.plans = plans
        self.functions = {name: f"m{index}_{name}" for index, name in enumerate(plans)}
        self.recursive = _recursive(plans)
        # each map's entries read before, by their bytes: its name in the code → the dict
        self.memos: dict[str, dict[bytes, tuple[str, Any]] | set[bytes]] = {}

    def source(self) -> str:
        """Every message's function."""
        return "\n".join(self.function(plan) for plan in self.plans.values())

    def function(self, plan: _Plan, head: str = "") -> str:
        """The function of ``plan``; with ``head`` (code of a dict its object starts from, from the arguments
        api_version and kind), the function of ``plan`` as a whole object, at depth 1."""
        body, height = self.body(plan, 0, head or "{}")
        if head:
            return "\n".join([f"def object_{self.functions[plan.name]}(buf, pos0, end0, api_version, kind):",
                              "    depth = 1", *_indent(body), "    return out0", ""])
        return "\n".join([f"def {self.functions[plan.name]}(buf, pos0, end0, depth):",
                          f"    if depth > {MAX_DEPTH - height}: raise _Unusual", *_indent(body), "    return out0", ""])

    def body(self, plan: _Plan, level: int, start: str = "{}") -> tuple[list[str], int]:
        """The code that reads ``plan`` at ``level`` into an object that starts as ``start``, and the inline
        levels it goes below it."""
        pos, end, out, k = f"pos{level}", f"end{level}", f"out{level}", f"k{level}"
        # a small message out of field-number order: each field into a local, the object built at its end in
        # struct order; a larger one: built in field-number order, then put in struct order (_struct_order)
        in_locals = bool(plan.reorder) and len(plan.slots) <= _REORDERED_IN_LOCALS
        order = sorted(range(len(plan.slots)), key=lambda s: plan.slots[s][6])  # field-number order
        code = [_next_key(level, bool(order) and _always(plan.slots[order[0]][5]))]
        if in_locals:
            code.append(" = ".join(f"v{level}_{slot}" for slot in range(len(plan.slots))) + " = _ABSENT")
        else:
            code.append(f"{out} = {start}")
        height = 0
        fields: list[list[str]] = []
        for index, slot in enumerate(order):
            target = f"v{level}_{slot}" if in_locals else f"{out}[{plan.slots[slot][1]!r}]"
            written_next = index + 1 < len(order) and _always(plan.slots[order[index + 1]][5])
            lines, below = self.field(plan, slot, target, level, written_next)
            fields.append(lines)
            height = max(height, below)
        code += _guarded(fields, k)
        code.append(f"if {pos} != {end}: raise _Unusual")
        if in_locals:
            code.append(f"{out} = {start}")
            code += [f"if v{level}_{slot} is not _ABSENT: {out}[{name!r}] = v{level}_{slot}"
                     for slot, (_, name, *_rest) in enumerate(plan.slots)]
            return code, height
        return code + _struct_order(plan, out), height

    def value(self, kind: Any, start: str, end: str, level: int) -> tuple[list[str], int]:
        """Code that sets x<level> to the value of ``kind`` in buf[start:end] (None: the field is left out),
        and the inline levels it goes below ``level``."""
        x = f"x{level}"
        if isinstance(kind, _Plan):
            if kind.name not in self.recursive and level + 1 < _INLINE_LEVELS:
                inner, height = self.body(kind, level + 1)
                if len(inner) <= _INLINE_LINES:
                    return [f"pos{level + 1} = {start}", f"end{level + 1} = {end}", *inner,
                            f"{x} = out{level + 1}"], height + 1
            return [f"{x} = {self.functions[kind.name]}(buf, {start}, {end}, depth + {level + 1})"], 0
        if kind == "string":
            return [f"{x} = {_string(start, end)}"], 0
        if kind == "bytes":
            return [f"{x} = b64encode(buf[{start}:{end}]).decode()"], 0
        if kind == "Quantity":  # its usual form, {1: text} alone and short, read in place
            return [f"if buf[{start}] == 10 and buf[{start} + 1] == {end} - {start} - 2 < 128:",
                    f"    {x} = {_string(f'{start} + 2', end)}",
                    f"else: {x} = _single('Quantity', buf[{start}:{end}], depth)"], 0
        if kind in ("Time", "MicroTime"):  # a time read before is found by its bytes
            cache = "_MICROTIMES" if kind == "MicroTime" else "_TIMES"
            return [f"r{level} = buf[{start}:{end}]", f"{x} = {cache}.get(r{level})",
                    f"if {x} is None: {x} = _remembered_time(r{level}, {kind == 'MicroTime'})"], 0
        if kind in ("RawExtension", "FieldsV1"):
            return [f"{x} = _raw_json(buf[{start}:{end}], {kind!r})"], 0
        if kind == "IntOrString":
            return [f"{x} = _int_or_string(buf[{start}:{end}])"], 0
        if kind == "JSONSchemaProps":  # (apiextensions.py reads it, at the field's level)
            return [f"{x} = _single('JSONSchemaProps', buf[{start}:{end}], depth + {level})"], 0
        raise ValueError(f"no single-pass reading of {kind}")

    def memo(self, kind: Any, raw: str, key: str, x: str) -> tuple[str, list[str]]:
        """A new memo of a map's entries or a list's items read before, by their bytes (``raw``: None when
        too long to keep), and the code that keeps the one just read: ``x`` (and ``key``, a map's) — kept the
        second time it is read (an entry read once costs a set's add); a message (a copy) only when it holds
        no list or object, so that a copy of the copy is a whole new object."""
        memo = f"_entries{len(self.memos)}"
        seen = f"{memo}_seen"
        self.memos[memo], self.memos[seen] = {}, set()
        flat = "".join(f" and {name!r} not in {x}"
                       for name in (_mutable_fields(kind) if isinstance(kind, _Plan) else ()))
        copy = f"dict({x})" if isinstance(kind, _Plan) else x
        return memo, [f"if {raw} is None: pass",
                      f"elif {raw} not in {seen}:",
                      f"    if len({seen}) >= {_ENTRIES_KEPT}: {seen}.clear()",
                      f"    {seen}.add({raw})",
                      f"elif True{flat}:",
                      f"    if len({memo}) >= {_ENTRIES_KEPT}: {memo}.clear()",
                      f"    {memo}[{raw}] = {f'({key}, {copy})' if key else copy}"]

    def field(self, plan: _Plan, slot: int, target: str, level: int, written_next: bool) -> tuple[list[str], int]:
        """The code of one field (read when the next key is its own, then the key after it taken: with
        ``written_next``, the next field is one Go always writes), and the inline levels it goes below
        ``level``."""
        code, _name, keep_zero, inline, kind, f, _rank = plan.slots[slot]
        pos, end, k, s, e, x, v = (f"{name}{level}" for name in ("pos", "end", "k", "s", "e", "x", "v"))
        number = next(n for n, field in plan.schema.items() if field is f)
        test, after = _key_test(number, f.wire, level)
        def rest_of_size(after: int) -> list[str]:  # its first byte in s; a size of one or two bytes in place
            return [f"if {s} < 128: {pos} += {after + 1}",
                    f"elif buf[{pos} + {after + 1}] < 128: "
                    f"{s}, {pos} = {s} & 127 | buf[{pos} + {after + 1}] << 7, {pos} + {after + 2}",
                    f"else: {s}, {pos} = _varint(buf, {pos} + {after})",
                    f"{e} = {pos} + {s}"]

        def sized(after: int) -> list[str]:  # a length-delimited value: its bytes are buf[pos:e]
            return [f"{s} = buf[{pos} + {after}]", *rest_of_size(after)]

        size = sized(after)
        varint = [f"{v} = buf[{pos} + {after}]",
                  f"if {v} < 128: {pos} += {after + 1}",
                  f"else: {v}, {pos} = _varint(buf, {pos} + {after})"]
        next_key = _next_key(level, written_next)
        last_item = f"if not ({test}): break"
        height = 0
        body: list[str]
        if code == _STRING and not inline:
            # a size of one byte read in place; the string sliced where it is and pos moved past it at once; Go
            # writes an empty one as a size of 0: left out (or "" when kept)
            text = f"{target} = buf[{pos}:({pos} := {pos} + {s})].decode()"
            body = [f"{s} = buf[{pos} + {after}]",
                    f"if {s} < 128:",
                    f"    {pos} += {after + 1}",
                    f"    {text}" if keep_zero else f"    if {s}: {text}",
                    "else:",
                    f"    {s}, {pos} = _varint(buf, {pos} + {after})",
                    f"    {text}",
                    next_key]
        elif (code == _SCALAR and kind == "bytes") and not inline or code == _SPECIAL and kind in _NULL_WHEN_EMPTY:
            # Go writes empty bytes and a zero time as a size of 0: left out (or "" when kept)
            if code == _SPECIAL:
                lines, height = self.value(kind, pos, e, level)
                read = [*lines, f"if {x} is not None: {target} = {x}"]
            else:
                lines, height = self.value(kind, pos, e, level)
                lines, value = _folded(lines, x)
                read = [*lines, f"{target} = {value}"]
            body = [f"{s} = buf[{pos} + {after}]",
                    f"if {s} == 0:",
                    f"    {pos} += {after + 1}",
                    *([f"    {target} = ''"] if keep_zero and code != _SPECIAL else []),
                    "else:",
                    *_indent([*rest_of_size(after), *read, f"{pos} = {e}"]),
                    next_key]
        elif code == _MESSAGE:
            lines, height = self.value(kind, pos, e, level)
            lines, value = _folded(lines, x)
            body = [*size, *lines, f"out{level}.update({value})" if inline else f"{target} = {value}",
                    f"{pos} = {e}", next_key]
        elif code == _SCALAR and f.varint:
            # a value below 128 is its own signed value (and a bool's 0 or 1): read in place
            small = f"{v} != 0" if kind == "bool" else v
            store = f"{target} = {small}" if keep_zero else f"if {v}: {target} = {'True' if kind == 'bool' else v}"
            body = [f"{v} = buf[{pos} + {after}]",
                    f"if {v} < 128:",
                    f"    {pos} += {after + 1}",
                    f"    {store}",
                    f"elif buf[{pos} + {after + 1}] < 128:",  # (two bytes: below 16384, its own value too)
                    f"    {v}, {pos} = {v} & 127 | buf[{pos} + {after + 1}] << 7, {pos} + {after + 2}",
                    f"    {store}",
                    "else:",
                    f"    {v}, {pos} = _varint(buf, {pos} + {after})",
                    f"    {v} = {_SIGNED[kind].format(v=v)}",
                    f"    {target} = {v}" if keep_zero else f"    if {v}: {target} = {v}",
                    next_key]
        elif code in (_SCALAR, _SPECIAL):
            lines, height = self.value(kind, pos, e, level)
            keep = (f"{target} = {x}" if keep_zero else f"if {e} > {pos}: {target} = {x}") if code == _SCALAR \
                else f"if {x} is not None: {target} = {x}"
            body = [*size, *lines, keep, f"{pos} = {e}", next_key]
        elif code == _REPEATED:
            lines, height = self.value(kind, pos, e, level)
            raw, hit, items = f"raw{level}", f"hit{level}", f"items{level}"
            memo = self.memo(kind, raw, "", x) if isinstance(kind, _Plan) and _may_be_flat(kind) else None
            if memo is None:
                lines, value = _folded(lines, x)
                item = [*lines, f"{items}.append({value})"]
            else:  # an item read before, found by its bytes
                item = [f"{raw} = buf[{pos}:{e}] if {s} < 128 else None",
                        f"{hit} = {memo[0]}.get({raw})",
                        f"if {hit} is not None: {items}.append(dict({hit}))",
                        "else:",
                        *_indent([*lines, f"{items}.append({x})", *memo[1]])]
            body = [f"{items} = []", "while True:",
                    *_indent([*size, *item, f"{pos} = {e}", next_key, last_item]),
                    f"{target} = {items}"]
        elif code == _MAP:
            if f.varint:
                return [], 0  # (no table has one: left to the two passes, as an unknown field)
            ks, ke, at, vs, key, entries, raw, hit = (
                f"{name}{level}" for name in ("ks", "ke", "at", "vs", "key", "entries", "raw", "hit"))
            lines, height = self.value(kind, at, e, level)
            # an entry of a string, a Quantity, a time or an IntOrString, or of a message all of whose values
            # are such (a DeviceAttribute, a DeviceCapacity), read before: found by its bytes
            memo = None if kind in ("RawExtension", "FieldsV1") else self.memo(kind, raw, key, x)
            if memo is None:
                lines, value = _folded(lines, x)
            else:
                lines, value = [*lines, *memo[1]], x
            entry = [f"{ks} = buf[{pos} + 1]",  # {1: key, 2: value}, each once
                     f"if buf[{pos}] != 10: raise _Unusual",
                     f"if {ks} < 128: {at} = {pos} + 2",
                     f"else: {ks}, {at} = _varint(buf, {pos} + 1)",
                     f"{ke} = {at} + {ks}",
                     f"{key} = {_string(at, ke)}",
                     f"if {ke} == {e}: {entries}[{key}] = {_zero_source(f, plan)}",
                     "else:",
                     f"    {vs} = buf[{ke} + 1]",
                     f"    if {vs} < 128: {at} = {ke} + 2",
                     f"    else: {vs}, {at} = _varint(buf, {ke} + 1)",
                     f"    if buf[{ke}] != 18 or {at} + {vs} != {e}: raise _Unusual",  # (a value past e, too)
                     *_indent(lines),
                     f"    {entries}[{key}] = {value}"]
            if memo is not None:
                found = f"dict({hit}[1])" if isinstance(kind, _Plan) else f"{hit}[1]"
                entry = [f"{raw} = buf[{pos}:{e}] if {s} < 128 else None",
                         f"{hit} = {memo[0]}.get({raw})",
                         f"if {hit} is not None: {entries}[{hit}[0]] = {found}",
                         "else:",
                         *_indent(entry)]
            body = [f"{entries} = {{}}", "while True:",
                    *_indent([*size, *entry, f"{pos} = {e}", next_key, last_item]),
                    f"{target} = {entries}"]
        else:  # _PACKABLE: one varint a key (as Go writes them), or one packed run
            packed_test, packed_after = _key_test(number, 2, level)
            return [f"if {test}:",
                    *_indent([f"items{level} = []", "while True:",
                              *_indent([*varint, f"items{level}.append({_SIGNED[kind].format(v=v)})", next_key,
                                        last_item]),
                              f"{target} = items{level}"]),
                    f"elif {packed_test}:",
                    *_indent([*sized(packed_after), f"{target} = _packed({kind!r}, buf[{pos}:{e}])", f"{pos} = {e}",
                              next_key])], 0
        return [f"if {test}:", *_indent(body)], height


_ENTRIES_KEPT = 512  # the entries or items a map or list field keeps, and has seen once (each emptied when full)


def _may_be_flat(plan: _Plan) -> bool:
    """Whether an object of ``plan`` may well hold no list or object: its message fields are pointers (Go writes
    every other message field, even empty: an object), and it has no map (a map is usually there, as a device's
    attributes, and looking such an item up would cost a few percent of reading it, for nothing)."""
    return not any(code == _MAP or code == _MESSAGE and not f.pointer
                   for code, _name, _keep, _inline, _kind, f, _rank in plan.slots)


def _mutable_fields(plan: _Plan) -> list[str]:
    """The JSON names of the fields of ``plan`` whose value can be a list or an object."""
    return [name for code, name, _keep, _inline, kind, _f, _rank in plan.slots
            if code in (_MESSAGE, _REPEATED, _MAP, _PACKABLE) or kind in ("RawExtension", "FieldsV1")]


def _folded(lines: list[str], x: str) -> tuple[list[str], str]:
    """The code of a value and the expression to use it by: a last line ``x = EXPR`` becomes EXPR at the one
    place that uses it (no store and load of x)."""
    if lines and lines[-1].startswith(f"{x} = "):
        return lines[:-1], lines[-1][len(x) + 3:]
    return lines, x


def _struct_order(plan: _Plan, out: str) -> list[str]:
    """Code that puts the keys of ``out``, written in field-number order, in struct order.

    A field is out of place only after a field that comes before it in the struct but has a greater number
    (an "early" field: a PodSpec's initContainers, number 20, before its containers, number 2). When no early
    field is in the object, field-number order is struct order; when some are, the keys before the first of
    them are in place (none of them is early, so each has a smaller number than every key after it) and
    the keys from it on are written again in struct order (a key written again goes last)."""
    if not plan.reorder:
        return []
    names = [slot[1] for slot in plan.slots]
    ranks = [slot[6] for slot in plan.slots]
    code: list[str] = []
    for index, name in enumerate(names):
        if any(rank < ranks[index] for rank in ranks[index + 1:]):
            code.append(f"{'elif' if code else 'if'} {name!r} in {out}:")
            if len(names) - index > _REWRITTEN_IN_PLACE:
                code.append(f"    _rewritten({out}, {tuple(names[index:])!r})")
            else:  # (a container's terminationMessagePolicy, always there: a few keys, no call nor loop)
                code.append(f"    {out}[{name!r}] = {out}.pop({name!r})")
                code += [f"    if {later!r} in {out}: {out}[{later!r}] = {out}.pop({later!r})" for later in names[index + 1:]]
    return code


_REWRITTEN_IN_PLACE = 8  # the most keys written again by straight-line code (more: by _rewritten)


def _rewritten(out: dict[str, Any], names: tuple[str, ...]) -> None:
    """Each of ``names`` in ``out`` written again, in this order (each goes last)."""
    for name in names:
        if name in out:
            out[name] = out.pop(name)


_GUARDED_FIELDS = 4  # fields tested one by one before a test of the message's end skips the rest


def _always(f: Field) -> bool:
    """Whether Go writes field ``f`` whatever its value (encoder.py writes what Go writes)."""
    return not (f.pointer or f.repeated or f.map or f.type == "bytes")


def _next_key(level: int, written: bool) -> str:
    """The code that takes the next key: the byte at pos<level> where the next field is ``written`` always,
    else -1 at the end."""
    return f"k{level} = buf[pos{level}]" if written else f"k{level} = buf[pos{level}] if pos{level} < end{level} else -1"


def _guarded(fields: list[list[str]], k: str) -> list[str]:
    """The fields' code, every few fields the rest behind one test that the message goes on (most messages
    set their first fields only: their end then costs one test, not one per field left)."""
    code = [line for lines in fields[:_GUARDED_FIELDS] for line in lines]
    if len(fields) > _GUARDED_FIELDS:
        code += [f"if {k} != -1:", *_indent(_guarded(fields[_GUARDED_FIELDS:], k))]
    return code


def _key_test(number: int, wire: int, level: int) -> tuple[str, int]:
    """The test that the key at pos<level> (its first byte in k<level>) is this field's, and its length."""
    raw, key = [], number << 3 | wire
    while True:
        raw.append(key & 0x7F | (0x80 if key > 0x7F else 0))
        key >>= 7
        if not key:
            break
    tests = [f"k{level} == {raw[0]}"] + [f"buf[pos{level} + {i}] == {byte}" for i, byte in enumerate(raw[1:], 1)]
    return " and ".join(tests), len(raw)


def _zero_source(f: Field, plan: _Plan) -> str:
    """The value of a map entry that has no value, as code (a fresh {} for a message)."""
    return repr(_zero(f.type, f.type in plan.message_types))
