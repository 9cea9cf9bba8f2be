"""A Node's own rules of kube-apiserver (core validation ValidateNode), past its metadata: its taints and the
quantities of its capacity and allocatable (never negative; whole units for integer resources)."""

from __future__ import annotations

from dralloc.api.core_v1 import Node
from dralloc.validation import field as f
from dralloc.validation.quantities import resource_list_errors
from dralloc.validation.taints import node_taint_errors


def node_errors(node: Node) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    if node.spec is not None and node.spec.taints:
        # upstream builds the taints' path from the metadata's: the errors read metadata.taints[i]
        errs += node_taint_errors(node.spec.taints, "metadata.taints")
    if node.status is not None:
        errs += resource_list_errors(node.status.capacity, "status.capacity")
        errs += resource_list_errors(node.status.allocatable, "status.allocatable")
    return errs
