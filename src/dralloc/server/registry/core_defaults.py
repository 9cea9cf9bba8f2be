"""The nested defaults kube-apiserver's decoding of a core/v1 object fills in (pkg/apis/core/v1 defaults.go and
the declarative ``+default`` markers of the core/v1 types), on the JSON dicts the server stores as sent: a
container's ports, probes, HTTP handlers and field references, a pod's volumes, a pod's requests taken from its
limits and host network ports, a node's allocatable resources.

Each function only fills in what is unset, as the Go defaulters do: a field absent or null, or, for a field that
is not a pointer in Go (a probe's ``timeoutSeconds``, a port's ``protocol``), holding its zero value (0, "")
which decoding cannot tell from absent. A set field is never changed (a quantity of a resource list is only
rounded up to milli-units and written in its canonical form, as decoding and encoding it do), and defaulting
twice changes nothing.
Anything that is not an object where an object belongs is left alone: validation reports it."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from dralloc.api.quantity import Quantity
from dralloc.controllers.preemption import DEFAULT_GRACE_SECONDS
from dralloc.server.registry.strategy import CoreStrategy
from dralloc.server.types import Obj

# --- helpers ---------------------------------------------------------------------------------------------


def _objects(value: Any) -> list[dict[str, Any]]:
    """The objects of a JSON list (the others are left for validation to report)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _object(parent: dict[str, Any], key: str) -> dict[str, Any] | None:
    value = parent.get(key)
    return value if isinstance(value, dict) else None


def _default_unset(obj: dict[str, Any], key: str, value: Any) -> None:
    """A pointer field in Go: defaulted when absent or null."""
    if obj.get(key) is None:
        obj[key] = value


def _default_zero(obj: dict[str, Any], key: str, value: Any) -> None:
    """A value field in Go (string, integer): defaulted when absent, null or its zero value."""
    current = obj.get(key)
    if current is None or current == "" or (current == 0 and not isinstance(current, bool)):
        obj[key] = value


# --- resource lists ----------------------------------------------------------------------------------------


def _milli_rounded(value: Any) -> Any:
    """A quantity as decoding leaves it: rounded up to milli-units (SetDefaults_ResourceList) and written in its
    canonical form, as kube-apiserver writes every quantity it decoded ("0.5" is "500m", "0.0001" is "1m").
    What is not a quantity is left for validation to report."""
    if isinstance(value, str):
        return _milli_rounded_text(value)
    if isinstance(value, bool) or not isinstance(value, int):
        return value
    return _milli_rounded_quantity(value)


@functools.lru_cache(maxsize=4096)
def _milli_rounded_text(value: str) -> str:
    # cached: the same few quantities ("100m", "1Gi") come again and again, and parsing one is the costly part
    return str(_milli_rounded_quantity(value))


def _milli_rounded_quantity(value: str | int) -> str | int:
    try:
        quantity = Quantity(value)
    except ValueError:
        return value
    milli = quantity.milli_value()
    if Fraction(milli, 1000) != quantity.as_fraction():
        quantity = Quantity.from_milli(milli, quantity.format)
    return str(quantity)


def default_resource_list(holder: dict[str, Any], key: str) -> None:
    """SetDefaults_ResourceList of ``holder[key]``, when it is an object."""
    resources = holder.get(key)
    if isinstance(resources, dict):
        for name, value in resources.items():
            # (a quantity's text, the common case, straight to the cache)
            resources[name] = _milli_rounded_text(value) if isinstance(value, str) else _milli_rounded(value)


def _default_requirements(holder: dict[str, Any], key: str = "resources") -> None:
    requirements = holder.get(key)
    if isinstance(requirements, dict) and requirements:  # (an empty one has no list to round)
        default_resource_list(requirements, "limits")
        default_resource_list(requirements, "requests")


# --- containers --------------------------------------------------------------------------------------------

# SetDefaults_Probe: integers, not pointers, so 0 is unset
_PROBE_DEFAULTS = {"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
_LIFECYCLE_HANDLERS = ("postStart", "preStop")


def default_http_get(handler: dict[str, Any]) -> None:
    """SetDefaults_HTTPGetAction, of a probe or a lifecycle handler: path "/", scheme HTTP."""
    action = _object(handler, "httpGet")
    if action is not None:
        _default_zero(action, "path", "/")
        _default_zero(action, "scheme", "HTTP")


def default_probe(probe: dict[str, Any]) -> None:
    """SetDefaults_Probe, its HTTP GET action, and a gRPC probe's service (``+default=""``, a pointer)."""
    for key, value in _PROBE_DEFAULTS.items():
        _default_zero(probe, key, value)
    default_http_get(probe)
    grpc = _object(probe, "grpc")
    if grpc is not None:
        _default_unset(grpc, "service", "")


def default_field_ref(holder: dict[str, Any]) -> None:
    """SetDefaults_ObjectFieldSelector: a ``fieldRef`` without apiVersion is of v1."""
    field_ref = _object(holder, "fieldRef")
    if field_ref is not None:
        _default_zero(field_ref, "apiVersion", "v1")


@functools.lru_cache(maxsize=4096)  # (a workload's pods all run the same few images)
def _pull_policy(image: str) -> str:
    """SetDefaults_Container's image pull policy: Always for an untagged image or the ``latest`` tag, else
    IfNotPresent (a digest counts as a tag)."""
    tagged = ":" in image.rsplit("/", 1)[-1] or "@" in image
    return "Always" if not tagged or image.endswith(":latest") else "IfNotPresent"


# the fields of a container whose nested defaults are looked at only when the container has one of them
_NESTED_DEFAULTED = frozenset(("ports", "env", *_PROBES, "lifecycle"))


def default_container_fields(container: dict[str, Any]) -> None:
    """What every container (regular, init, ephemeral; a pod's or a template's) gets: its termination message
    settings and image pull policy, its ports' protocol TCP, its env's field references of v1, its resources
    rounded up to milli-units, its probes' timings and HTTP actions, its lifecycle handlers' HTTP actions."""
    setdefault = container.setdefault
    setdefault("terminationMessagePath", "/dev/termination-log")
    setdefault("terminationMessagePolicy", "File")
    if "imagePullPolicy" not in container:
        container["imagePullPolicy"] = _pull_policy(str(container.get("image") or ""))
    resources = setdefault("resources", {})
    if isinstance(resources, dict) and resources:
        if "limits" in resources:
            default_resource_list(resources, "limits")
        if "requests" in resources:
            default_resource_list(resources, "requests")
    if not _NESTED_DEFAULTED.isdisjoint(container):
        _default_nested_container_fields(container)


def _default_nested_container_fields(container: dict[str, Any]) -> None:
    """The ports', env's, probes' and lifecycle handlers' defaults of a container (see above)."""
    for port in _objects(container.get("ports")):
        _default_zero(port, "protocol", "TCP")
    for env in _objects(container.get("env")):
        value_from = _object(env, "valueFrom")
        if value_from is not None:
            default_field_ref(value_from)
    for key in _PROBES:
        probe = _object(container, key)
        if probe is not None:
            default_probe(probe)
    lifecycle = _object(container, "lifecycle")
    if lifecycle is not None:
        for key in _LIFECYCLE_HANDLERS:
            handler = _object(lifecycle, key)
            if handler is not None:
                default_http_get(handler)


# --- volumes -------------------------------------------------------------------------------------------------

# the volume modes kube-apiserver gives secret, configMap, downwardAPI and projected volumes: 0644
DEFAULT_VOLUME_MODE = 0o644
TOKEN_EXPIRATION_SECONDS = 3600  # a projected service account token: an hour

# declarative defaults of the in-tree volume sources (value fields: "" is unset)
_ISCSI_DEFAULTS = {"iscsiInterface": "default"}
_RBD_DEFAULTS = {"pool": "rbd", "user": "admin", "keyring": "/etc/ceph/keyring"}
_SCALE_IO_DEFAULTS = {"storageMode": "ThinProvisioned", "fsType": "xfs"}
# AzureDiskVolumeSource's fields are pointers: only absent or null is unset
_AZURE_DISK_DEFAULTS: dict[str, Any] = {"cachingMode": "ReadWrite", "fsType": "ext4", "readOnly": False,
                                        "kind": "Shared"}


def _default_mode(source: dict[str, Any]) -> None:
    _default_unset(source, "defaultMode", DEFAULT_VOLUME_MODE)


def _default_downward_api(downward: dict[str, Any], with_mode: bool = True) -> None:
    if with_mode:  # a projection's downwardAPI has no mode of its own: the projected volume's applies
        _default_mode(downward)
    for item in _objects(downward.get("items")):
        default_field_ref(item)


def _default_projected(projected: dict[str, Any]) -> None:
    _default_mode(projected)
    for source in _objects(projected.get("sources")):
        downward = _object(source, "downwardAPI")
        if downward is not None:
            _default_downward_api(downward, with_mode=False)
        token = _object(source, "serviceAccountToken")
        if token is not None:
            _default_unset(token, "expirationSeconds", TOKEN_EXPIRATION_SECONDS)


def _default_host_path(host_path: dict[str, Any]) -> None:
    _default_unset(host_path, "type", "")  # a pointer: "" (no check) rather than absent


def _default_ephemeral(ephemeral: dict[str, Any]) -> None:
    template = _object(ephemeral, "volumeClaimTemplate")
    claim_spec = _object(template, "spec") if template is not None else None
    if claim_spec is not None:
        _default_unset(claim_spec, "volumeMode", "Filesystem")  # SetDefaults_PersistentVolumeClaimSpec
        _default_requirements(claim_spec)


def _declared(defaults: dict[str, Any], default: Callable[[dict[str, Any], str, Any], None],
              ) -> Callable[[dict[str, Any]], None]:
    def apply(source: dict[str, Any]) -> None:
        for field, value in defaults.items():
            default(source, field, value)
    return apply


# the defaults of each volume source, by its key in a volume
_SOURCE_DEFAULTS: dict[str, Callable[[dict[str, Any]], None]] = {
    "secret": _default_mode, "configMap": _default_mode, "downwardAPI": _default_downward_api,
    "projected": _default_projected, "hostPath": _default_host_path, "ephemeral": _default_ephemeral,
    "iscsi": _declared(_ISCSI_DEFAULTS, _default_zero), "rbd": _declared(_RBD_DEFAULTS, _default_zero),
    "scaleIO": _declared(_SCALE_IO_DEFAULTS, _default_zero),
    "azureDisk": _declared(_AZURE_DISK_DEFAULTS, _default_unset)}


def default_volume(volume: dict[str, Any]) -> None:
    """SetDefaults_Volume (a volume with no source is an emptyDir) and the defaults of its source."""
    sourced = False
    for key, source in volume.items():
        if key == "name" or source is None:
            continue
        sourced = True
        default = _SOURCE_DEFAULTS.get(key)
        if default is not None and isinstance(source, dict):
            default(source)
    if not sourced:
        volume["emptyDir"] = {}


# --- pod specs and pods ----------------------------------------------------------------------------------

_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


def default_pod_spec(spec: Any) -> None:
    """The defaults of every pod spec, a pod's or a workload's pod template's: restart and DNS policy, scheduler
    name, grace period, security context (SetDefaults_PodSpec's own fields, in this order); its volumes', its
    containers' (regular, init and ephemeral); its overhead's and pod-level resources' rounding."""
    if not isinstance(spec, dict):
        return
    setdefault = spec.setdefault
    setdefault("restartPolicy", "Always")
    setdefault("terminationGracePeriodSeconds", DEFAULT_GRACE_SECONDS)
    setdefault("dnsPolicy", "ClusterFirst")
    if "securityContext" not in spec:
        spec["securityContext"] = {}  # (a dict of its own: no two pods share one)
    setdefault("schedulerName", "default-scheduler")
    if "overhead" in spec:
        default_resource_list(spec, "overhead")
    if "resources" in spec:
        _default_requirements(spec)
    volumes = spec.get("volumes")
    if volumes:
        for volume in _objects(volumes):
            default_volume(volume)
    for kind in _CONTAINER_LISTS:
        containers = spec.get(kind)
        if isinstance(containers, list):
            for container in containers:
                if isinstance(container, dict):
                    default_container_fields(container)


def _requests_from_limits(resources: dict[str, Any]) -> None:
    """A resource limited but not requested is requested at its limit."""
    limits = resources.get("limits")
    if not isinstance(limits, dict) or not limits:
        return
    requests = resources.get("requests")
    if requests is None:
        requests = resources["requests"] = {}
    if isinstance(requests, dict):
        for name, limit in limits.items():
            if name not in requests:
                requests[name] = limit if isinstance(limit, str) else copy.deepcopy(limit)  # (a str is immutable)


def default_pod_only_fields(spec: dict[str, Any]) -> None:
    """SetDefaults_Pod's nested defaults, which a pod gets and a pod template does not: a container's (regular
    or init) requests default to its limits, then the pod-level resources (``default_pod_level_resources``),
    and with the host's network a port's hostPort to its containerPort."""
    for kind in ("containers", "initContainers"):
        containers = spec.get(kind)
        if isinstance(containers, list):
            for container in containers:
                resources = container.get("resources") if isinstance(container, dict) else None
                if isinstance(resources, dict) and resources.get("limits"):  # (else: nothing to request)
                    _requests_from_limits(resources)
    pod_resources = _object(spec, "resources")
    if pod_resources is not None:
        default_pod_level_resources(spec, pod_resources)
    if spec.get("hostNetwork") is True:
        for kind in ("containers", "initContainers"):
            for container in _objects(spec.get(kind)):
                for port in _objects(container.get("ports")):
                    if port.get("containerPort") is not None:
                        _default_zero(port, "hostPort", port["containerPort"])


# --- pod-level resources (PodLevelResources, on by default) ---------------------------------------------------

_HUGEPAGES = "hugepages-"
_OVERCOMMITTABLE_AT_POD_LEVEL = ("cpu", "memory")  # the pod-level resources that are not hugepages


def _supported_at_pod_level(name: str) -> bool:
    return name in _OVERCOMMITTABLE_AT_POD_LEVEL or name.startswith(_HUGEPAGES)


def _aggregate(spec: dict[str, Any], key: str) -> dict[str, Quantity] | None:
    """What the containers ask for together (``key``: "requests" or "limits"), as component-helpers'
    AggregateContainerRequests / AggregateContainerLimits count it from the spec: the app containers and the
    sidecars (init containers that restart ``Always``) summed, raised to each other init container's value
    plus the sidecars started before it. A sum keeps the first value's format; a larger value replaces a
    smaller one with its own. None: a value that is not a quantity (validation reports it)."""
    def values(container: dict[str, Any]) -> dict[str, Quantity]:
        resources = _object(container, "resources")
        listed = resources.get(key) if resources is not None else None
        return {name: Quantity(value) for name, value in listed.items()} if isinstance(listed, dict) else {}

    def add(into: dict[str, Quantity], more: dict[str, Quantity]) -> None:
        for name, quantity in more.items():
            into[name] = into[name] + quantity if name in into else quantity

    try:
        total: dict[str, Quantity] = {}
        for container in _objects(spec.get("containers")):
            add(total, values(container))
        sidecars: dict[str, Quantity] = {}
        init_max: dict[str, Quantity] = {}
        for container in _objects(spec.get("initContainers")):
            own = values(container)
            if container.get("restartPolicy") == "Always":
                add(total, own)
                add(sidecars, own)
                running = sidecars
            else:
                running = dict(own)
                add(running, sidecars)
            for name, quantity in running.items():
                if name not in init_max or quantity > init_max[name]:
                    init_max[name] = quantity
    except (TypeError, ValueError):
        return None
    for name, quantity in init_max.items():
        if name not in total or quantity > total[name]:
            total[name] = quantity
    return total


def default_pod_level_resources(spec: dict[str, Any], resources: dict[str, Any]) -> None:
    """SetDefaults_Pod's pod-level ``spec.resources`` (once the containers' requests are defaulted), only when
    the pod sets some: hugepages limits from the containers' when the pod sets neither the limit nor the
    request of that size; then, when the pod sets limits, the cpu and memory requests it leaves out from what
    its containers request together, and any other supported request (cpu, memory, hugepages-*) still missing
    from its limit. New entries follow the pod's own, by name."""
    limits, requests = resources.get("limits"), resources.get("requests")
    if not isinstance(limits, dict | None) or not isinstance(requests, dict | None) or not (limits or requests):
        return
    aggregated = _aggregate(spec, "limits")
    if aggregated is None:
        return
    hugepages = {name: str(quantity) for name, quantity in sorted(aggregated.items())
                 if name.startswith(_HUGEPAGES) and name not in (requests or {}) and name not in (limits or {})}
    if hugepages:
        limits = resources["limits"] = {**(limits or {}), **hugepages}
    if not limits:
        return
    containers = _aggregate(spec, "requests")
    if containers is None:
        return
    defaulted = dict(requests or {})
    for name in sorted(containers):
        if name in _OVERCOMMITTABLE_AT_POD_LEVEL and name not in defaulted:
            defaulted[name] = str(containers[name])
    for name in sorted(limits):
        if name not in defaulted and _supported_at_pod_level(name):
            defaulted[name] = copy.deepcopy(limits[name])
    if defaulted:
        resources["requests"] = defaulted


# --- nodes ---------------------------------------------------------------------------------------------------


def default_node(node: dict[str, Any]) -> None:
    """SetDefaults_NodeStatus: a node that reports its capacity and not what is allocatable has all of its
    capacity allocatable; both rounded up to milli-units."""
    status = _object(node, "status")
    if status is None:
        return
    capacity = status.get("capacity")
    if isinstance(capacity, dict) and capacity and status.get("allocatable") is None:
        status["allocatable"] = copy.deepcopy(capacity)
    default_resource_list(status, "capacity")
    default_resource_list(status, "allocatable")


class NodeStrategy(CoreStrategy):
    """Nodes: stored as sent, with their status defaulted on every write (a create takes the whole object; an
    update of the main endpoint keeps the stored status, one of ``nodes/status`` takes the sent one)."""

    def decode_defaults(self, obj: Obj, sub: str) -> None:
        default_node(obj)


NODES = NodeStrategy()
