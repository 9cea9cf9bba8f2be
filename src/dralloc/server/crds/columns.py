"""A custom resource's ``kubectl get`` columns: its version's additionalPrinterColumns (or kube-apiserver's
default AGE column), each cell read with the column's JSONPath and typed as its column says, as kube-apiserver's
custom resource table convertor does."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from dralloc.server.http.ages import human_age

NAME_DESCRIPTION = ("Name must be unique within a namespace. Is required when creating resources, although some "
                    "resources may allow a client to request the generation of an appropriate name automatically. "
                    "Name is primarily intended for creation idempotence and configuration definition. Cannot be "
                    "updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names")
CREATED_DESCRIPTION = ("CreationTimestamp is a timestamp representing the server time when this object was created. "
                       "It is not guaranteed to be set in happens-before order across separate operations. Clients "
                       "may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the "
                       "system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/"
                       "sig-architecture/api-conventions.md#metadata")
# What a version without additionalPrinterColumns prints besides NAME
DEFAULT_COLUMNS = [{"name": "Age", "type": "date", "description": CREATED_DESCRIPTION,
                    "jsonPath": ".metadata.creationTimestamp"}]


def column_definitions(columns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Table's columnDefinitions: Name, then each printer column."""
    out = [{"name": "Name", "type": "string", "format": "name", "description": NAME_DESCRIPTION, "priority": 0}]
    for column in columns:
        path = str(column.get("jsonPath", ""))
        out.append({"name": column.get("name", ""), "type": column.get("type", ""),
                    "format": column.get("format", ""),
                    "description": column.get("description")
                    or f"Custom resource definition column (in JSONPath format): {path}",
                    "priority": int(column.get("priority") or 0)})
    return out


def cells(obj: dict[str, Any], columns: list[dict[str, Any]]) -> list[Any]:
    """A row's cells: the name, then each column's value (None where the path finds nothing)."""
    row: list[Any] = [(obj.get("metadata") or {}).get("name", "")]
    for column in columns:
        found = find(obj, str(column.get("jsonPath", "")))
        if not found:
            row.append(None)
            continue
        value = found[0]
        if column.get("type") == "string":
            row.append(value if isinstance(value, str) else _printed(value))
        else:
            row.append(_typed_cell(str(column.get("type")), value))
    return row


def _printed(value: Any) -> str:
    """A non-string value in a string column, as kubectl's JSONPath printer prints it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
    if value is None:
        return ""
    return json.dumps(value, separators=(",", ":"))


def _typed_cell(kind: str, value: Any) -> Any:
    if value is None:
        return None
    if kind == "integer" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    if kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "date" and isinstance(value, str):
        try:
            datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        except ValueError:
            return "<invalid>"
        return human_age(value)
    return None


_STEP = re.compile(r"""\.([^.\[\]]+)|\[\s*'([^']*)'\s*\]|\[\s*"([^"]*)"\s*\]|\[\s*(-?\d+)\s*\]|\[\s*\*\s*\]|\.\*|"""
                   r"""\[\?\(@\.([^=!<>\s]+)\s*(==|!=)\s*(?:'([^']*)'|"([^"]*)"|([^)\s]+))\s*\)\]""")


def find(obj: Any, path: str) -> list[Any]:
    """The values a kubectl JSONPath (``.spec.replicas``, ``.status.conditions[?(@.type=="Ready")].status``,
    ``.items[0]``, ``[*]``) finds in ``obj``; missing keys find nothing, as with AllowMissingKeys."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    if text.startswith("$"):
        text = text[1:]
    values = [obj]
    at = 0
    while at < len(text):
        match = _STEP.match(text, at)
        if match is None:
            return []
        at = match.end()
        values = _step(values, match)
    return values


def _step(values: list[Any], match: re.Match[str]) -> list[Any]:
    name = match.group(1) or match.group(2) or match.group(3)
    out: list[Any] = []
    if name is not None:
        for value in values:
            if isinstance(value, dict) and name in value:
                out.append(value[name])
        return out
    if match.group(4) is not None:
        i = int(match.group(4))
        for value in values:
            if isinstance(value, list) and -len(value) <= i < len(value):
                out.append(value[i])
        return out
    if match.group(5) is not None:  # a filter: @.key == value
        key, op = match.group(5), match.group(6)
        wanted = next((g for g in (match.group(7), match.group(8), match.group(9)) if g is not None), "")
        for value in values:
            for item in value if isinstance(value, list) else ():
                got = find(item, "." + key) if isinstance(item, dict) else []
                equal = bool(got) and (got[0] if isinstance(got[0], str) else _printed(got[0])) == wanted
                if equal == (op == "=="):
                    out.append(item)
        return out
    for value in values:  # a wildcard
        if isinstance(value, list):
            out.extend(value)
        elif isinstance(value, dict):
            out.extend(value.values())
    return out
