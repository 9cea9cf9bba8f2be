"""networking.k8s.io/v1 rules of kube-apiserver (pkg/apis/networking/validation), with upstream's field paths and
texts: an Ingress's rules, paths and path types, backends (a service or a resource, not both) and TLS hosts;
an IngressClass's controller and parameters; a NetworkPolicy's ports, peers, ipBlock CIDRs and policy types.
Updates ratchet what upstream ratchets: TLS secret names, wildcard-host rules and ipBlock CIDRs the old object
already had."""

from __future__ import annotations

import re

from dralloc.api.meta import LabelSelector
from dralloc.api.networking_v1 import (
    INGRESS_CLASS_ANNOTATION,
    PATH_TYPES,
    POLICY_EGRESS,
    POLICY_INGRESS,
    SCOPE_CLUSTER,
    SCOPE_NAMESPACE,
    HTTPIngressPath,
    IngressBackend,
    IngressClass,
    IngressClassParametersReference,
    IngressRule,
    IngressSpec,
    IPBlock,
    NetworkPolicy,
    NetworkPolicyPeer,
    NetworkPolicyPort,
    TypedLocalObjectReference,
)
from dralloc.validation import field as f
from dralloc.validation.cidrs import legacy_cidr_errors, parse_cidr
from dralloc.validation.formats import DNS1123_SUBDOMAIN_MAX, is_dns1123_subdomain, max_len_error, regex_error
from dralloc.validation.ips import legacy_ip_errors
from dralloc.validation.ips import parse as parse_ip
from dralloc.validation.meta import label_selector_errors, name_is_dns_label, name_is_dns_subdomain
from dralloc.validation.podgroups import kind_and_name_errors, path_segment_problems
from dralloc.validation.service import PORT_RANGE, is_valid_port_name, service_name_errors

PROTOCOLS = ["TCP", "UDP", "SCTP"]
MAX_CONTROLLER_LENGTH = 250
_INVALID_PATH_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
_INVALID_PATH_SUFFIXES = ("/..", "/.")
_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_WILDCARD_FMT = "\\*\\." + _LABEL + "(\\." + _LABEL + ")*"
_WILDCARD = re.compile(_WILDCARD_FMT)
_WILDCARD_MSG = ("a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must "
                 "consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character")
_HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+"
_HTTP_PATH = re.compile(_HTTP_PATH_FMT)


def is_wildcard_dns1123_subdomain(value: str) -> list[str]:
    """IsWildcardDNS1123Subdomain: ``*.`` then a DNS subdomain."""
    errs = [max_len_error(DNS1123_SUBDOMAIN_MAX)] if len(value) > DNS1123_SUBDOMAIN_MAX else []
    if not _WILDCARD.fullmatch(value):
        errs.append(regex_error(_WILDCARD_MSG, _WILDCARD_FMT, "*.example.com"))
    return errs


def domain_prefixed_path_errors(path: str, value: str) -> list[f.FieldError]:
    """IsDomainPrefixedPath: ``<DNS subdomain>/<HTTP path>`` (an IngressClass's controller)."""
    if not value:
        return [f.required(path)]
    host, slash, rest = value.partition("/")
    if not slash or not host or not rest:
        return [f.invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    errs = [f.invalid(path, host, m) for m in is_dns1123_subdomain(host)]
    if not _HTTP_PATH.fullmatch(rest):
        errs.append(f.invalid(path, rest, regex_error("Invalid path", _HTTP_PATH_FMT)))
    return errs


def _port_number_errors(path: str, value: int) -> list[f.FieldError]:
    return [] if 1 <= value <= 65535 else [f.invalid(path, value, PORT_RANGE)]


# --- Ingress ------------------------------------------------------------------------------------------------


def _typed_reference_errors(ref: TypedLocalObjectReference, path: str) -> list[f.FieldError]:
    """validateIngressTypedLocalObjectReference: a resource backend's apiGroup, kind and name."""
    errs: list[f.FieldError] = []
    if ref.api_group is not None:
        errs += [f.invalid(f.child(path, "apiGroup"), ref.api_group, m) for m in is_dns1123_subdomain(ref.api_group)]
    return errs + kind_and_name_errors(ref.kind, ref.name, path)


def _backend_errors(backend: IngressBackend, path: str, relaxed_service_names: bool) -> list[f.FieldError]:
    """validateIngressBackend: a service (name and port name or number) or a resource, exactly one."""
    if backend.resource is not None and backend.service is not None:
        return [f.invalid(path, "", "cannot set both resource and service backends")]
    if backend.resource is not None:
        return _typed_reference_errors(backend.resource, f.child(path, "resource"))
    service = backend.service
    if service is None:
        return [f.invalid(path, "", "resource or service backend is required")]
    errs: list[f.FieldError] = []
    name_path = f.child(f.child(path, "service"), "name")
    if not service.name:
        errs.append(f.required(name_path))
    else:
        check = name_is_dns_label if relaxed_service_names else service_name_errors
        errs += [f.invalid(name_path, service.name, m) for m in check(service.name, False)]
    port_path = f.child(f.child(path, "service"), "port")
    port_name, port_number = service.port.name or "", service.port.number or 0
    if port_name and port_number:
        errs.append(f.invalid(path, "", "cannot set both port name & port number"))
    elif port_name:
        errs += [f.invalid(f.child(port_path, "name"), port_name, m) for m in is_valid_port_name(port_name)]
    elif port_number:
        errs += _port_number_errors(f.child(port_path, "number"), port_number)
    else:
        errs.append(f.required(path, "port name or number is required"))
    return errs


def _http_path_errors(p: HTTPIngressPath, path: str, relaxed: bool) -> list[f.FieldError]:
    """validateHTTPIngressPath: a path type, an absolute path without dot segments for Exact and Prefix."""
    if p.path_type is None:
        return [f.required(f.child(path, "pathType"), "pathType must be specified")]
    errs: list[f.FieldError] = []
    value, where = p.path or "", f.child(path, "path")
    if p.path_type in ("Exact", "Prefix"):
        if not value.startswith("/"):
            errs.append(f.invalid(where, value, "must be an absolute path"))
        if value:
            errs += [f.invalid(where, value, f"must not contain '{seq}'")
                     for seq in _INVALID_PATH_SEQUENCES if seq in value]
            errs += [f.invalid(where, value, f"cannot end with '{suffix}'")
                     for suffix in _INVALID_PATH_SUFFIXES if value.endswith(suffix)]
    elif p.path_type == "ImplementationSpecific":
        if value and not value.startswith("/"):
            errs.append(f.invalid(where, value, "must be an absolute path"))
    else:
        errs.append(f.not_supported(f.child(path, "pathType"), p.path_type, list(PATH_TYPES)))
    return errs + _backend_errors(p.backend, f.child(path, "backend"), relaxed)


def _rule_value_errors(rule: IngressRule, path: str, relaxed: bool) -> list[f.FieldError]:
    if rule.http is None:
        return []
    where = f.child(path, "http")
    errs = [] if rule.http.paths else [f.required(f.child(where, "paths"))]
    for i, p in enumerate(rule.http.paths or ()):
        errs += _http_path_errors(p, f.index(f.child(where, "paths"), i), relaxed)
    return errs


def _rules_errors(rules: list[IngressRule], path: str, allow_wildcard_rules: bool,
                  relaxed: bool) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    for i, rule in enumerate(rules):
        where, host = f.index(path, i), rule.host or ""
        wildcard = False
        if host:
            if parse_ip(host) is not None:
                errs.append(f.invalid(f.child(where, "host"), host, "must be a DNS name, not an IP address"))
            if "*" in host:
                errs += [f.invalid(f.child(where, "host"), host, m) for m in is_wildcard_dns1123_subdomain(host)]
                wildcard = True
            else:
                errs += [f.invalid(f.child(where, "host"), host, m) for m in is_dns1123_subdomain(host)]
        if not wildcard or not allow_wildcard_rules:
            errs += _rule_value_errors(rule, where, relaxed)
    return errs


def _tls_errors(spec: IngressSpec, path: str, allow_invalid_secret_names: bool) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    for t, tls in enumerate(spec.tls or ()):
        where = f.index(path, t)
        for i, host in enumerate(tls.hosts or ()):
            check = is_wildcard_dns1123_subdomain if "*" in host else is_dns1123_subdomain
            errs += [f.invalid(f.index(f.child(where, "hosts"), i), host, m) for m in check(host)]
        if not allow_invalid_secret_names and tls.secret_name:
            errs += [f.invalid(f.child(where, "secretName"), tls.secret_name, m)
                     for m in name_is_dns_subdomain(tls.secret_name, False)]
    return errs


def ingress_spec_errors(spec: IngressSpec, *, allow_invalid_secret_names: bool = False,
                        allow_wildcard_rules: bool = False, relaxed_service_names: bool = False) -> list[f.FieldError]:
    """ValidateIngressSpec (with the update's ratcheting options)."""
    errs: list[f.FieldError] = []
    if not spec.rules and spec.default_backend is None:
        errs.append(f.invalid("spec", spec.rules, "either `defaultBackend` or `rules` must be specified"))
    if spec.default_backend is not None:
        errs += _backend_errors(spec.default_backend, "spec.defaultBackend", relaxed_service_names)
    if spec.rules:
        errs += _rules_errors(spec.rules, "spec.rules", allow_wildcard_rules, relaxed_service_names)
    if spec.tls:
        errs += _tls_errors(spec, "spec.tls", allow_invalid_secret_names)
    if spec.ingress_class_name is not None:
        errs += [f.invalid("spec.ingressClassName", spec.ingress_class_name, m)
                 for m in name_is_dns_subdomain(spec.ingress_class_name, False)]
    return errs


def ingress_create_errors(spec: IngressSpec, annotations: dict[str, str] | None) -> list[f.FieldError]:
    """ValidateIngressCreate's own rules (the metadata is checked by the caller): the spec, and the class
    annotation agreeing with ``ingressClassName``."""
    errs = ingress_spec_errors(spec)
    annotation = (annotations or {}).get(INGRESS_CLASS_ANNOTATION)
    if annotation is not None and spec.ingress_class_name is not None and annotation != spec.ingress_class_name:
        errs.append(f.invalid(f"annotations.{INGRESS_CLASS_ANNOTATION}", annotation,
                              "must match `ingressClassName` when both are specified"))
    return errs


def _relaxed_names_in(old: IngressSpec) -> bool:
    """allowRelaxedServiceNameValidation of an update: the old Ingress names a service that is a DNS label but
    not a DNS-1035 one (the RelaxedServiceNameValidation gate is off by default)."""
    backends = [old.default_backend] if old.default_backend is not None else []
    backends += [p.backend for rule in old.rules or () if rule.http for p in rule.http.paths or ()]
    return any(b.service is not None and not name_is_dns_label(b.service.name, False)
               and service_name_errors(b.service.name, False) for b in backends)


def ingress_update_errors(spec: IngressSpec, old: IngressSpec) -> list[f.FieldError]:
    """ValidateIngressUpdate's spec rules, ratcheting the old Ingress's invalid secret names and wildcard rules."""
    invalid_secrets = any(t.secret_name and name_is_dns_subdomain(t.secret_name, False) for t in old.tls or ())
    invalid_wildcards = any("*" in (r.host or "") and _rule_value_errors(r, "", False) for r in old.rules or ())
    return ingress_spec_errors(spec, allow_invalid_secret_names=invalid_secrets,
                               allow_wildcard_rules=invalid_wildcards, relaxed_service_names=_relaxed_names_in(old))


def ingress_status_errors(new: list[tuple[str | None, str | None]],
                          old: list[tuple[str | None, str | None]]) -> list[f.FieldError]:
    """ValidateIngressLoadBalancerStatus over the (ip, hostname) of each ``status.loadBalancer.ingress``."""
    existing = [ip for ip, _ in old if ip]
    errs: list[f.FieldError] = []
    for i, (ip, hostname) in enumerate(new):
        where = f.index("status.loadBalancer.ingress", i)
        if ip:
            errs += legacy_ip_errors(f.child(where, "ip"), ip, existing)
        if hostname:
            errs += [f.invalid(f.child(where, "hostname"), hostname, m) for m in is_dns1123_subdomain(hostname)]
            if parse_ip(hostname) is not None:
                errs.append(f.invalid(f.child(where, "hostname"), hostname, "must be a DNS name, not an IP address"))
    return errs


# --- IngressClass -------------------------------------------------------------------------------------------


def _parameters_errors(params: IngressClassParametersReference | None, path: str) -> list[f.FieldError]:
    """validateIngressClassParametersReference."""
    if params is None:
        return []
    errs: list[f.FieldError] = []
    if params.api_group is not None:
        errs += [f.invalid(f.child(path, "apiGroup"), params.api_group, m)
                 for m in is_dns1123_subdomain(params.api_group)]
    for name, value in (("kind", params.kind), ("name", params.name)):
        if not value:
            errs.append(f.required(f.child(path, name)))
        else:
            errs += [f.invalid(f.child(path, name), value, m) for m in path_segment_problems(value)]
    if params.scope is None:
        return errs + [f.required(f.child(path, "scope"))]
    if params.scope not in (SCOPE_CLUSTER, SCOPE_NAMESPACE):
        return errs + [f.not_supported(f.child(path, "scope"), params.scope, [SCOPE_CLUSTER, SCOPE_NAMESPACE])]
    where = f.child(path, "namespace")
    if params.scope == SCOPE_NAMESPACE:
        if params.namespace is None:
            errs.append(f.required(where, "`parameters.scope` is set to 'Namespace'"))
        else:
            errs += [f.invalid(where, params.namespace, m) for m in name_is_dns_label(params.namespace, False)]
    elif params.namespace is not None:
        errs.append(f.forbidden(where, "`parameters.scope` is set to 'Cluster'"))
    return errs


def ingress_class_errors(ingress_class: IngressClass) -> list[f.FieldError]:
    """validateIngressClassSpec: a domain-prefixed controller of at most 250 bytes, and the parameters."""
    controller = ingress_class.spec.controller or ""
    errs: list[f.FieldError] = []
    if not controller:
        errs.append(f.required("spec.controller"))
    else:
        if len(controller.encode()) > MAX_CONTROLLER_LENGTH:
            errs.append(f.too_long("spec.controller", MAX_CONTROLLER_LENGTH))
        errs += domain_prefixed_path_errors("spec.controller", controller)
    return errs + _parameters_errors(ingress_class.spec.parameters, "spec.parameters")


def ingress_class_update_errors(new: IngressClass, old: IngressClass) -> list[f.FieldError]:
    """validateIngressClassSpecUpdate: the controller never changes."""
    if (new.spec.controller or "") != (old.spec.controller or ""):
        return [f.invalid("spec.controller", new.spec.controller or "", "field is immutable")]
    return []


# --- NetworkPolicy ------------------------------------------------------------------------------------------


def _policy_port_errors(port: NetworkPolicyPort, path: str) -> list[f.FieldError]:
    """ValidateNetworkPolicyPort."""
    errs: list[f.FieldError] = []
    if port.protocol is not None and port.protocol not in PROTOCOLS:
        errs.append(f.not_supported(f.child(path, "protocol"), port.protocol, PROTOCOLS))
    end_path = f.child(path, "endPort")
    if port.port is None:
        if port.end_port is not None:
            errs.append(f.invalid(end_path, port.end_port, "may not be specified when `port` is not specified"))
    elif isinstance(port.port, int):
        errs += _port_number_errors(f.child(path, "port"), port.port)
        if port.end_port is not None:
            if port.end_port < port.port:
                errs.append(f.invalid(end_path, port.end_port, "must be greater than or equal to `port`"))
            errs += _port_number_errors(end_path, port.end_port)
    else:
        if port.end_port is not None:
            errs.append(f.invalid(end_path, port.end_port, "may not be specified when `port` is non-numeric"))
        errs += [f.invalid(f.child(path, "port"), port.port, m) for m in is_valid_port_name(port.port)]
    return errs


def _ip_block_errors(block: IPBlock, path: str, existing: list[str]) -> list[f.FieldError]:
    """ValidateIPBlock: a CIDR, and exceptions that are strict subsets of it."""
    if not block.cidr:
        return [f.required(f.child(path, "cidr"))]
    errs = legacy_cidr_errors(f.child(path, "cidr"), block.cidr, existing)
    network = parse_cidr(block.cidr)
    if network is None:
        return errs
    for i, text in enumerate(block.except_ or ()):
        where = f.index(f.child(path, "except"), i)
        errs += legacy_cidr_errors(where, text, existing)
        excepted = parse_cidr(text)
        if excepted is None:
            continue
        if not network.contains(excepted) or network.prefix >= excepted.prefix:
            errs.append(f.invalid(where, text, "must be a strict subset of `cidr`"))
    return errs


def _peer_errors(peer: NetworkPolicyPeer, path: str, existing: list[str]) -> list[f.FieldError]:
    """ValidateNetworkPolicyPeer: at least one peer, and an ipBlock alone."""
    errs: list[f.FieldError] = []
    count = 0
    if peer.pod_selector is not None:
        count += 1
        errs += label_selector_errors(peer.pod_selector, f.child(path, "podSelector"))
    if peer.namespace_selector is not None:
        count += 1
        errs += label_selector_errors(peer.namespace_selector, f.child(path, "namespaceSelector"))
    if peer.ip_block is not None:
        count += 1
        errs += _ip_block_errors(peer.ip_block, f.child(path, "ipBlock"), existing)
    if count == 0:
        errs.append(f.required(path, "must specify a peer"))
    elif count > 1 and peer.ip_block is not None:
        errs.append(f.forbidden(path, "may not specify both ipBlock and another peer"))
    return errs


def _existing_cidrs(old: NetworkPolicy | None) -> list[str]:
    """Every CIDR of the old policy's peers: an update may keep them whatever they are."""
    if old is None:
        return []
    peers = [p for rule in old.spec.ingress or () for p in rule.from_ or ()]
    peers += [p for rule in old.spec.egress or () for p in rule.to or ()]
    return [c for p in peers if p.ip_block is not None for c in (p.ip_block.cidr, *(p.ip_block.except_ or ()))]


def network_policy_spec_errors(policy: NetworkPolicy, old: NetworkPolicy | None = None) -> list[f.FieldError]:
    """ValidateNetworkPolicySpec (with an update's CIDR ratcheting when ``old`` is given)."""
    spec, existing = policy.spec, _existing_cidrs(old)
    errs = label_selector_errors(spec.pod_selector or LabelSelector(), "spec.podSelector")
    directions = [("ingress", "from", [(r.ports, r.from_) for r in spec.ingress or ()]),
                  ("egress", "to", [(r.ports, r.to) for r in spec.egress or ()])]
    for direction, peers_name, rules in directions:
        for i, (ports, peers) in enumerate(rules):
            where = f.index(f.child("spec", direction), i)
            for j, port in enumerate(ports or ()):
                errs += _policy_port_errors(port, f.index(f.child(where, "ports"), j))
            for j, peer in enumerate(peers or ()):
                errs += _peer_errors(peer, f.index(f.child(where, peers_name), j), existing)
    types = spec.policy_types or []
    if len(types) > 2:
        return errs + [f.invalid("spec.policyTypes", types, "may not specify more than two policyTypes")]
    for i, kind in enumerate(types):
        if kind not in (POLICY_INGRESS, POLICY_EGRESS):
            errs.append(f.not_supported(f.index("spec.policyTypes", i), kind, [POLICY_INGRESS, POLICY_EGRESS]))
    return errs
