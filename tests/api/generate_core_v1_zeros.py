"""Writes ``src/dralloc/api/core_v1_zeros.py``: which fields of the field table (``core_v1_fields``) Go's
encoder writes when they hold their zero value or null, read from the struct tags of the Kubernetes Go types
(k8s.io/api's core/v1, apps/v1, batch/v1 and events/v1 ``types.go``, apimachinery's meta/v1 ``types.go``, of
the release the server follows)::

    .venv/bin/python tests/api/generate_core_v1_zeros.py DIR > src/dralloc/api/core_v1_zeros.py

where DIR holds those files as ``core_v1.go``, ``apps_v1.go``, ``batch_v1.go``, ``events_v1.go`` and
``meta_v1.go``. A field is a struct field's Go type (``*`` for a pointer) and its ``json`` tag; an inlined
struct's fields (``json:",inline"``) are the outer struct's, as Go's encoder writes them.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from dralloc.api import core_v1_fields  # noqa: E402

FILES = ("core_v1", "apps_v1", "batch_v1", "events_v1", "meta_v1")
_STRUCT = re.compile(r"^type (\w+) struct \{$")
_FIELD = re.compile(r"^\s+(?:(\w+)\s+)?([*\[\]\w.]+(?:\[\w+\][*\w.]+)?)\s+`([^`]*)`")
_JSON = re.compile(r'json:"([^"]*)"')


class Field:
    def __init__(self, name: str, go_type: str, omitempty: bool) -> None:
        self.name = name
        self.go_type = go_type
        self.omitempty = omitempty


def _structs(text: str) -> dict[str, list[Field | str]]:
    """Each struct's fields in order; an inlined struct as its type's name (resolved later)."""
    out: dict[str, list[Field | str]] = {}
    current: list[Field | str] | None = None
    for line in text.splitlines():
        match = _STRUCT.match(line)
        if match:
            current = out.setdefault(match.group(1), [])
            continue
        if current is None:
            continue
        if line.startswith("}"):
            current = None
            continue
        field = _FIELD.match(line)
        if not field:
            continue
        tag = _JSON.search(field.group(3))
        if tag is None:
            continue
        name, *options = tag.group(1).split(",")
        go_type = field.group(2)
        if "inline" in options:
            current.append(go_type.split(".")[-1].lstrip("*"))
        elif name and name != "-":
            current.append(Field(name, go_type, "omitempty" in options))
    return out


def _flattened(structs: dict[str, list[Field | str]], name: str) -> list[Field]:
    fields: list[Field] = []
    for item in structs.get(name, []):
        fields.extend(_flattened(structs, item) if isinstance(item, str) else [item])
    return fields


_SCALARS = ("string", "bool", "int32", "int64", "int", "uint8", "float64")


def classify(directory: Path) -> tuple[set[str], set[str], set[str]]:
    """(pointers, not_omitempty) as "<table key>.<field>" of the field table's scalar, list and map fields,
    and its times held by value."""
    per_package = {package: _structs((directory / f"{package}.go").read_text()) for package in FILES}
    pointers: set[str] = set()
    not_omitempty: set[str] = set()
    value_times: set[str] = set()
    for key, members in core_v1_fields.GO_TYPES.items():
        if "." in key:  # (a kind keyed by its group version: events.k8s.io/v1.Event)
            group_version, name = key.rsplit(".", 1)
            group, version = group_version.split("/")
            packages = [f"{group.split('.')[0]}_{version}"]
        else:
            name, packages = key, ["core_v1", "apps_v1", "batch_v1", "meta_v1"]
        # (an inlined struct may be another package's: metav1.TypeMeta, core/v1's VolumeSource)
        go_fields = next((_flattened({**per_package["meta_v1"], **per_package["core_v1"], **per_package[p]}, name)
                          for p in packages if name in per_package[p]), None)
        if go_fields is None:  # (a type of a later release the models carry)
            print(f"not in the Go types: {key}", file=sys.stderr)
            continue
        by_json = {f.name: f for f in go_fields}
        for field, table_type in members.items():
            go_field = by_json.get(field)
            if go_field is None:  # (a field of a later release the models carry: the Go types lack it)
                print(f"not in the Go types: {key}.{field}", file=sys.stderr)
                continue
            pointer = go_field.go_type.startswith("*")
            underlying = core_v1_fields.NAMED.get(table_type, table_type)
            collection = underlying.startswith(("[]", "map["))
            if underlying in ("v1.Time", "v1.MicroTime") and not pointer:
                value_times.add(f"{key}.{field}")
            if not (collection or underlying in _SCALARS):
                continue  # (a struct: Go writes it whether or not it is zero; a time, quantity, ...)
            if pointer:
                pointers.add(f"{key}.{field}")
            if not go_field.omitempty:
                not_omitempty.add(f"{key}.{field}")
    return pointers, not_omitempty, value_times


def render(pointers: set[str], not_omitempty: set[str], value_times: set[str]) -> str:
    lines = [
        '"""The scalar, list and map fields of ``core_v1_fields``\' table that are pointers, and those without',
        "omitempty, in the Kubernetes Go types of the release the server follows (every other such field is",
        "omitempty and no pointer: Go's encoder does not write its zero value, and null decodes to that zero).",
        "",
        "Generated by tests/api/generate_core_v1_zeros.py; do not edit.\"\"\"",
        "",
        "# \"<struct>.<field>\" held by pointer (a zero value is written; null is nil)",
        "POINTERS = frozenset({",
        *(f'    "{name}",' for name in sorted(pointers)),
        "})",
        "# \"<struct>.<field>\" without omitempty (written whatever it holds: null as its zero, or nil as null)",
        "NOT_OMITEMPTY = frozenset({",
        *(f'    "{name}",' for name in sorted(not_omitempty)),
        "})",
        "# \"<struct>.<field>\" of a metav1.Time or MicroTime held by value (its zero is written as null)",
        "VALUE_TIMES = frozenset({",
        *(f'    "{name}",' for name in sorted(value_times)),
        "})",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(*classify(Path(sys.argv[1]))), end="")
