"""Node templates: one Node and the ResourceSlices local to it, cloned as the planner adds nodes."""

from __future__ import annotations

from dataclasses import dataclass

from dralloc.api.core_v1 import Node
from dralloc.api.resource_v1 import ResourceSlice
from dralloc.errors import InputError
from dralloc.simulator.whatif import clone_node


@dataclass(frozen=True, eq=False)
class NodeTemplate:
    """What one added node of a kind looks like. ``name`` is the user's name for the kind (``h100``);
    clones are named ``<name>-<i>``."""

    name: str
    node: Node
    slices: tuple[ResourceSlice, ...] = ()

    def clone(self, node_name: str) -> tuple[Node, list[ResourceSlice]]:
        """The template as a node called ``node_name``: its slices' node, pool and slice names rewritten."""
        return clone_node(self.node, list(self.slices), node_name)


def template_from_objects(name: str, objects: list[object], source: str = "") -> NodeTemplate:
    """A template from decoded objects: exactly one Node, and ResourceSlices whose ``spec.nodeName`` is it."""
    where = f"--node-template {name}={source}" if source else f"node template {name!r}"
    if not name or "=" in name:
        raise InputError(f"{where}: a template needs a name (NAME=FILE)")
    nodes = [o for o in objects if isinstance(o, Node)]
    if len(nodes) != 1:
        raise InputError(f"{where}: a template holds exactly one Node, found {len(nodes)}")
    node = nodes[0]
    node_name = node.metadata.name or ""
    slices: list[ResourceSlice] = []
    for obj in objects:
        if isinstance(obj, Node):
            continue
        if not isinstance(obj, ResourceSlice):
            raise InputError(f"{where}: {type(obj).__name__}/{getattr(getattr(obj, 'metadata', None), 'name', '')}: "
                             "a template holds only its Node and the ResourceSlices local to it")
        if obj.spec.node_name != node_name:
            raise InputError(f"{where}: ResourceSlice/{obj.metadata.name}: spec.nodeName is "
                             f"{obj.spec.node_name or ''!r}, not the template's node {node_name!r}")
        slices.append(obj)
    return NodeTemplate(name, node, tuple(slices))


def load_template(name: str, path: str) -> NodeTemplate:
    """Read and validate a template file (a YAML or JSON List, or several documents)."""
    from dralloc.simulator.loading import load_validated

    objects, _ = load_validated([path])
    return template_from_objects(name, objects, path)
