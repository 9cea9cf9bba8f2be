"""``meta.k8s.io/v1`` Table responses, which kubectl asks for to print ``get`` output."""

from __future__ import annotations

from typing import Any

from dralloc.server.http.ages import human_age
from dralloc.server.http.errors import bad_request
from dralloc.server.http.partial import partial_object
from dralloc.server.registry import (
    admission_registration,
    autoscaling,
    disruption_budgets,
    networking,
    pods,
    quota,
    rbac,
    replication_controllers,
    services,
    storage_columns,
    workload_columns,
)
from dralloc.server.registry.kinds import Resource
from dralloc.server.views import ObjectView


def _dig(obj: dict[str, Any], path: str) -> Any:
    cur: Any = obj
    for part in path.split("."):
        cur = cur.get(part) if isinstance(cur, dict) else None
    return cur


def claim_state(claim: dict[str, Any]) -> str:
    """kubectl's STATE of a ResourceClaim: deleted, pending, allocated, reserved (comma-joined)."""
    states = []
    view = ObjectView(claim)
    deleting = view.deletion_timestamp is not None
    status = view.status
    if deleting:
        states.append("deleted")
    if not status.get("allocation"):
        if not deleting:
            states.append("pending")
    else:
        states.append("allocated")
        if status.get("reservedFor"):
            states.append("reserved")
    return ",".join(states)


def _seen(timestamp: Any) -> str:
    """An event time's age: a Time or a MicroTime (whose fraction of a second does not count)."""
    if isinstance(timestamp, str) and "." in timestamp:
        timestamp = timestamp.split(".", 1)[0] + "Z"
    return human_age(timestamp if isinstance(timestamp, str) else None)


def event_first_seen(event: dict[str, Any]) -> str:
    """kube-apiserver's FIRST SEEN: firstTimestamp, else eventTime (events.k8s.io writers set only that)."""
    return _seen(event.get("firstTimestamp") or event.get("eventTime"))


def event_last_seen(event: dict[str, Any]) -> str:
    """LAST SEEN: the series' last observation, else lastTimestamp, else the first seen."""
    series = event.get("series")
    if isinstance(series, dict):
        return _seen(series.get("lastObservedTime"))
    return _seen(event["lastTimestamp"]) if event.get("lastTimestamp") else event_first_seen(event)


def event_count(event: dict[str, Any]) -> int:
    """COUNT: the series' count, else count; a singleton event of the new API has none and counts 1."""
    series = event.get("series")
    if isinstance(series, dict):
        return int(series.get("count") or 0)
    return int(event.get("count") or 0) or 1


def event_object(event: dict[str, Any]) -> str:
    involved = event.get("involvedObject") or {}
    kind = str(involved.get("kind") or "").lower()
    return f"{kind}/{involved['name']}" if involved.get("name") else kind


def event_source(event: dict[str, Any]) -> str:
    """SOURCE: component (else reportingComponent), then ", " and host (else reportingInstance) if any."""
    source = event.get("source") or {}
    component = source.get("component") or event.get("reportingComponent") or ""
    instance = source.get("host") or event.get("reportingInstance") or ""
    return f"{component}, {instance}" if instance else component


def event_message(event: dict[str, Any]) -> str:
    return str(event.get("message") or "").strip()


def node_status(node: dict[str, Any]) -> str:
    """kubectl's STATUS of a Node: its Ready condition (Ready, NotReady, else Unknown), then
    SchedulingDisabled when cordoned."""
    view = ObjectView(node)
    ready = [c for c in view.status.get("conditions") or [] if isinstance(c, dict) and c.get("type") == "Ready"]
    states = [("Ready" if ready[-1].get("status") == "True" else "NotReady") if ready else "Unknown"]
    if view.spec.get("unschedulable"):
        states.append("SchedulingDisabled")
    return ",".join(states)


_NODE_ROLE_PREFIX = "node-role.kubernetes.io/"


def node_roles(node: dict[str, Any]) -> str:
    """ROLES: the <role> of node-role.kubernetes.io/<role> labels and the value of kubernetes.io/role, sorted."""
    roles = set()
    for key, value in ObjectView(node).labels.items():
        if key.startswith(_NODE_ROLE_PREFIX) and key != _NODE_ROLE_PREFIX:
            roles.add(key[len(_NODE_ROLE_PREFIX):])
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    return ",".join(sorted(roles)) or "<none>"


def _node_address(node: dict[str, Any], kind: str) -> str:
    for address in ObjectView(node).status.get("addresses") or []:
        if isinstance(address, dict) and address.get("type") == kind:
            return str(address.get("address") or "")
    return "<none>"


def _node_info(field: str) -> Any:
    return lambda node: (ObjectView(node).status.get("nodeInfo") or {}).get(field) or "<unknown>"


COMPUTED = {"=claimState": claim_state, "=podReady": pods.pod_ready, "=podStatus": pods.pod_status,
            "=podRestarts": pods.pod_restarts, "=readinessGates": pods.readiness_gates,
            "=eventLastSeen": event_last_seen, "=eventFirstSeen": event_first_seen, "=eventCount": event_count,
            "=eventObject": event_object, "=eventSource": event_source, "=eventMessage": event_message,
            "=serviceClusterIP": services.cluster_ip, "=serviceExternalIP": services.external_ip,
            "=servicePorts": services.ports, "=serviceSelector": services.selector,
            "=endpoints": services.endpoints, "=endpointSlicePorts": services.endpoint_slice_ports,
            "=endpointSliceEndpoints": services.endpoint_slice_endpoints,
            "=age": lambda obj: human_age(ObjectView(obj).metadata.get("creationTimestamp")),
            "=globalDefault": lambda obj: bool(obj.get("globalDefault")),
            "=dataCount": lambda obj: len(obj.get("data") or {}) + len(obj.get("binaryData") or {}),
            "=secretCount": lambda obj: len(obj.get("secrets") or []),
            "=nodeStatus": node_status, "=nodeRoles": node_roles,
            "=nodeInternalIP": lambda node: _node_address(node, "InternalIP"),
            "=nodeExternalIP": lambda node: _node_address(node, "ExternalIP"),
            "=nodeOSImage": _node_info("osImage"), "=nodeKernelVersion": _node_info("kernelVersion"),
            "=nodeContainerRuntime": _node_info("containerRuntimeVersion"), **workload_columns.COLUMNS, **rbac.COLUMNS,
            **storage_columns.COLUMNS, **disruption_budgets.COLUMNS, **quota.COLUMNS,
            **networking.COLUMNS, **autoscaling.COLUMNS,
            **replication_controllers.COLUMNS, **admission_registration.COLUMNS}
# the columns whose cells are not strings (kubectl prints them as it prints JSON values)
_COLUMN_TYPES = {"=eventCount": "integer", "=dataCount": "integer", "=secretCount": "integer", "value": "integer", "=globalDefault": "boolean",
                 **workload_columns.COLUMN_TYPES, **storage_columns.COLUMN_TYPES, **disruption_budgets.COLUMN_TYPES,
                 **autoscaling.COLUMN_TYPES, **admission_registration.COLUMN_TYPES}


def _cell(obj: dict[str, Any], path: str) -> Any:
    if path in COMPUTED:
        return COMPUTED[path](obj)
    value = _dig(obj, path)
    return "" if value is None else value


INCLUDE_OBJECT = ("Metadata", "Object", "None")


def include_object(value: str | None) -> str:
    """The ``includeObject`` query parameter: what each row's ``object`` holds (Metadata unless asked)."""
    if not value:
        return "Metadata"
    if value not in INCLUDE_OBJECT:
        raise bad_request(f'unrecognized includeObject value: "{value}"')
    return value


def _row(cells: list[Any], obj: dict[str, Any], include: str) -> dict[str, Any]:
    """A row and, as kube-apiserver does, its object: the whole object when includeObject=Object (kubectl
    get --sort-by and -o custom-columns read fields from it), only its metadata by default, or none."""
    if include == "None":
        return {"cells": cells}
    if include == "Object":
        return {"cells": cells, "object": obj}
    return {"cells": cells, "object": partial_object(obj)}


def _layout_table(resource: Resource, items: list[dict[str, Any]], shown: list[dict[str, Any]],
                  include: str) -> tuple[list[Any], list[Any]]:
    """Columns and rows of a resource with a whole table layout of its own (Resource.table)."""
    columns = [{"name": header, "type": _COLUMN_TYPES.get(path, "string"),
                "format": "name" if path == "metadata.name" else "", "description": path.lstrip("="),
                "priority": priority} for header, path, priority in resource.table]
    rows = [_row([_cell(obj, path) for _, path, _ in resource.table], original, include)
            for obj, original in zip(items, shown, strict=True)]
    return columns, rows


def to_table(resource: Resource, items: list[dict[str, Any]], rv: str, include: str = "Metadata") -> dict[str, Any]:
    """``items`` as a Table; ``include`` is what each row's object holds (see ``include_object``)."""
    shown = items  # the rows' objects, in the version asked for
    own = resource.strategy.printer_columns(items[0].get("apiVersion", "") if items else "")
    if own is not None:  # a custom resource's additionalPrinterColumns
        rows = [_row(resource.strategy.printer_cells(obj), obj, include) for obj in items]
        return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": rv},
                "columnDefinitions": own, "rows": rows}
    if resource.stored_as is not None:  # a view has its stored resource's columns, read from the stored form
        items = [resource.strategy.to_storage(item) for item in items]
    if resource.table:
        columns, rows = _layout_table(resource, items, shown, include)
        return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": rv},
                "columnDefinitions": columns, "rows": rows}
    columns = [{"name": "Name", "type": "string", "format": "name", "description": "Name of the object",
                "priority": 0}]
    columns += [{"name": header.title(), "type": "string", "format": "", "description": path.lstrip("="),
                 "priority": 0}
                for header, path in resource.columns]
    columns.append({"name": "Age", "type": "string", "format": "", "description": "creationTimestamp",
                    "priority": 0})
    columns += [{"name": header.title(), "type": "string", "format": "", "description": path.lstrip("="),
                 "priority": 1}  # shown by -o wide
                for header, path in resource.wide_columns]
    rows = []
    for obj in items:
        meta = obj.get("metadata") or {}
        cells: list[Any] = [meta.get("name", "")]
        cells += [_cell(obj, path) for _, path in resource.columns]
        cells.append(human_age(meta.get("creationTimestamp")))
        cells += [_cell(obj, path) or "<none>" for _, path in resource.wide_columns]
        rows.append(_row(cells, obj, include))
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": rv},
            "columnDefinitions": columns, "rows": rows}
