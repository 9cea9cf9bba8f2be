"""The protobuf schema tables (notation: server/protobuf/schema.py) of the kinds kubectl's typed clients send for
Services, disruption budgets and quotas (``kubectl create service``, ``kubectl expose``, ``kubectl create
poddisruptionbudget``, ``kubectl create quota``) and of the endpoints kinds client-go's controllers write: core/v1
Service, Endpoints, LimitRange and ResourceQuota,
discovery.k8s.io/v1 EndpointSlice and policy/v1 PodDisruptionBudget. Written from the generated ``.proto`` of
core/v1, discovery/v1 and policy/v1 (field numbers) and the Go types' JSON tags."""

from __future__ import annotations

from dralloc.server.protobuf.schema import CORE_PIECES, META, messages, schema

_LABEL_SELECTOR = messages({
    "LabelSelector": {1: "matchLabels map[string]string", 2: "matchExpressions []LabelSelectorRequirement"},
    "LabelSelectorRequirement": {1: "key string always", 2: "operator string always", 3: "values []string"},
})

SERVICES_V1 = schema(META, CORE_PIECES, messages({
    "Service": {1: "metadata ObjectMeta", 2: "spec ServiceSpec", 3: "status ServiceStatus"},
    "ServiceSpec": {1: "ports []ServicePort", 2: "selector map[string]string", 3: "clusterIP string",
                    18: "clusterIPs []string", 4: "type string", 5: "externalIPs []string",
                    7: "sessionAffinity string", 8: "loadBalancerIP string", 9: "loadBalancerSourceRanges []string",
                    10: "externalName string", 11: "externalTrafficPolicy string", 12: "healthCheckNodePort int32",
                    13: "publishNotReadyAddresses bool", 14: "sessionAffinityConfig *SessionAffinityConfig",
                    19: "ipFamilies []string", 17: "ipFamilyPolicy *string",
                    20: "allocateLoadBalancerNodePorts *bool", 21: "loadBalancerClass *string",
                    22: "internalTrafficPolicy *string", 23: "trafficDistribution *string"},
    "ServicePort": {1: "name string", 2: "protocol string", 6: "appProtocol *string", 3: "port int32 always",
                    4: "targetPort IntOrString", 5: "nodePort int32"},
    "SessionAffinityConfig": {1: "clientIP *ClientIPConfig"},
    "ClientIPConfig": {1: "timeoutSeconds *int32"},
    "ServiceStatus": {1: "loadBalancer LoadBalancerStatus always", 2: "conditions []Condition"},
    "LoadBalancerStatus": {1: "ingress []LoadBalancerIngress"},
    "LoadBalancerIngress": {1: "ip string", 2: "hostname string", 3: "ipMode *string", 4: "ports []PortStatus"},
    "PortStatus": {1: "port int32 always", 2: "protocol string always", 3: "error *string"},
    "Endpoints": {1: "metadata ObjectMeta", 2: "subsets []EndpointSubset"},
    "EndpointSubset": {1: "addresses []EndpointAddress", 2: "notReadyAddresses []EndpointAddress",
                       3: "ports []EndpointPort"},
    "EndpointAddress": {1: "ip string always", 3: "hostname string", 4: "nodeName *string",
                        2: "targetRef *ObjectReference"},
    "EndpointPort": {1: "name string", 2: "port int32 always", 3: "protocol string", 4: "appProtocol *string"},
    "LimitRange": {1: "metadata ObjectMeta", 2: "spec LimitRangeSpec"},
    "LimitRangeSpec": {1: "limits []LimitRangeItem always"},
    "LimitRangeItem": {1: "type string always", 2: "max map[string]Quantity", 3: "min map[string]Quantity",
                       4: "default map[string]Quantity", 5: "defaultRequest map[string]Quantity",
                       6: "maxLimitRequestRatio map[string]Quantity"},
    "ResourceQuota": {1: "metadata ObjectMeta", 2: "spec ResourceQuotaSpec", 3: "status ResourceQuotaStatus"},
    "ResourceQuotaSpec": {1: "hard map[string]Quantity", 2: "scopes []string", 3: "scopeSelector *ScopeSelector"},
    "ScopeSelector": {1: "matchExpressions []ScopedResourceSelectorRequirement"},
    "ScopedResourceSelectorRequirement": {1: "scopeName string always", 2: "operator string always",
                                          3: "values []string"},
    "ResourceQuotaStatus": {1: "hard map[string]Quantity", 2: "used map[string]Quantity"},
}))

DISCOVERY_V1 = schema(META, CORE_PIECES, messages({
    "EndpointSlice": {1: "metadata ObjectMeta", 4: "addressType string always", 2: "endpoints []Endpoint always",
                      3: "ports []EndpointPort always"},
    "Endpoint": {1: "addresses []string always", 2: "conditions EndpointConditions always", 3: "hostname *string",
                 4: "targetRef *ObjectReference", 5: "deprecatedTopology map[string]string", 6: "nodeName *string",
                 7: "zone *string", 8: "hints *EndpointHints"},
    "EndpointConditions": {1: "ready *bool", 2: "serving *bool", 3: "terminating *bool"},
    "EndpointHints": {1: "forZones []ForZone", 2: "forNodes []ForNode"},
    "ForZone": {1: "name string always"},
    "ForNode": {1: "name string always"},
    "EndpointPort": {1: "name *string", 2: "protocol *string", 3: "port *int32", 4: "appProtocol *string"},
}))

POLICY_V1_BUDGETS = schema(META, _LABEL_SELECTOR, messages({
    "PodDisruptionBudget": {1: "metadata ObjectMeta", 2: "spec PodDisruptionBudgetSpec",
                            3: "status PodDisruptionBudgetStatus"},
    "PodDisruptionBudgetSpec": {1: "minAvailable *IntOrString", 2: "selector *LabelSelector",
                                3: "maxUnavailable *IntOrString", 4: "unhealthyPodEvictionPolicy *string"},
    "PodDisruptionBudgetStatus": {1: "observedGeneration int64", 2: "disruptedPods map[string]Time",
                                  3: "disruptionsAllowed int32 always", 4: "currentHealthy int32 always",
                                  5: "desiredHealthy int32 always", 6: "expectedPods int32 always",
                                  7: "conditions []Condition"},
}))

KINDS = {("v1", "Service"): (SERVICES_V1, "Service"), ("v1", "Endpoints"): (SERVICES_V1, "Endpoints"),
         ("v1", "LimitRange"): (SERVICES_V1, "LimitRange"), ("v1", "ResourceQuota"): (SERVICES_V1, "ResourceQuota"),
         ("discovery.k8s.io/v1", "EndpointSlice"): (DISCOVERY_V1, "EndpointSlice"),
         ("policy/v1", "PodDisruptionBudget"): (POLICY_V1_BUDGETS, "PodDisruptionBudget")}
