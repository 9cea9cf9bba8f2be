"""The protobuf schema table (notation: server/protobuf/schema.py) of admissionregistration.k8s.io/v1: webhook
configurations and ValidatingAdmissionPolicies with their bindings, which operators' typed clients (a CA
injector updating a webhook's ``caBundle``, a policy controller) may send as protobuf. Written from the
generated ``.proto`` of admissionregistration/v1 (field numbers) and the Go types' JSON tags."""

from __future__ import annotations

from dralloc.server.protobuf.schema import META, messages, schema

_RULES = messages({
    "LabelSelector": {1: "matchLabels map[string]string", 2: "matchExpressions []LabelSelectorRequirement"},
    "LabelSelectorRequirement": {1: "key string always", 2: "operator string always", 3: "values []string"},
    # a RuleWithOperations embeds its Rule (Go's json:""): one JSON object of both
    "RuleWithOperations": {1: "operations []string", 2: "rule Rule inline"},
    "Rule": {1: "apiGroups []string", 2: "apiVersions []string", 3: "resources []string", 4: "scope *string"},
    "MatchCondition": {1: "name string always", 2: "expression string always"},
})

_WEBHOOKS = messages({
    "ValidatingWebhookConfiguration": {1: "metadata ObjectMeta", 2: "webhooks []ValidatingWebhook"},
    "MutatingWebhookConfiguration": {1: "metadata ObjectMeta", 2: "webhooks []MutatingWebhook"},
    "ValidatingWebhook": {1: "name string always", 2: "clientConfig WebhookClientConfig always",
                          3: "rules []RuleWithOperations", 4: "failurePolicy *string", 9: "matchPolicy *string",
                          5: "namespaceSelector *LabelSelector", 10: "objectSelector *LabelSelector",
                          6: "sideEffects *string", 7: "timeoutSeconds *int32",
                          8: "admissionReviewVersions []string", 11: "matchConditions []MatchCondition"},
    "MutatingWebhook": {1: "name string always", 2: "clientConfig WebhookClientConfig always",
                        3: "rules []RuleWithOperations", 4: "failurePolicy *string", 9: "matchPolicy *string",
                        5: "namespaceSelector *LabelSelector", 11: "objectSelector *LabelSelector",
                        6: "sideEffects *string", 7: "timeoutSeconds *int32", 8: "admissionReviewVersions []string",
                        10: "reinvocationPolicy *string", 12: "matchConditions []MatchCondition"},
    "WebhookClientConfig": {3: "url *string", 1: "service *ServiceReference", 2: "caBundle bytes"},
    "ServiceReference": {1: "namespace string always", 2: "name string always", 3: "path *string",
                         4: "port *int32"},
})

_POLICIES = messages({
    "ValidatingAdmissionPolicy": {1: "metadata ObjectMeta", 2: "spec ValidatingAdmissionPolicySpec",
                                  3: "status ValidatingAdmissionPolicyStatus"},
    "ValidatingAdmissionPolicySpec": {1: "paramKind *ParamKind", 2: "matchConstraints *MatchResources",
                                      3: "validations []Validation", 4: "failurePolicy *string",
                                      5: "auditAnnotations []AuditAnnotation", 6: "matchConditions []MatchCondition",
                                      7: "variables []Variable"},
    "ParamKind": {1: "apiVersion string", 2: "kind string"},
    "MatchResources": {1: "namespaceSelector *LabelSelector", 2: "objectSelector *LabelSelector",
                       3: "resourceRules []NamedRuleWithOperations",
                       4: "excludeResourceRules []NamedRuleWithOperations", 7: "matchPolicy *string"},
    "NamedRuleWithOperations": {1: "resourceNames []string", 2: "ruleWithOperations RuleWithOperations inline"},
    "Validation": {1: "expression string always", 2: "message string", 3: "reason *string",
                   4: "messageExpression string"},
    "AuditAnnotation": {1: "key string always", 2: "valueExpression string always"},
    "Variable": {1: "name string always", 2: "expression string always"},
    "ValidatingAdmissionPolicyStatus": {1: "observedGeneration int64", 2: "typeChecking *TypeChecking",
                                        3: "conditions []Condition"},
    "TypeChecking": {1: "expressionWarnings []ExpressionWarning"},
    "ExpressionWarning": {2: "fieldRef string always", 3: "warning string always"},
    "ValidatingAdmissionPolicyBinding": {1: "metadata ObjectMeta", 2: "spec ValidatingAdmissionPolicyBindingSpec"},
    "ValidatingAdmissionPolicyBindingSpec": {1: "policyName string", 2: "paramRef *ParamRef",
                                             3: "matchResources *MatchResources", 4: "validationActions []string"},
    "ParamRef": {1: "name string", 2: "namespace string", 3: "selector *LabelSelector",
                 4: "parameterNotFoundAction *string"},
})

ADMISSION_REGISTRATION_V1 = schema(META, _RULES, _WEBHOOKS, _POLICIES)

KINDS = {("admissionregistration.k8s.io/v1", kind): (ADMISSION_REGISTRATION_V1, kind)
         for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "ValidatingAdmissionPolicy",
                      "ValidatingAdmissionPolicyBinding")}
