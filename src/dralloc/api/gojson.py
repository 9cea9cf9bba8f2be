"""How Go's ``encoding/json`` names a JSON value in its errors (``json: cannot unmarshal <type> into ...``), for
the messages kube-apiserver and kubectl print when a value has the wrong type."""

from __future__ import annotations


def go_json_type(value: object) -> str:
    """``bool``, ``number``, ``string``, ``array``, ``object`` or ``null``, as Go's decoder names the value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"
