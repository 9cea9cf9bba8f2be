"""core/v1 Service rules of kube-apiserver (pkg/apis/core/validation: ValidateService, ValidateServiceUpdate and
ValidateServiceClusterIPsRelatedFields), on the Service as stored (its JSON, defaulted and with its cluster IPs
allocated, as upstream validates after the registry's allocation).

Only the rules that decide what a Service means to a client of ``dralloc serve`` are here: its type, its ports
(names, numbers, protocols, target ports, node ports), its selector, its session affinity, its cluster IPs and
IP families, its traffic policies; an update may not change its cluster IPs.
"""

from __future__ import annotations

import re
from typing import Any

from dralloc.validation import field as f
from dralloc.validation import ips
from dralloc.validation.formats import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    max_len_error,
    regex_error,
)
from dralloc.validation.meta import validate_labels

Obj = dict[str, Any]

CLUSTER_IP = "ClusterIP"
NODE_PORT = "NodePort"
LOAD_BALANCER = "LoadBalancer"
EXTERNAL_NAME = "ExternalName"
NONE = "None"  # a headless Service's clusterIP
TYPES = [CLUSTER_IP, EXTERNAL_NAME, LOAD_BALANCER, NODE_PORT]  # sorted, as upstream lists them
SESSION_AFFINITIES = ["ClientIP", "None"]
PROTOCOLS = ["SCTP", "TCP", "UDP"]
TRAFFIC_POLICIES = ["Cluster", "Local"]
IP_FAMILIES = ["IPv4", "IPv6"]
IP_FAMILY_POLICIES = ["PreferDualStack", "RequireDualStack", "SingleStack"]
PORT_RANGE = "must be between 1 and 65535, inclusive"

_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035 = re.compile(_DNS1035_FMT)
_DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                "alphabetic character, and end with an alphanumeric character")
_PORT_NAME_CHARS = re.compile("[-a-z0-9]+")


def is_dns1035_label(value: str) -> list[str]:
    """IsDNS1035Label: what a Service's name must be."""
    errs = [max_len_error(63)] if len(value) > 63 else []
    if not _DNS1035.fullmatch(value):
        errs.append(regex_error(_DNS1035_MSG, _DNS1035_FMT, "my-name", "abc-123"))
    return errs


def service_name_errors(name: str, prefix: bool) -> list[str]:
    """ValidateServiceName (a generateName prefix may end in '-')."""
    if prefix and len(name) > 1 and name.endswith("-"):
        name = name[:-1] + "a"
    return is_dns1035_label(name)


def is_valid_port_name(name: str) -> list[str]:
    """IsValidPortName: an IANA service name."""
    errs = [max_len_error(15)] if len(name) > 15 else []
    if not _PORT_NAME_CHARS.fullmatch(name):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    elif not re.search("[a-z]", name):
        errs.append("must contain at least one letter (a-z)")
    if "--" in name:
        errs.append("must not contain consecutive hyphens")
    if name and (name[0] == "-" or name[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def _port_number(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _valid_port(value: int) -> bool:
    return 1 <= value <= 65535


def is_headless(svc: Obj) -> bool:
    cluster_ips = (svc.get("spec") or {}).get("clusterIPs") or []
    return len(cluster_ips) == 1 and cluster_ips[0] == NONE


def externally_accessible(spec: Obj) -> bool:
    """ExternallyAccessible: reachable from outside the cluster (its external traffic policy applies)."""
    kind = spec.get("type")
    return kind in (LOAD_BALANCER, NODE_PORT) or (kind == CLUSTER_IP and bool(spec.get("externalIPs")))


def needs_health_check(spec: Obj) -> bool:
    return spec.get("type") == LOAD_BALANCER and spec.get("externalTrafficPolicy") == "Local"


def ports_of(spec: Obj) -> list[Obj]:
    listed = spec.get("ports")
    return [p if isinstance(p, dict) else {} for p in listed] if isinstance(listed, list) else []


def _go_service_port(protocol: Any, port: int) -> dict[str, Any]:
    """The internal core.ServicePort key upstream's duplicate-port error prints (no JSON tags: Go's names)."""
    return {"Name": "", "Protocol": protocol, "AppProtocol": None, "Port": port, "TargetPort": 0, "NodePort": 0}


def _port_errors(port: Obj, require_name: bool, names: set[str], path: str) -> list[f.FieldError]:
    """validateServicePort."""
    errs: list[f.FieldError] = []
    name = port.get("name") or ""
    if require_name and not name:
        errs.append(f.required(f.child(path, "name")))
    elif name:
        errs += [f.invalid(f.child(path, "name"), name, m) for m in is_dns1123_label(name)]
        if name in names:
            errs.append(f.duplicate(f.child(path, "name"), name))
        names.add(name)
    number = _port_number(port.get("port"))
    if not _valid_port(number):
        errs.append(f.invalid(f.child(path, "port"), number, PORT_RANGE))
    protocol = port.get("protocol") or ""
    if not protocol:
        errs.append(f.required(f.child(path, "protocol")))
    elif protocol not in PROTOCOLS:
        errs.append(f.not_supported(f.child(path, "protocol"), protocol, PROTOCOLS))
    target = port.get("targetPort")
    if isinstance(target, str):
        errs += [f.invalid(f.child(path, "targetPort"), target, m) for m in is_valid_port_name(target)]
    elif not _valid_port(_port_number(target)):
        errs.append(f.invalid(f.child(path, "targetPort"), _port_number(target), PORT_RANGE))
    app_protocol = port.get("appProtocol")
    if isinstance(app_protocol, str):
        errs += [f.invalid(f.child(path, "appProtocol"), app_protocol, m) for m in is_qualified_name(app_protocol)]
    return errs


def cluster_ip_errors(svc: Obj) -> list[f.FieldError]:
    """ValidateServiceClusterIPsRelatedFields: clusterIP and clusterIPs agree, the IPs are IPs (``None`` only
    alone), at most one per family, the families and the policy known values."""
    spec = svc.get("spec") or {}
    if spec.get("type") == EXTERNAL_NAME:
        return []
    errs: list[f.FieldError] = []
    cluster_ip = spec.get("clusterIP") or ""
    cluster_ips = [str(ip) for ip in spec.get("clusterIPs") or []]
    path = "spec.clusterIPs"
    if cluster_ip:
        if not cluster_ips:
            errs.append(f.required(path))
        elif cluster_ips[0] != cluster_ip:
            errs.append(f.invalid(path, cluster_ips, "first value must match `clusterIP`"))
    elif cluster_ips:
        errs.append(f.invalid(path, cluster_ips, "must be empty when `clusterIP` is not specified"))
    families = [str(x) for x in spec.get("ipFamilies") or []]
    for i, family in enumerate(families):
        if family not in IP_FAMILIES:
            errs.append(f.not_supported(f.index("spec.ipFamilies", i), family, IP_FAMILIES))
        if family in families[:i]:
            errs.append(f.duplicate(f.index("spec.ipFamilies", i), family))
    policy = spec.get("ipFamilyPolicy")
    if policy is not None and policy not in IP_FAMILY_POLICIES:
        errs.append(f.not_supported("spec.ipFamilyPolicy", policy, IP_FAMILY_POLICIES))
    bad_ips = False
    for i, ip in enumerate(cluster_ips):
        if i == 0 and ip == NONE:
            if len(cluster_ips) > 1:
                bad_ips = True
                errs.append(f.invalid(path, cluster_ips, "'None' must be the first and only value"))
            continue
        problems = ips.legacy_ip_errors(f.index(path, i), ip)
        bad_ips = bad_ips or bool(problems)
        errs += problems
    if len(cluster_ips) > 2:
        errs.append(f.invalid(path, cluster_ips, "may only hold up to 2 values"))
    if bad_ips:
        return errs
    if len(cluster_ips) > 1 and not ips.dual_stack(cluster_ips)[0]:
        errs.append(f.invalid(path, cluster_ips, "may specify no more than one IP for each IP family"))
    if not is_headless(svc):
        for i, ip in enumerate(cluster_ips[:len(families)]):
            v6 = ":" in ip
            if families[i] == "IPv4" and v6:
                errs.append(f.invalid(f.index(path, i), ip, f"expected an IPv4 value as indicated by `ipFamilies[{i}]`"))
            if families[i] == "IPv6" and not v6:
                errs.append(f.invalid(f.index(path, i), ip, f"expected an IPv6 value as indicated by `ipFamilies[{i}]`"))
    return errs


def service_errors(svc: Obj) -> list[f.FieldError]:
    """ValidateService's rules of the spec (the metadata's are the caller's), in upstream's order."""
    spec = svc.get("spec") or {}
    kind = spec.get("type") or ""
    ports = ports_of(spec)
    headless = is_headless(svc)
    errs: list[f.FieldError] = []
    if not ports and not headless and kind != EXTERNAL_NAME:
        errs.append(f.required("spec.ports"))
    cluster_ips = spec.get("clusterIPs") or []
    if kind in (LOAD_BALANCER, NODE_PORT) and headless:
        errs.append(f.invalid("spec.clusterIPs[0]", cluster_ips[0],
                              f"may not be set to 'None' for {kind} services"))
    elif kind == EXTERNAL_NAME:
        if cluster_ips:
            errs.append(f.forbidden("spec.clusterIPs", "may not be set for ExternalName services"))
        if spec.get("ipFamilies"):
            errs.append(f.forbidden("spec.ipFamilies", "may not be set for ExternalName services"))
        if spec.get("ipFamilyPolicy") is not None:
            errs.append(f.forbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services"))
        cname = str(spec.get("externalName") or "").removesuffix(".")
        if cname:
            errs += [f.invalid("spec.externalName", cname, m) for m in is_dns1123_subdomain(cname)]
        else:
            errs.append(f.required("spec.externalName"))
    names: set[str] = set()
    for i, port in enumerate(ports):
        errs += _port_errors(port, len(ports) > 1, names, f.index("spec.ports", i))
    if spec.get("selector") is not None:
        errs += validate_labels(spec.get("selector"), "spec.selector")
    affinity = spec.get("sessionAffinity") or ""
    if not affinity:
        errs.append(f.required("spec.sessionAffinity"))
    elif affinity not in SESSION_AFFINITIES:
        errs.append(f.not_supported("spec.sessionAffinity", affinity, SESSION_AFFINITIES))
    if affinity == "None" and spec.get("sessionAffinityConfig") is not None:
        errs.append(f.forbidden("spec.sessionAffinityConfig", "must not be set when session affinity is None"))
    errs += cluster_ip_errors(svc)
    for i, ip in enumerate(spec.get("externalIPs") or []):
        errs += ips.legacy_ip_errors(f.index("spec.externalIPs", i), str(ip))
    if not kind:
        errs.append(f.required("spec.type"))
    elif kind not in TYPES:
        errs.append(f.not_supported("spec.type", kind, TYPES))
    if kind == CLUSTER_IP:
        for i, port in enumerate(ports):
            if _port_number(port.get("nodePort")):
                errs.append(f.forbidden(f.child(f.index("spec.ports", i), "nodePort"),
                                        "may not be used when `type` is 'ClusterIP'"))
    node_ports: set[tuple[Any, int]] = set()
    for i, port in enumerate(ports):
        node_port = _port_number(port.get("nodePort"))
        if not node_port:
            continue
        if (port.get("protocol"), node_port) in node_ports:
            errs.append(f.duplicate(f.child(f.index("spec.ports", i), "nodePort"), node_port))
        node_ports.add((port.get("protocol"), node_port))
    seen: set[tuple[Any, int]] = set()
    for i, port in enumerate(ports):
        key = (port.get("protocol"), _port_number(port.get("port")))
        if key in seen:
            errs.append(f.duplicate(f.index("spec.ports", i), _go_service_port(*key)))
        seen.add(key)
    if spec.get("allocateLoadBalancerNodePorts") is not None and kind != LOAD_BALANCER:
        errs.append(f.forbidden("spec.allocateLoadBalancerNodePorts", "may only be used when `type` is 'LoadBalancer'"))
    errs += _traffic_policy_errors(spec)
    return errs


def _traffic_policy_errors(spec: Obj) -> list[f.FieldError]:
    """validateServiceExternalTrafficPolicy and validateServiceInternalTrafficFieldsValue."""
    errs: list[f.FieldError] = []
    external = spec.get("externalTrafficPolicy") or ""
    if not externally_accessible(spec):
        if external:
            errs.append(f.invalid("spec.externalTrafficPolicy", external,
                                  "may only be set for externally-accessible services"))
    elif not external:
        errs.append(f.required("spec.externalTrafficPolicy"))
    elif external not in TRAFFIC_POLICIES:
        errs.append(f.not_supported("spec.externalTrafficPolicy", external, TRAFFIC_POLICIES))
    health = _port_number(spec.get("healthCheckNodePort"))
    if not needs_health_check(spec):
        if health:
            errs.append(f.invalid("spec.healthCheckNodePort", health,
                                  "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is "
                                  "'Local'"))
    internal = spec.get("internalTrafficPolicy")
    if internal is None:
        if spec.get("type") in (NODE_PORT, LOAD_BALANCER, CLUSTER_IP):
            errs.append(f.required("spec.internalTrafficPolicy"))
    elif internal not in TRAFFIC_POLICIES:
        errs.append(f.not_supported("spec.internalTrafficPolicy", internal, TRAFFIC_POLICIES))
    return errs


def service_update_errors(new: Obj, old: Obj) -> list[f.FieldError]:
    """ValidateServiceUpdate's own rules (validateUpgradeDowngradeClusterIPs, single-stack here): the primary
    cluster IP may not change nor be unset, except to, from or as an ExternalName Service, or headless both
    times."""
    new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    if EXTERNAL_NAME in (new_spec.get("type"), old_spec.get("type")):
        return []
    if is_headless(new) and is_headless(old):
        return []
    new_ips = list(new_spec.get("clusterIPs") or [])
    old_ips = list(old_spec.get("clusterIPs") or [])
    path = "spec.clusterIPs"
    if len(old_ips) == len(new_ips):
        return [f.invalid(f.index(path, i), new_ips, "may not change once set")
                for i, ip in enumerate(old_ips) if ip != new_ips[i]]
    if len(old_ips) > len(new_ips):
        if not new_ips:
            return [f.invalid(f.index(path, 0), new_ips, "primary clusterIP can not be unset")]
        if new_ips[0] != old_ips[0]:
            return [f.invalid(f.index(path, 0), new_ips, "may not change once set")]
        return []
    if old_ips and new_ips[0] != old_ips[0]:
        return [f.invalid(f.index(path, 0), new_ips, "may not change once set")]
    return []
