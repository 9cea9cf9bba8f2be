"""The protobuf schema tables (notation: server/protobuf/schema.py) of the networking.k8s.io/v1 kinds, which
kubectl's typed clients send as protobuf (``kubectl create ingress``): Ingress, IngressClass and NetworkPolicy.
Written from the generated ``.proto`` of networking/v1 (field numbers) and the Go types' JSON tags (an
IngressRule's ``IngressRuleValue`` is inlined)."""

from __future__ import annotations

from dralloc.server.protobuf.schema import META, messages, schema

_SELECTOR = messages({
    "LabelSelector": {1: "matchLabels map[string]string", 2: "matchExpressions []LabelSelectorRequirement"},
    "LabelSelectorRequirement": {1: "key string always", 2: "operator string always", 3: "values []string"},
})

NETWORKING_V1 = schema(META, _SELECTOR, messages({
    "Ingress": {1: "metadata ObjectMeta", 2: "spec IngressSpec", 3: "status IngressStatus"},
    "IngressSpec": {4: "ingressClassName *string", 1: "defaultBackend *IngressBackend", 2: "tls []IngressTLS",
                    3: "rules []IngressRule"},
    "IngressBackend": {4: "service *IngressServiceBackend", 3: "resource *TypedLocalObjectReference"},
    "IngressServiceBackend": {1: "name string always", 2: "port ServiceBackendPort"},
    "ServiceBackendPort": {1: "name string", 2: "number int32"},
    "TypedLocalObjectReference": {1: "apiGroup *string", 2: "kind string always", 3: "name string always"},
    "IngressTLS": {1: "hosts []string", 2: "secretName string"},
    "IngressRule": {1: "host string", 2: "ingressRuleValue IngressRuleValue inline"},
    "IngressRuleValue": {1: "http *HTTPIngressRuleValue"},
    "HTTPIngressRuleValue": {1: "paths []HTTPIngressPath"},
    "HTTPIngressPath": {1: "path string", 3: "pathType *string", 2: "backend IngressBackend"},
    "IngressStatus": {1: "loadBalancer IngressLoadBalancerStatus"},
    "IngressLoadBalancerStatus": {1: "ingress []IngressLoadBalancerIngress"},
    "IngressLoadBalancerIngress": {1: "ip string", 2: "hostname string", 4: "ports []IngressPortStatus"},
    "IngressPortStatus": {1: "port int32 always", 2: "protocol string always", 3: "error *string"},
    "IngressClass": {1: "metadata ObjectMeta", 2: "spec IngressClassSpec"},
    "IngressClassSpec": {1: "controller string", 2: "parameters *IngressClassParametersReference"},
    "IngressClassParametersReference": {1: "apiGroup *string", 2: "kind string always", 3: "name string always",
                                        4: "scope *string", 5: "namespace *string"},
    "NetworkPolicy": {1: "metadata ObjectMeta", 2: "spec NetworkPolicySpec"},
    "NetworkPolicySpec": {1: "podSelector LabelSelector", 2: "ingress []NetworkPolicyIngressRule",
                          3: "egress []NetworkPolicyEgressRule", 4: "policyTypes []string"},
    "NetworkPolicyIngressRule": {1: "ports []NetworkPolicyPort", 2: "from []NetworkPolicyPeer"},
    "NetworkPolicyEgressRule": {1: "ports []NetworkPolicyPort", 2: "to []NetworkPolicyPeer"},
    "NetworkPolicyPort": {1: "protocol *string", 2: "port *IntOrString", 3: "endPort *int32"},
    "NetworkPolicyPeer": {1: "podSelector *LabelSelector", 2: "namespaceSelector *LabelSelector",
                          3: "ipBlock *IPBlock"},
    "IPBlock": {1: "cidr string always", 2: "except []string"},
}))

KINDS = {("networking.k8s.io/v1", kind): (NETWORKING_V1, kind) for kind in ("Ingress", "IngressClass", "NetworkPolicy")}
