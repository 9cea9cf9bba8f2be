"""networking.k8s.io/v1 Ingress, IngressClass and NetworkPolicy, whole (every field of the upstream types), as the
install manifests of ingress controllers and charts carry them. ``dralloc serve`` stores and validates them;
nothing routes ingress traffic nor enforces a network policy."""

from __future__ import annotations

import msgspec

from dralloc.api.meta import Base, LabelSelector, ListMeta, ObjectMeta

GROUP = "networking.k8s.io"
GROUP_VERSION = f"{GROUP}/v1"
# the IngressClass annotation that makes a class the one an Ingress naming none gets (DefaultIngressClass)
IS_DEFAULT_INGRESS_CLASS = "ingressclass.kubernetes.io/is-default-class"
# the class annotation of the days before spec.ingressClassName
INGRESS_CLASS_ANNOTATION = "kubernetes.io/ingress.class"
PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")
SCOPE_CLUSTER, SCOPE_NAMESPACE = "Cluster", "Namespace"
POLICY_INGRESS, POLICY_EGRESS = "Ingress", "Egress"


class ServiceBackendPort(Base):
    name: str | None = None
    number: int | None = None


class IngressServiceBackend(Base):
    name: str = ""
    port: ServiceBackendPort = msgspec.field(default_factory=ServiceBackendPort)


class TypedLocalObjectReference(Base):
    api_group: str | None = None
    kind: str = ""
    name: str = ""


class IngressBackend(Base):
    service: IngressServiceBackend | None = None
    resource: TypedLocalObjectReference | None = None


class HTTPIngressPath(Base):
    path: str | None = None
    path_type: str | None = None
    backend: IngressBackend = msgspec.field(default_factory=IngressBackend)


class HTTPIngressRuleValue(Base):
    paths: list[HTTPIngressPath] | None = None


class IngressRule(Base):
    host: str | None = None
    http: HTTPIngressRuleValue | None = None


class IngressTLS(Base):
    hosts: list[str] | None = None
    secret_name: str | None = None


class IngressSpec(Base):
    ingress_class_name: str | None = None
    default_backend: IngressBackend | None = None
    tls: list[IngressTLS] | None = None
    rules: list[IngressRule] | None = None


class IngressPortStatus(Base):
    port: int = 0
    protocol: str = ""
    error: str | None = None


class IngressLoadBalancerIngress(Base):
    ip: str | None = None
    hostname: str | None = None
    ports: list[IngressPortStatus] | None = None


class IngressLoadBalancerStatus(Base):
    ingress: list[IngressLoadBalancerIngress] | None = None


class IngressStatus(Base):
    load_balancer: IngressLoadBalancerStatus | None = None


class Ingress(Base):
    api_version: str = GROUP_VERSION
    kind: str = "Ingress"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: IngressSpec = msgspec.field(default_factory=IngressSpec)
    status: IngressStatus | None = None


class IngressClassParametersReference(Base):
    api_group: str | None = None
    kind: str = ""
    name: str = ""
    scope: str | None = None  # Cluster (the default) or Namespace
    namespace: str | None = None


class IngressClassSpec(Base):
    controller: str | None = None
    parameters: IngressClassParametersReference | None = None


class IngressClass(Base):
    api_version: str = GROUP_VERSION
    kind: str = "IngressClass"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: IngressClassSpec = msgspec.field(default_factory=IngressClassSpec)


class IPBlock(Base):
    cidr: str = ""
    except_: list[str] | None = msgspec.field(default=None, name="except")


class NetworkPolicyPeer(Base):
    pod_selector: LabelSelector | None = None
    namespace_selector: LabelSelector | None = None
    ip_block: IPBlock | None = None


class NetworkPolicyPort(Base):
    protocol: str | None = None  # TCP by default
    port: int | str | None = None
    end_port: int | None = None


class NetworkPolicyIngressRule(Base):
    ports: list[NetworkPolicyPort] | None = None
    from_: list[NetworkPolicyPeer] | None = msgspec.field(default=None, name="from")


class NetworkPolicyEgressRule(Base):
    ports: list[NetworkPolicyPort] | None = None
    to: list[NetworkPolicyPeer] | None = None


class NetworkPolicySpec(Base):
    pod_selector: LabelSelector | None = None  # the empty selector (every pod of the namespace) when left out
    ingress: list[NetworkPolicyIngressRule] | None = None
    egress: list[NetworkPolicyEgressRule] | None = None
    policy_types: list[str] | None = None


class NetworkPolicy(Base):
    api_version: str = GROUP_VERSION
    kind: str = "NetworkPolicy"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: NetworkPolicySpec = msgspec.field(default_factory=NetworkPolicySpec)


class IngressList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "IngressList"
    metadata: ListMeta | None = None
    items: list[Ingress] = msgspec.field(default_factory=list)


class IngressClassList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "IngressClassList"
    metadata: ListMeta | None = None
    items: list[IngressClass] = msgspec.field(default_factory=list)


class NetworkPolicyList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "NetworkPolicyList"
    metadata: ListMeta | None = None
    items: list[NetworkPolicy] = msgspec.field(default_factory=list)
