"""The networking.k8s.io/v1 strategies (pkg/registry/networking/{ingress,ingressclass,networkpolicy}): Ingresses
(with ``/status``), IngressClasses and NetworkPolicies are stored in their defaulted v1 form, keep
``metadata.generation`` (1 at create, one more whenever the spec changes), and are validated as
kube-apiserver validates them (``dralloc.validation.networking``). At an Ingress's create the
DefaultIngressClass admission gives one that names no class (no ``spec.ingressClassName``, no
``kubernetes.io/ingress.class`` annotation) the default class: the newest IngressClass annotated
``ingressclass.kubernetes.io/is-default-class: "true"`` (ties: by name). Nothing routes ingress traffic nor
enforces a policy. And the columns ``kubectl get`` prints for them."""

from __future__ import annotations

from typing import Any

from dralloc.api.codec import decode
from dralloc.api.networking_v1 import (
    INGRESS_CLASS_ANNOTATION,
    IS_DEFAULT_INGRESS_CLASS,
    POLICY_EGRESS,
    POLICY_INGRESS,
    SCOPE_CLUSTER,
    Ingress,
    IngressClass,
    NetworkPolicy,
)
from dralloc.server.registry.strategy import Strategy, managed_field_errors
from dralloc.server.registry.workload_columns import format_selector
from dralloc.server.types import Obj
from dralloc.store import SQLStore
from dralloc.store.cache import cached
from dralloc.validation import field as f
from dralloc.validation.meta import (
    finalizers_added_while_deleting,
    name_is_dns_subdomain,
    validate_object_meta,
    validate_object_meta_update,
)
from dralloc.validation.networking import (
    ingress_class_errors,
    ingress_class_update_errors,
    ingress_create_errors,
    ingress_status_errors,
    ingress_update_errors,
    network_policy_spec_errors,
)

INGRESS_CLASSES = "ingressclasses"


def _dict(value: Any) -> Obj | None:
    return value if isinstance(value, dict) else None


def default_ingress_class(classes: list[Obj]) -> str | None:
    """The DefaultIngressClass admission's class: of the classes annotated as the default, the newest (ties:
    the name first in order); None when there is none."""
    defaults = [c for c in classes
                if ((_dict(c.get("metadata")) or {}).get("annotations") or {}).get(IS_DEFAULT_INGRESS_CLASS) == "true"]
    if not defaults:
        return None
    defaults.sort(key=lambda c: str(c["metadata"].get("name") or ""))
    newest = max(defaults, key=lambda c: str(c["metadata"].get("creationTimestamp") or ""))
    return str(newest["metadata"].get("name") or "")


class _GenerationStrategy(Strategy):
    """A kind whose kube-apiserver strategy sets ``generation`` 1 at create and adds one when the spec changes
    (compared once decoding's defaults are in, so a body that leaves them out changes nothing)."""

    tracks_generation = True

    def prepare_for_update(self, merged: Obj, old: Obj, sub: str) -> None:
        generation = old["metadata"].get("generation", 1)
        merged["metadata"]["generation"] = generation + 1 if merged.get("spec") != old.get("spec") else generation

    def _update_common(self, merged: Obj, old: Obj) -> tuple[Any, Any, list[f.FieldError]]:
        errors = finalizers_added_while_deleting(merged["metadata"], old["metadata"]) + managed_field_errors(merged)
        new, previous = decode(merged), decode(old)
        return new, previous, validate_object_meta_update(new.metadata, previous.metadata) + errors


class IngressStrategy(_GenerationStrategy):
    def admit(self, store: SQLStore, sent: Obj, namespace: str) -> Obj:
        spec = _dict(sent.get("spec"))
        annotations = (_dict(sent.get("metadata")) or {}).get("annotations")
        if spec is None or spec.get("ingressClassName") is not None:
            return sent
        if isinstance(annotations, dict) and INGRESS_CLASS_ANNOTATION in annotations:
            return sent
        default = default_ingress_class(list(cached(store, INGRESS_CLASSES).objects().values()))
        return sent if default is None else {**sent, "spec": {**spec, "ingressClassName": default}}

    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[f.FieldError]:
        assert isinstance(typed, Ingress)
        return (validate_object_meta(typed.metadata, True, name_is_dns_subdomain, require_namespace=namespaced)
                + ingress_create_errors(typed.spec, typed.metadata.annotations))

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[f.FieldError]:
        new, previous, errors = self._update_common(merged, old)
        if sub == "status":
            return errors + ingress_status_errors(_addresses(new), _addresses(previous))
        return (errors + validate_object_meta(new.metadata, True, name_is_dns_subdomain)
                + ingress_update_errors(new.spec, previous.spec))


def _addresses(ingress: Ingress) -> list[tuple[str | None, str | None]]:
    """The (ip, hostname) of each of the Ingress's load balancer ingresses."""
    balancer = ingress.status.load_balancer if ingress.status is not None else None
    return [(i.ip, i.hostname) for i in balancer.ingress or ()] if balancer is not None else []


class IngressClassStrategy(_GenerationStrategy):
    def decode_defaults(self, obj: Obj, sub: str) -> None:
        """SetDefaults_IngressClass: parameters are cluster-scoped unless they say otherwise."""
        params = (_dict(obj.get("spec")) or {}).get("parameters")
        if isinstance(params, dict) and params.get("scope") is None:
            obj["spec"] = {**obj["spec"], "parameters": {**params, "scope": SCOPE_CLUSTER}}

    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[f.FieldError]:
        assert isinstance(typed, IngressClass)
        return validate_object_meta(typed.metadata, False, name_is_dns_subdomain) + ingress_class_errors(typed)

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[f.FieldError]:
        new, previous, errors = self._update_common(merged, old)
        return (errors + ingress_class_update_errors(new, previous)
                + validate_object_meta(new.metadata, False, name_is_dns_subdomain) + ingress_class_errors(new))


def default_network_policy(obj: Obj) -> None:
    """SetDefaults_NetworkPolicy and _NetworkPolicyPort, in place: ports are TCP unless they say otherwise,
    and a policy that names no policy types is an Ingress policy (and an Egress one if it has egress rules)."""
    spec = _dict(obj.get("spec"))
    if spec is None:
        return
    if spec.get("podSelector") is None:
        spec["podSelector"] = {}
    for direction in ("ingress", "egress"):
        rules = spec.get(direction)
        if not isinstance(rules, list):
            continue
        spec[direction] = rules = [dict(r) if isinstance(r, dict) else r for r in rules]
        for rule in rules:
            if isinstance(rule, dict) and isinstance(rule.get("ports"), list):
                rule["ports"] = [{**p, "protocol": "TCP"} if isinstance(p, dict) and p.get("protocol") is None
                                 else p for p in rule["ports"]]
    if not spec.get("policyTypes"):
        spec["policyTypes"] = [POLICY_INGRESS, *([POLICY_EGRESS] if spec.get("egress") else [])]


class NetworkPolicyStrategy(_GenerationStrategy):
    def decode_defaults(self, obj: Obj, sub: str) -> None:
        default_network_policy(obj)

    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[f.FieldError]:
        assert isinstance(typed, NetworkPolicy)
        return (validate_object_meta(typed.metadata, True, name_is_dns_subdomain, require_namespace=namespaced)
                + network_policy_spec_errors(typed))

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[f.FieldError]:
        new, previous, errors = self._update_common(merged, old)
        return errors + validate_object_meta(new.metadata, True, name_is_dns_subdomain) + network_policy_spec_errors(
            new, previous)


INGRESSES = IngressStrategy()
INGRESS_CLASSES_STRATEGY = IngressClassStrategy()
NETWORK_POLICIES = NetworkPolicyStrategy()


# --- kubectl get columns (pkg/printers/internalversion: printIngress, printIngressClass, printNetworkPolicy) ----

LOAD_BALANCER_WIDTH = 16  # an address column longer than this is cut to 13 characters and "..."


def _spec(obj: Obj) -> Obj:
    return _dict(obj.get("spec")) or {}


def ingress_hosts(obj: Obj) -> str:
    """formatHosts: the rules' first three hosts (``+ N more...``, N the rules past three, when a rule follows
    them), ``*`` when no rule names one."""
    rules = [r for r in _spec(obj).get("rules") or [] if isinstance(r, dict)]
    hosts: list[str] = []
    more = False
    for rule in rules:
        if len(hosts) == 3:
            more = True
        if not more and rule.get("host"):
            hosts.append(str(rule["host"]))
    if not hosts:
        return "*"
    return f"{','.join(hosts)} + {len(rules) - 3} more..." if more else ",".join(hosts)


def ingress_address(obj: Obj, wide: bool = False) -> str:
    """ingressLoadBalancerStatusStringer: each load balancer ingress's IP (or else hostname), sorted and
    distinct, cut to the column's width."""
    balancer = _dict((_dict(obj.get("status")) or {}).get("loadBalancer")) or {}
    found = {str(i.get("ip") or i.get("hostname")) for i in balancer.get("ingress") or []
             if isinstance(i, dict) and (i.get("ip") or i.get("hostname"))}
    text = ",".join(sorted(found))
    return text[:LOAD_BALANCER_WIDTH - 3] + "..." if not wide and len(text) > LOAD_BALANCER_WIDTH else text


def ingress_class_parameters(obj: Obj) -> str:
    params = _dict(_spec(obj).get("parameters"))
    if params is None:
        return "<none>"
    kind = str(params.get("kind") or "")
    if params.get("apiGroup") is not None:
        kind = f"{kind}.{params['apiGroup']}"
    return f"{kind}/{params.get('name') or ''}"


COLUMNS = {
    "=ingressClass": lambda o: "<none>" if _spec(o).get("ingressClassName") is None else str(
        _spec(o)["ingressClassName"]),
    "=ingressHosts": ingress_hosts,
    "=ingressAddress": ingress_address,
    "=ingressPorts": lambda o: "80, 443" if _spec(o).get("tls") else "80",
    "=ingressClassParameters": ingress_class_parameters,
    "=podSelector": lambda o: format_selector(_spec(o).get("podSelector")),
}
INGRESS_TABLE = (("Name", "metadata.name", 0), ("Class", "=ingressClass", 0), ("Hosts", "=ingressHosts", 0),
                 ("Address", "=ingressAddress", 0), ("Ports", "=ingressPorts", 0), ("Age", "=age", 0))
INGRESS_CLASS_TABLE = (("Name", "metadata.name", 0), ("Controller", "spec.controller", 0),
                       ("Parameters", "=ingressClassParameters", 0), ("Age", "=age", 0))
NETWORK_POLICY_TABLE = (("Name", "metadata.name", 0), ("Pod-Selector", "=podSelector", 0), ("Age", "=age", 0))
