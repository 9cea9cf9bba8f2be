"""The protobuf schema tables (notation: server/protobuf/schema.py) of the kinds kubectl's typed clients send as
protobuf for ingress and autoscaling (``kubectl create ingress``, ``kubectl autoscale``): networking.k8s.io/v1
Ingress, IngressClass and NetworkPolicy, and autoscaling/v1 and autoscaling/v2 HorizontalPodAutoscaler. Written
from the generated ``.proto`` of networking/v1, autoscaling/v1 and autoscaling/v2 (field numbers) and the Go
types' JSON tags (an IngressRule's ``IngressRuleValue`` is inlined)."""

from __future__ import annotations

from dralloc.server.protobuf.schema import META, Schema, messages, schema

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

KINDS: dict[tuple[str, str], tuple[Schema, str]] = {("networking.k8s.io/v1", kind): (NETWORKING_V1, kind) for kind in ("Ingress", "IngressClass", "NetworkPolicy")}

_REFERENCE = messages({"CrossVersionObjectReference": {1: "kind string always", 2: "name string always",
                                                       3: "apiVersion string"}})
_CONDITION = messages({"HorizontalPodAutoscalerCondition": {
    1: "type string always", 2: "status string always", 3: "lastTransitionTime Time", 4: "reason string",
    5: "message string"}})

# autoscaling/v1 and autoscaling/v2 HorizontalPodAutoscalers (``kubectl autoscale`` sends v1)
AUTOSCALING_V1 = schema(META, _REFERENCE, messages({
    "HorizontalPodAutoscaler": {1: "metadata ObjectMeta", 2: "spec HorizontalPodAutoscalerSpec",
                                3: "status HorizontalPodAutoscalerStatus"},
    "HorizontalPodAutoscalerSpec": {1: "scaleTargetRef CrossVersionObjectReference", 2: "minReplicas *int32",
                                    3: "maxReplicas int32 always", 4: "targetCPUUtilizationPercentage *int32"},
    "HorizontalPodAutoscalerStatus": {1: "observedGeneration *int64", 2: "lastScaleTime *Time",
                                      3: "currentReplicas int32 always", 4: "desiredReplicas int32 always",
                                      5: "currentCPUUtilizationPercentage *int32"},
}))

AUTOSCALING_V2 = schema(META, _SELECTOR, _REFERENCE, _CONDITION, messages({
    "HorizontalPodAutoscaler": {1: "metadata ObjectMeta", 2: "spec HorizontalPodAutoscalerSpec",
                                3: "status HorizontalPodAutoscalerStatus"},
    "HorizontalPodAutoscalerSpec": {1: "scaleTargetRef CrossVersionObjectReference", 2: "minReplicas *int32",
                                    3: "maxReplicas int32 always", 4: "metrics []MetricSpec",
                                    5: "behavior *HorizontalPodAutoscalerBehavior"},
    "MetricSpec": {1: "type string always", 2: "object *ObjectMetricSource", 3: "pods *PodsMetricSource",
                   4: "resource *ResourceMetricSource", 7: "containerResource *ContainerResourceMetricSource",
                   5: "external *ExternalMetricSource"},
    "ObjectMetricSource": {1: "describedObject CrossVersionObjectReference", 2: "target MetricTarget",
                           3: "metric MetricIdentifier"},
    "PodsMetricSource": {1: "metric MetricIdentifier", 2: "target MetricTarget"},
    "ResourceMetricSource": {1: "name string always", 2: "target MetricTarget"},
    "ContainerResourceMetricSource": {1: "name string always", 2: "target MetricTarget", 3: "container string always"},
    "ExternalMetricSource": {1: "metric MetricIdentifier", 2: "target MetricTarget"},
    "MetricIdentifier": {1: "name string always", 2: "selector *LabelSelector"},
    "MetricTarget": {1: "type string always", 2: "value *Quantity", 3: "averageValue *Quantity",
                     4: "averageUtilization *int32"},
    "HorizontalPodAutoscalerBehavior": {1: "scaleUp *HPAScalingRules", 2: "scaleDown *HPAScalingRules"},
    "HPAScalingRules": {3: "stabilizationWindowSeconds *int32", 1: "selectPolicy *string",
                        2: "policies []HPAScalingPolicy", 4: "tolerance *Quantity"},
    "HPAScalingPolicy": {1: "type string always", 2: "value int32 always", 3: "periodSeconds int32 always"},
    "HorizontalPodAutoscalerStatus": {1: "observedGeneration *int64", 2: "lastScaleTime *Time",
                                      3: "currentReplicas int32", 4: "desiredReplicas int32 always",
                                      5: "currentMetrics []MetricStatus",
                                      6: "conditions []HorizontalPodAutoscalerCondition"},
    "MetricStatus": {1: "type string always", 2: "object *ObjectMetricStatus", 3: "pods *PodsMetricStatus",
                     4: "resource *ResourceMetricStatus", 7: "containerResource *ContainerResourceMetricStatus",
                     5: "external *ExternalMetricStatus"},
    "ObjectMetricStatus": {1: "metric MetricIdentifier", 2: "current MetricValueStatus",
                           3: "describedObject CrossVersionObjectReference"},
    "PodsMetricStatus": {1: "metric MetricIdentifier", 2: "current MetricValueStatus"},
    "ResourceMetricStatus": {1: "name string always", 2: "current MetricValueStatus"},
    "ContainerResourceMetricStatus": {1: "name string always", 2: "current MetricValueStatus",
                                      3: "container string always"},
    "ExternalMetricStatus": {1: "metric MetricIdentifier", 2: "current MetricValueStatus"},
    "MetricValueStatus": {1: "value *Quantity", 2: "averageValue *Quantity", 3: "averageUtilization *int32"},
}))

KINDS.update({("autoscaling/v1", "HorizontalPodAutoscaler"): (AUTOSCALING_V1, "HorizontalPodAutoscaler"),
              ("autoscaling/v2", "HorizontalPodAutoscaler"): (AUTOSCALING_V2, "HorizontalPodAutoscaler")})
