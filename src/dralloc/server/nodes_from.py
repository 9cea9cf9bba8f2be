"""Objects a server starts with (``dralloc serve --nodes-from FILE``): created as a client's create would create
them, once; objects already stored are left as they are (the database is the truth after the first start)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dralloc.api.codec import read_documents
from dralloc.errors import InputError
from dralloc.server.context import ApiContext
from dralloc.server.http.errors import ApiError
from dralloc.server.http.routing import Target
from dralloc.server.registry.kinds import CORE
from dralloc.server.verbs.writes import creation, prepare_create
from dralloc.store import Conflict


def _items(data: Any) -> list[Any]:
    if isinstance(data, dict) and data.get("kind") in ("List", "NodeList") and isinstance(data.get("items"), list):
        return [{"apiVersion": "v1", "kind": "Node", **item} if isinstance(item, dict) else item
                for item in data["items"]]
    return [data]


def seed_nodes(api: ApiContext, path: str | Path) -> int:
    """Create the Nodes of a manifest file (or directory) that are not stored yet; the number created.
    Anything else in the file, or an invalid Node, is an InputError naming the document."""
    target = Target(CORE["nodes"], "v1", "", "", "")
    created = 0
    for doc in read_documents(path):
        for item in _items(doc.data):
            if not isinstance(item, dict) or item.get("kind") != "Node" or item.get("apiVersion") != "v1":
                raise InputError(f"{doc.where}: --nodes-from takes v1 Nodes only")
            try:
                stored, name = prepare_create(item, target)
                try:
                    api.store.create("nodes", "", name, creation(stored, target))
                    created += 1
                except Conflict:
                    continue
            except ApiError as exc:
                raise InputError(f"{doc.where}: {exc.message}") from None
    return created
