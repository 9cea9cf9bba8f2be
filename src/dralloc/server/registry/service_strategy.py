"""The core/v1 Service strategy, as kube-apiserver's registry writes a Service (pkg/registry/core/service):

* decoding's defaults (pkg/apis/core/v1/defaults.go): type ClusterIP, sessionAffinity None (ClientIP gets its
  10800 s timeout), each port's protocol TCP and targetPort its port, internalTrafficPolicy Cluster,
  externalTrafficPolicy Cluster when the Service is reachable from outside, allocateLoadBalancerNodePorts true
  for a LoadBalancer;
* the strategy's normalisation: ``clusterIP`` and ``clusterIPs[0]`` kept equal; on update, what the client
  left out that the registry allocated (cluster IPs, families, node ports by port name) is kept, and what a
  new type does not use (node ports, cluster IPs) is dropped;
* the allocators (``service_network``): the IP family fields (SingleStack IPv4 or IPv6, as the range), the
  cluster IP (none for a headless or ExternalName Service) and the node ports of a NodePort or LoadBalancer
  Service, with upstream's 422 when a requested one is taken or out of range;
* validation (``dralloc.validation.service``), the update's immutable cluster IP included.

The allocation happens once the Service is valid, just before it is written.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable
from typing import Any

from dralloc.server.http.errors import ApiError
from dralloc.server.registry.service_network import AllocationError, ServiceNetwork, network_of
from dralloc.server.registry.strategy import CoreStrategy, Server, managed_field_errors
from dralloc.server.types import Obj
from dralloc.store import SQLStore
from dralloc.validation import field as f
from dralloc.validation.meta import finalizers_added_while_deleting, validate_object_meta
from dralloc.validation.service import (
    CLUSTER_IP,
    EXTERNAL_NAME,
    LOAD_BALANCER,
    NODE_PORT,
    NONE,
    externally_accessible,
    ports_of,
    service_errors,
    service_name_errors,
    service_update_errors,
)

CLIENT_IP_TIMEOUT = 10800  # DefaultClientIPServiceAffinitySeconds


def _spec(svc: Obj) -> Obj:
    spec = svc.get("spec")
    if not isinstance(spec, dict):
        spec = svc["spec"] = {}
    return spec


def default_service(svc: Obj) -> None:
    """SetDefaults_Service, in place."""
    spec = _spec(svc)
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP":
        config = spec.get("sessionAffinityConfig")
        client_ip = config.get("clientIP") if isinstance(config, dict) else None
        if not isinstance(client_ip, dict) or client_ip.get("timeoutSeconds") is None:
            spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": CLIENT_IP_TIMEOUT}}
    if not spec.get("type"):
        spec["type"] = CLUSTER_IP
    if isinstance(spec.get("ports"), list):
        spec["ports"] = ports = [dict(p) if isinstance(p, dict) else p for p in spec["ports"]]
        for port in ports:
            if not isinstance(port, dict):
                continue
            if not port.get("protocol"):
                port["protocol"] = "TCP"
            if port.get("targetPort") in (None, 0, ""):
                port["targetPort"] = port.get("port")
    if externally_accessible(spec) and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if spec.get("internalTrafficPolicy") is None and spec["type"] in (NODE_PORT, LOAD_BALANCER, CLUSTER_IP):
        spec["internalTrafficPolicy"] = "Cluster"
    if spec["type"] == LOAD_BALANCER and spec.get("allocateLoadBalancerNodePorts") is None:
        spec["allocateLoadBalancerNodePorts"] = True


def normalize_cluster_ips(spec: Obj, old_spec: Obj | None) -> None:
    """normalizeClusterIPs: clusterIPs follows clusterIP when only that was written (or changed)."""
    cluster_ip = spec.get("clusterIP") or ""
    ips = spec.get("clusterIPs") or []
    if old_spec is None:
        if cluster_ip and not ips:
            spec["clusterIPs"] = [cluster_ip]
        return
    old_ip, old_ips = old_spec.get("clusterIP") or "", old_spec.get("clusterIPs") or []
    if cluster_ip != old_ip and ips == old_ips:
        if cluster_ip:
            spec["clusterIPs"] = [cluster_ip]
        else:
            spec.pop("clusterIPs", None)


def _needs_cluster_ip(spec: Obj) -> bool:
    return spec.get("type") != EXTERNAL_NAME and spec.get("clusterIP") != NONE


def _takes_node_ports(spec: Obj) -> bool:
    kind = spec.get("type")
    return kind == NODE_PORT or (kind == LOAD_BALANCER and spec.get("allocateLoadBalancerNodePorts") is not False)


def patch_allocated_values(spec: Obj, old_spec: Obj) -> None:
    """patchAllocatedValues: an update that leaves out what was allocated keeps it (a PUT of the manifest as
    first applied keeps the Service's address and node ports)."""
    if _needs_cluster_ip(old_spec) and _needs_cluster_ip(spec) and not spec.get("clusterIP"):
        for name in ("clusterIP", "clusterIPs"):
            if old_spec.get(name):
                spec[name] = copy.deepcopy(old_spec[name])
    if old_spec.get("type") != EXTERNAL_NAME and spec.get("type") != EXTERNAL_NAME:
        for name in ("ipFamilies", "ipFamilyPolicy"):
            if spec.get(name) is None and old_spec.get(name) is not None:
                spec[name] = copy.deepcopy(old_spec[name])
    if old_spec.get("type") in (NODE_PORT, LOAD_BALANCER) and spec.get("type") in (NODE_PORT, LOAD_BALANCER):
        new_ports, old_ports = ports_of(spec), ports_of(old_spec)
        used = {p.get("nodePort") for p in old_ports} & {p.get("nodePort") for p in new_ports}
        by_name = {p.get("name") or "": p.get("nodePort") for p in old_ports}
        for port in new_ports:
            if not port.get("nodePort") and by_name.get(port.get("name") or "") not in used:
                if by_name.get(port.get("name") or ""):
                    port["nodePort"] = by_name[port.get("name") or ""]
        if spec.get("healthCheckNodePort") is None and old_spec.get("healthCheckNodePort") is not None:
            spec["healthCheckNodePort"] = old_spec["healthCheckNodePort"]


def drop_type_dependent_fields(spec: Obj, old_spec: Obj) -> None:
    """dropTypeDependentFields: a type change drops what the new type has no use for, when the client left it
    as it was (cluster IPs and families going to ExternalName, node ports going to ClusterIP or
    ExternalName)."""
    if spec.get("type") == EXTERNAL_NAME and old_spec.get("type") != EXTERNAL_NAME:
        for name in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
            if spec.get(name) == old_spec.get(name):
                spec.pop(name, None)
    if spec.get("type") in (CLUSTER_IP, EXTERNAL_NAME) and old_spec.get("type") in (NODE_PORT, LOAD_BALANCER):
        old_node_ports = {(p.get("name") or "", p.get("nodePort")) for p in ports_of(old_spec)}
        for port in ports_of(spec):
            if (port.get("name") or "", port.get("nodePort")) in old_node_ports:
                port.pop("nodePort", None)
    if spec.get("type") != LOAD_BALANCER:
        if spec.get("allocateLoadBalancerNodePorts") == old_spec.get("allocateLoadBalancerNodePorts"):
            spec.pop("allocateLoadBalancerNodePorts", None)
        if spec.get("externalTrafficPolicy") == old_spec.get("externalTrafficPolicy") \
                and not externally_accessible(spec):
            spec.pop("externalTrafficPolicy", None)


def allocate(network: ServiceNetwork, store: SQLStore, svc: Obj, old: Obj | None) -> list[f.FieldError]:
    """The registry's allocation (initIPFamilyFields, the cluster IP, the node ports), in place; the errors of
    what was asked for and cannot be had. A dry run allocates the same: what it shows is what a create
    right after it would get."""
    spec = _spec(svc)
    meta = svc.get("metadata") or {}
    owner = f"{meta.get('namespace')}/{meta.get('name')}"
    old_spec = (old or {}).get("spec") or {}
    if spec.get("type") == EXTERNAL_NAME:
        return []
    family = "IPv6" if network.cidr.version == 6 else "IPv4"
    if spec.get("ipFamilyPolicy") is None:
        headless_selectorless = spec.get("clusterIP") == NONE and not spec.get("selector")
        spec["ipFamilyPolicy"] = "RequireDualStack" if headless_selectorless else "SingleStack"
    if not spec.get("ipFamilies"):
        spec["ipFamilies"] = [family]
    errs: list[f.FieldError] = []
    ips = list(spec.get("clusterIPs") or [])
    if spec.get("clusterIP") != NONE and (not ips or ips[0] != (old_spec.get("clusterIPs") or [None])[0]):
        requested = ips[0] if ips else None
        try:
            chosen = network.allocate_ip(store, requested, owner)
        except AllocationError as exc:
            if requested is None:
                raise internal_error(f"failed to allocate a serviceIP: {exc}") from None
            return [f.invalid("spec.clusterIPs", ips, f"failed to allocate IP {requested}: {exc}")]
        spec["clusterIP"] = chosen
        spec["clusterIPs"] = [chosen, *ips[1:]]
    if _takes_node_ports(spec) or any(p.get("nodePort") for p in ports_of(spec)):
        errs += _allocate_node_ports(network, store, spec, old_spec, owner)
    return errs


def _allocate_node_ports(network: ServiceNetwork, store: SQLStore, spec: Obj, old_spec: Obj,
                         owner: str) -> list[f.FieldError]:
    """initNodePorts / updateNodePorts: the node ports asked for first, then one for each port without (a port
    number served over two protocols shares one)."""
    held = {int(p["nodePort"]) for p in ports_of(old_spec) if isinstance(p.get("nodePort"), int)}
    ports = ports_of(spec)
    requested = [p["nodePort"] if isinstance(p.get("nodePort"), int) else 0 for p in ports]
    by_number: dict[Any, int] = {}  # port number -> its node port in this Service
    for i, port in enumerate(ports):
        node_port = requested[i]
        if not node_port:
            continue
        by_number.setdefault(port.get("port"), node_port)
        if node_port in held or node_port in requested[:i]:
            continue
        try:
            network.allocate_node_port(store, node_port, owner, own=held)
        except AllocationError as exc:
            return [f.invalid(f.child(f.index("spec.ports", i), "nodePort"), node_port, str(exc))]
    if not _takes_node_ports(spec):
        return []
    for port in ports:
        if port.get("nodePort"):
            continue
        given = by_number.get(port.get("port"))
        if given is None:
            try:
                given = network.allocate_node_port(store, 0, owner, own=held, avoid=[*requested, *by_number.values()])
            except AllocationError as exc:
                raise internal_error(f"failed to allocate a nodePort: {exc}") from None
            by_number[port.get("port")] = given
        port["nodePort"] = given
    return []


def internal_error(message: str) -> ApiError:
    """errors.NewInternalError: what a full range answers."""
    return ApiError(500, f"Internal error occurred: {message}", reason="InternalError",
                    details={"causes": [{"message": message}]})


class ServiceStrategy(CoreStrategy):
    def decode_defaults(self, obj: Obj, sub: str) -> None:
        if sub != "status":
            default_service(obj)  # (decoding's: the writer owns them)

    def prepare_for_create(self, stored: Obj) -> None:
        stored.pop("status", None)
        stored["status"] = {"loadBalancer": {}}
        normalize_cluster_ips(_spec(stored), None)

    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[f.FieldError]:
        errs = validate_object_meta(typed.metadata, True, service_name_errors, require_namespace=True)
        return errs + service_errors(stored or {})

    def create_admission_errors(self, store: SQLStore, namespace: str, name: str, stored: Obj) -> list[f.FieldError]:
        return allocate(network_of(store), store, stored, None)

    def after_create(self, server: Server, created: Obj) -> Awaitable[None] | None:
        meta = created.get("metadata") or {}
        network_of(server.store).release(f"{meta.get('namespace')}/{meta.get('name')}")
        return None

    def prepare_for_update(self, merged: Obj, old: Obj, sub: str) -> None:
        if sub == "status":
            return
        spec, old_spec = _spec(merged), old.get("spec") or {}
        patch_allocated_values(spec, old_spec)
        normalize_cluster_ips(spec, old_spec)
        drop_type_dependent_fields(spec, old_spec)

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[f.FieldError]:
        errs = finalizers_added_while_deleting(merged["metadata"], old["metadata"]) + managed_field_errors(merged)
        if sub == "status":
            return errs
        return service_update_errors(merged, old) + service_errors(merged) + errs

    def update_admission_errors(self, store: SQLStore, namespace: str, merged: Obj, old: Obj,
                                sub: str) -> list[f.FieldError]:
        return [] if sub == "status" else allocate(network_of(store), store, merged, old)


STRATEGY = ServiceStrategy()
