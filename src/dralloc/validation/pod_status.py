"""kube-apiserver's validation of a write of ``pods/{name}/status`` (ValidatePodStatusUpdate in
pkg/apis/core/validation, run by the pod status strategy of pkg/registry/core/pod, Kubernetes 1.36), on pods
as the API server stores them (JSON dicts).

The strategy keeps the stored spec, the owner references and the deletion timestamp, so a status write may
change the status and the rest of the metadata (labels, annotations, finalizers). What it validates:

- the metadata as any update's (the common ObjectMeta rules, then what an update may not change), and the
  pod-specific annotations (``pod_annotations``);
- the types of custom conditions as qualified names (upstream reports them at ``metadata.conditions[i].Type``);
- ``status.nominatedNodeName`` as a node name when it changes, ``status.qosClass`` as immutable;
- containers that terminated and may not restart (restartPolicy Never, or OnFailure after exit code 0;
  ephemeral containers never restart; restartable init containers always may) staying terminated;
- ``status.resourceClaimStatuses``: each name one of ``spec.resourceClaims``, once, and a
  ``resourceClaimName`` that is a valid object name (reported at ``.name``, as upstream does);
- ``status.podIPs`` and ``status.hostIPs``: valid IP addresses (``ips``: strict parsing, a value the old pod
  had is kept as it is), at most one per family, no duplicates, ``hostIPs[0]`` equal to ``hostIP``;
- the container users (uids and gids in range; none for a Windows pod) and ``allocatedResourcesStatus``
  (ResourceHealthStatus, on by default in 1.36: names from the container's requests or claims, known health
  values, unique resource IDs; none for ephemeral containers).

Upstream does not check that container statuses name the spec's containers, which state a status is in, or
which phase follows which: none of that is refused here either.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from dralloc.api.meta import Base, ObjectMeta
from dralloc.validation import field as f
from dralloc.validation.formats import is_dns1123_subdomain, is_qualified_name
from dralloc.validation.ips import dual_stack, legacy_ip_errors
from dralloc.validation.meta import (
    IMMUTABLE,
    validate_annotations,
    validate_labels,
    validate_managed_fields,
    validate_object_meta,
)
from dralloc.validation.pod_annotations import pod_annotation_update_errors

# The condition types the system owns; any other type must be a qualified name.
SYSTEM_CONDITIONS = frozenset({"PodScheduled", "Ready", "Initialized"})
HEALTH_VALUES = ["Healthy", "Unhealthy", "Unknown"]
MAX_INT32 = 2**31 - 1
_ID_RANGE = f"must be between 0 and {MAX_INT32}, inclusive"
_CLAIM_RESOURCE = ("must match one of the container's resource claims in a format 'claim:<claimName>/<request>' or "
                   "'claim:<claimName>' if request is empty")
_REQUEST_RESOURCE = "must match one of the container's resource requests"
_NOT_TERMINATED = "may not be transitioned to non-terminated state"
_ONE_PER_FAMILY = "may specify no more than one IP for each IP family"


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _items(value: Any) -> list[dict[str, Any]]:
    return [v if isinstance(v, dict) else {} for v in value] if isinstance(value, list) else []


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


# --- the JSON types a status write is decoded into --------------------------------------------------------

Int32 = Annotated[int, msgspec.Meta(ge=-2**31, le=MAX_INT32)]
Int64 = Annotated[int, msgspec.Meta(ge=-2**63, le=2**63 - 1)]


class _IP(Base):
    ip: str | None = None


class _Terminated(Base):
    exit_code: Int32 | None = None


class _State(Base):
    waiting: dict[str, Any] | None = None
    running: dict[str, Any] | None = None
    terminated: _Terminated | None = None


class _LinuxUser(Base):
    uid: Int64 | None = None
    gid: Int64 | None = None
    supplemental_groups: list[Int64] | None = None


class _User(Base):
    linux: _LinuxUser | None = None


class _Health(Base):
    resource_id: str | None = msgspec.field(default=None, name="resourceID")
    health: str | None = None
    message: str | None = None


class _ResourceStatus(Base):
    name: str | None = None
    resources: list[_Health] | None = None


class _ContainerStatus(Base):
    name: str | None = None
    state: _State | None = None
    last_state: _State | None = None
    user: _User | None = None
    allocated_resources_status: list[_ResourceStatus] | None = None


class _Status(Base):
    pod_ip: str | None = msgspec.field(default=None, name="podIP")
    pod_ips: list[_IP] | None = msgspec.field(default=None, name="podIPs")
    host_ip: str | None = msgspec.field(default=None, name="hostIP")
    host_ips: list[_IP] | None = msgspec.field(default=None, name="hostIPs")
    qos_class: str | None = None
    observed_generation: Int64 | None = None
    container_statuses: list[_ContainerStatus] | None = None
    init_container_statuses: list[_ContainerStatus] | None = None
    ephemeral_container_statuses: list[_ContainerStatus] | None = None


class _Pod(Base):
    status: _Status | None = None


def status_type_error(pod: dict[str, Any]) -> str | None:
    """Why the status of ``pod`` could not be decoded into kube-apiserver's types (a JSON type that is not
    the field's), or None. Only the fields validated here are checked (the pod model has the others)."""
    status = pod.get("status")
    if status is None:
        return None  # (a create's body, most often: nothing to decode)
    try:
        msgspec.convert({"status": status}, _Pod)
    except msgspec.ValidationError as exc:
        return str(exc)
    return None


# --- metadata -----------------------------------------------------------------------------------------------


def _no_names(_name: str, _prefix: bool) -> list[str]:
    return []  # the name cannot change on an update: it was checked when the pod was created


def _meta_errors(new: dict[str, Any], old: dict[str, Any]) -> list[f.FieldError]:
    """The ObjectMeta rules every update runs (the new metadata's, then ValidateObjectMetaUpdate's)."""
    try:
        typed = msgspec.convert(new, ObjectMeta)
    except msgspec.ValidationError:
        return []  # (the request's metadata was decoded already; nothing else comes here)
    common = validate_object_meta(typed, True, _no_names, require_namespace=True)
    return common + meta_update_errors(new, old)


def meta_update_errors(new: dict[str, Any], old: dict[str, Any]) -> list[f.FieldError]:
    """ValidateObjectMetaUpdate for what a pod status write may change: no finalizer added to a pod being
    deleted, the deletion grace period kept, then the labels, annotations and managed fields."""
    errs: list[f.FieldError] = []
    if old.get("deletionTimestamp"):
        before = set(old.get("finalizers") or ())
        added = sorted({x for x in new.get("finalizers") or () if isinstance(x, str) and x not in before})
        if added:
            shown = ", ".join(f.go_quote(x) for x in added)
            errs.append(f.forbidden("metadata.finalizers", f"no new finalizers can be added if the object is being "
                                                           f"deleted, found new finalizers []string{{{shown}}}"))
    grace = new.get("deletionGracePeriodSeconds")
    if grace != old.get("deletionGracePeriodSeconds"):
        errs.append(f.invalid("metadata.deletionGracePeriodSeconds", grace, IMMUTABLE))
    labels, annotations = new.get("labels"), new.get("annotations")
    errs += validate_labels(labels if isinstance(labels, dict) else None, "metadata.labels")
    errs += validate_annotations(annotations if isinstance(annotations, dict) else None, "metadata.annotations")
    errs += validate_managed_fields(new.get("managedFields"), "metadata.managedFields")
    return errs


# --- status -------------------------------------------------------------------------------------------------


def condition_errors(conditions: Any) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    for i, condition in enumerate(_items(conditions)):
        kind = _str(condition.get("type"))
        if kind not in SYSTEM_CONDITIONS:
            errs += [f.invalid(f"metadata.conditions[{i}].Type", kind, m) for m in is_qualified_name(kind)]
    return errs


def _terminated(status: dict[str, Any]) -> dict[str, Any] | None:
    terminated = _obj(status.get("state")).get("terminated")
    return _obj(terminated) if terminated is not None else None


def transition_errors(new: Any, old: Any, path: str, policy: str,
                      restartable: frozenset[str] = frozenset()) -> list[f.FieldError]:
    """ValidateContainerStateTransition: under ``policy``, a container that terminated (successfully, for
    OnFailure) stays terminated; ``restartable``: init containers that may restart whatever the policy."""
    if policy == "Always":
        return []
    errs: list[f.FieldError] = []
    new_statuses = _items(new)
    for i, before in enumerate(_items(old)):
        terminated = _terminated(before)
        if terminated is None:
            continue
        if terminated.get("exitCode") not in (None, 0) and policy == "OnFailure":
            continue
        name = _str(before.get("name"))
        if name in restartable:
            continue
        for after in new_statuses:
            if _str(after.get("name")) == name and _terminated(after) is None:
                errs.append(f.forbidden(f"{path}[{i}].state", _NOT_TERMINATED))
    return errs


def _restartable_init_containers(spec: dict[str, Any]) -> frozenset[str]:
    first: dict[str, dict[str, Any]] = {}
    for c in _items(spec.get("initContainers")):
        first.setdefault(_str(c.get("name")), c)
    return frozenset(name for name, c in first.items() if c.get("restartPolicy") == "Always")


def claim_status_errors(statuses: Any, spec: dict[str, Any]) -> list[f.FieldError]:
    names = {_str(c.get("name")) for c in _items(spec.get("resourceClaims"))}
    errs: list[f.FieldError] = []
    seen: set[str] = set()
    for i, status in enumerate(_items(statuses)):
        where = f"status.resourceClaimStatuses[{i}].name"
        name = _str(status.get("name"))
        if name not in names:
            errs.append(f.invalid(where, name, "must match the name of an entry in `spec.resourceClaims`"))
        if name in seen:
            errs.append(f.duplicate(where, name))
        seen.add(name)
        claim = status.get("resourceClaimName")
        if isinstance(claim, str):
            errs += [f.invalid(where, claim, m) for m in is_dns1123_subdomain(claim)]
    return errs


def _ips(entries: Any) -> list[str]:
    return [_str(e.get("ip")) for e in _items(entries)]


def _family_errors(path: str, ips: list[str]) -> list[f.FieldError]:
    ok, problem = dual_stack(ips)
    errs = [f.internal(path, f"failed to check for dual stack with error:{problem}")] if problem else []
    if not ok or len(ips) > 2:
        errs.append(f.invalid(path, [{"ip": ip} for ip in ips], _ONE_PER_FAMILY))
    return errs


def _duplicate_errors(path: str, ips: list[str]) -> list[f.FieldError]:
    seen: set[str] = set()
    errs = []
    for i, ip in enumerate(ips):
        if ip in seen:
            errs.append(f.duplicate(f"{path}[{i}]", {"ip": ip}))
        seen.add(ip)
    return errs


def pod_ip_errors(status: dict[str, Any], old_status: dict[str, Any]) -> list[f.FieldError]:
    path = "status.podIPs"
    ips, before = _ips(status.get("podIPs")), _ips(old_status.get("podIPs"))
    errs = [e for i, ip in enumerate(ips) for e in legacy_ip_errors(f"{path}[{i}]", ip, before)]
    if len(ips) > 1:
        errs += _family_errors(path, ips) + _duplicate_errors(path, ips)
    return errs


def host_ip_errors(status: dict[str, Any], old_status: dict[str, Any]) -> list[f.FieldError]:
    path = "status.hostIPs"
    ips, before = _ips(status.get("hostIPs")), _ips(old_status.get("hostIPs"))
    if not ips:
        return []
    errs = []
    if _str(status.get("hostIP")) != ips[0]:
        errs.append(f.invalid(f"{path}[0].ip", ips[0], "must be equal to `hostIP`"))
    errs += [e for i, ip in enumerate(ips) for e in legacy_ip_errors(f"{path}[{i}]", ip, before)]
    if len(ips) > 1:
        errs += _duplicate_errors(path, ips) + _family_errors(path, ips)
    return errs


def _id_errors(path: str, value: Any) -> list[f.FieldError]:
    if isinstance(value, int) and not isinstance(value, bool) and not 0 <= value <= MAX_INT32:
        return [f.invalid(path, value, _ID_RANGE)]
    return []


def user_errors(statuses: Any, path: str, os_name: str) -> list[f.FieldError]:
    """validateContainerStatusUsers (note upstream's path: ``[i].linux``, without ``.user``)."""
    errs: list[f.FieldError] = []
    for i, status in enumerate(_items(statuses)):
        user = status.get("user")
        if user is None:
            continue
        linux = _obj(user).get("linux")
        where = f"{path}[{i}].linux"
        if os_name == "windows":
            if linux is not None:
                errs.append(f.forbidden(where, "cannot be set for a windows pod"))
        elif os_name == "linux" and linux is not None:
            linux = _obj(linux)
            errs += _id_errors(f"{where}.uid", linux.get("uid"))
            errs += _id_errors(f"{where}.gid", linux.get("gid"))
            groups = linux.get("supplementalGroups")
            for g, gid in enumerate(groups if isinstance(groups, list) else []):
                errs += _id_errors(f"{where}.supplementalGroups[{g}]", gid)
    return errs


def _claim_resource_names(container: dict[str, Any]) -> set[str]:
    names = set()
    for claim in _items(_obj(container.get("resources")).get("claims")):
        request = _str(claim.get("request"))
        names.add(f"claim:{_str(claim.get('name'))}" + (f"/{request}" if request else ""))
    return names


def resource_health_errors(statuses: Any, path: str, containers: Any) -> list[f.FieldError]:
    """validateContainerStatusAllocatedResourcesStatus: each entry names one of the container's resource
    requests (or ``claim:<claim>[/<request>]``, one of its claims), each device's health is a known value and
    each resource ID appears once. A status whose container is not in the spec is not checked by name."""
    errs: list[f.FieldError] = []
    spec_containers = _items(containers)
    for i, status in enumerate(_items(statuses)):
        entries = status.get("allocatedResourcesStatus")
        if entries is None:
            continue
        name = _str(status.get("name"))
        container = next((c for c in spec_containers if _str(c.get("name")) == name), None)
        for j, entry in enumerate(_items(entries)):
            where = f"{path}[{i}].allocatedResourcesStatus[{j}]"
            resource = _str(entry.get("name"))
            if container is not None:
                if resource.startswith("claim:"):
                    found, why = resource in _claim_resource_names(container), _CLAIM_RESOURCE
                else:
                    requests = _obj(_obj(container.get("resources")).get("requests"))
                    found, why = resource in requests, _REQUEST_RESOURCE
                if not found:
                    errs.append(f.invalid(f"{where}.name", resource, why))
            ids: set[str] = set()
            for k, device in enumerate(_items(entry.get("resources"))):
                health = _str(device.get("health"))
                if health not in HEALTH_VALUES:
                    errs.append(f.not_supported(f"{where}.resources[{k}].health", health, HEALTH_VALUES))
                resource_id = _str(device.get("resourceID"))
                if resource_id in ids:
                    errs.append(f.duplicate(f"{where}.resources[{k}].resourceID", resource_id))
                ids.add(resource_id)
    return errs


def _no_resource_health(statuses: Any, path: str) -> list[f.FieldError]:
    return [f.forbidden(f"{path}[{i}].allocatedResourcesStatus", "must not be specified in container status")
            for i, status in enumerate(_items(statuses)) if _items(status.get("allocatedResourcesStatus"))]


def status_update_errors(new: dict[str, Any], old: dict[str, Any]) -> list[f.FieldError]:
    """Every error kube-apiserver reports for a write of ``new`` over ``old`` through ``pods/status``, in its
    order; ``new`` as the status strategy made it (``server/pod_status.prepare``: the stored spec)."""
    new_meta, old_meta = _obj(new.get("metadata")), _obj(old.get("metadata"))
    status, old_status = _obj(new.get("status")), _obj(old.get("status"))
    spec, old_spec = _obj(new.get("spec")), _obj(old.get("spec"))
    errs = _meta_errors(new_meta, old_meta) + meta_update_errors(new_meta, old_meta)
    errs += pod_annotation_update_errors(new_meta.get("annotations"), old_meta.get("annotations"), spec)
    errs += condition_errors(status.get("conditions"))
    nominated = _str(status.get("nominatedNodeName"))
    if nominated and nominated != _str(old_status.get("nominatedNodeName")):
        errs += [f.invalid("status.nominatedNodeName", nominated, m) for m in is_dns1123_subdomain(nominated)]
    qos = _str(status.get("qosClass"))
    if qos != _str(old_status.get("qosClass")):
        errs.append(f.invalid("status.qosClass", qos, IMMUTABLE))
    policy = _str(old_spec.get("restartPolicy"))
    errs += transition_errors(status.get("containerStatuses"), old_status.get("containerStatuses"),
                              "status.containerStatuses", policy)
    errs += transition_errors(status.get("initContainerStatuses"), old_status.get("initContainerStatuses"),
                              "status.initContainerStatuses", policy, _restartable_init_containers(old_spec))
    errs += transition_errors(status.get("ephemeralContainerStatuses"),
                              old_status.get("ephemeralContainerStatuses"), "status.ephemeralContainerStatuses",
                              "Never")
    errs += claim_status_errors(status.get("resourceClaimStatuses"), spec)
    errs += pod_ip_errors(status, old_status) + host_ip_errors(status, old_status)
    os_name = _str(_obj(spec.get("os")).get("name")) or "linux"
    for kind in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"):
        errs += user_errors(status.get(kind), f"status.{kind}", os_name)
    errs += resource_health_errors(status.get("containerStatuses"), "status.containerStatuses",
                                   spec.get("containers"))
    errs += resource_health_errors(status.get("initContainerStatuses"), "status.initContainerStatuses",
                                   spec.get("initContainers"))
    errs += _no_resource_health(status.get("ephemeralContainerStatuses"), "status.ephemeralContainerStatuses")
    return errs
