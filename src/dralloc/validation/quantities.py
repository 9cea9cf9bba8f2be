"""Resource names and quantities, as kube-apiserver checks them in a node's capacity and allocatable and in a
container's (or a pod's overhead) requests and limits (core validation and its resource helpers).

Maps are walked in document order (Go walks them in random order, so upstream's order of several errors
varies from one request to the next).
"""

from __future__ import annotations

from functools import lru_cache

from dralloc.api.quantity import Quantity
from dralloc.validation import field as f
from dralloc.validation.formats import is_extended_resource_name, is_qualified_name

NEGATIVE = "must be greater than or equal to 0"
NOT_INTEGER = "must be an integer"
HUGEPAGES_PREFIX = "hugepages-"
# core/helper: the resources counted in whole units besides extended resources
_INTEGER_RESOURCES = frozenset({"pods", "quota", "services", "replicationcontrollers", "secrets",
                                "persistentvolumeclaims", "configmaps", "services.nodeports",
                                "services.loadbalancers"})
_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_STANDARD_RESOURCES = _STANDARD_CONTAINER_RESOURCES | _INTEGER_RESOURCES | frozenset({
    "requests.cpu", "requests.memory", "requests.ephemeral-storage", "limits.cpu", "limits.memory",
    "limits.ephemeral-storage", "storage", "requests.storage"})
_QOS_COMPUTE = frozenset({"cpu", "memory"})

ResourceMap = dict[str, Quantity]


def is_hugepages(name: str) -> bool:
    return name.startswith(HUGEPAGES_PREFIX)


def is_native(name: str) -> bool:
    """Not domain-prefixed, or prefixed with kubernetes.io/ (core helper IsNativeResource)."""
    return "/" not in name or "kubernetes.io/" in name


@lru_cache(maxsize=4096)  # (a dump names the same few resources on every node and container)
def is_integer_resource(name: str) -> bool:
    return name in _INTEGER_RESOURCES or is_extended_resource_name(name)


def overcommit_allowed(name: str) -> bool:
    """Requests may differ from limits (native resources but huge pages); extended resources may not."""
    return is_native(name) and not is_hugepages(name)


def quantity_errors(name: str, value: Quantity, path: str) -> list[f.FieldError]:
    """ValidateResourceQuantityValue: never negative, whole units for integer resources."""
    errs: list[f.FieldError] = []
    if value.sign() < 0:
        errs.append(f.invalid(path, str(value), NEGATIVE))
    if is_integer_resource(name) and value.milli_value() % 1000 != 0:
        errs.append(f.invalid(path, str(value), NOT_INTEGER))
    return errs


def resource_list_errors(resources: ResourceMap | None, path: str) -> list[f.FieldError]:
    """A node's capacity or allocatable: each quantity at ``<path>.<name>`` (a child, not a key, upstream)."""
    errs: list[f.FieldError] = []
    for name, value in (resources or {}).items():
        errs += quantity_errors(name, value, f.child(path, name))
    return errs


def _resource_name_problems(name: str) -> list[str]:
    problems = is_qualified_name(name)
    if problems:
        return problems
    if "/" not in name and name not in _STANDARD_RESOURCES and not is_hugepages(name):
        return ["must be a standard resource type or fully qualified"]
    return []


@lru_cache(maxsize=4096)
def _container_resource_name_problems(name: str) -> tuple[str, ...]:
    problems = _resource_name_problems(name)
    if "/" not in name:
        if name not in _STANDARD_CONTAINER_RESOURCES and not is_hugepages(name):
            problems.append("must be a standard resource for containers")
    elif not is_native(name) and not is_extended_resource_name(name):
        problems.append("doesn't follow extended resource name standard")
    return tuple(problems)


def container_resource_name_errors(name: str, path: str) -> list[f.FieldError]:
    """validateContainerResourceName: a qualified name, a standard resource or fully qualified, and one
    containers may request (cpu, memory, ephemeral-storage, huge pages, or an extended resource)."""
    return [f.invalid(path, name, m) for m in _container_resource_name_problems(name)]


def _plainly_valid(name: str, quantity: Quantity) -> bool:
    """cpu, memory or ephemeral storage, not negative: nothing to report about the name or the quantity."""
    return name in _STANDARD_CONTAINER_RESOURCES and quantity.sign() >= 0


def requirements_errors(limits: ResourceMap | None, requests: ResourceMap | None, path: str) -> list[f.FieldError]:
    """validateResourceRequirements for a container (or a pod's overhead, as limits): names, quantities, and
    requests at most their limits (equal to them for resources that cannot be overcommitted, whose limit
    must then be set). The request-versus-limit errors name ``requests`` itself, as upstream does."""
    errs: list[f.FieldError] = []
    limits, requests = limits or {}, requests or {}
    lim_path, req_path = f.child(path, "limits"), f.child(path, "requests")
    cpu_or_memory = huge_pages = False
    for name, quantity in limits.items():
        if not _plainly_valid(name, quantity):  # (the common case builds no paths)
            where = f.key(lim_path, name)
            errs += container_resource_name_errors(name, where) + quantity_errors(name, quantity, where)
        huge_pages = huge_pages or is_hugepages(name)
        cpu_or_memory = cpu_or_memory or name in _QOS_COMPUTE
    for name, quantity in requests.items():
        if not _plainly_valid(name, quantity):
            where = f.key(req_path, name)
            errs += container_resource_name_errors(name, where) + quantity_errors(name, quantity, where)
        limit = limits.get(name)
        if limit is not None:
            if quantity.cmp(limit) != 0 and not overcommit_allowed(name):
                errs.append(f.invalid(req_path, str(quantity), f"must be equal to {name} limit of {limit}"))
            elif quantity.cmp(limit) > 0:
                errs.append(f.invalid(req_path, str(quantity), f"must be less than or equal to {name} limit of "
                                                               f"{limit}"))
        elif not overcommit_allowed(name):
            errs.append(f.required(lim_path, "Limit must be set for non overcommitable resources"))
        huge_pages = huge_pages or is_hugepages(name)
        cpu_or_memory = cpu_or_memory or name in _QOS_COMPUTE
    if huge_pages and not cpu_or_memory:
        errs.append(f.forbidden(path, "HugePages require cpu or memory"))
    return errs
