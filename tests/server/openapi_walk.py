"""A field path through the server's OpenAPI v3 schemas, walked as ``kubectl explain`` walks it."""

from __future__ import annotations

from typing import Any


def explain_path(schemas: dict[str, Any], top: str, path: str) -> dict[str, Any]:
    """The schema of ``path`` (dotted, "" for ``top`` itself) under the schema named ``top``: properties, array
    items, a $ref, or an allOf of one $ref (never into anyOf)."""
    def resolve(node: dict[str, Any]) -> dict[str, Any]:
        while True:
            if "$ref" in node:
                node = schemas[node["$ref"].rsplit("/", 1)[1]]
            elif len(node.get("allOf", ())) == 1:
                node = node["allOf"][0]
            elif node.get("type") == "array":
                node = node["items"]
            else:
                return node
    node = schemas[top]
    for name in path.split(".") if path else ():
        node = resolve(node)["properties"][name]
    return resolve(node)
