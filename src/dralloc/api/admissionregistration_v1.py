"""admissionregistration.k8s.io/v1: the webhook configurations and the ValidatingAdmissionPolicies (with their
bindings) that install manifests carry. ``dralloc serve`` stores and validates all four, enforces the policies
(``dralloc.server.admission``) and does not call webhooks."""

from __future__ import annotations

import msgspec

from dralloc.api.meta import Base, Condition, LabelSelector, ListMeta, ObjectMeta

GROUP = "admissionregistration.k8s.io"
GROUP_VERSION = f"{GROUP}/v1"


class ServiceReference(Base):
    namespace: str = ""
    name: str = ""
    path: str | None = None
    port: int | None = None


class WebhookClientConfig(Base):
    url: str | None = None
    service: ServiceReference | None = None
    ca_bundle: str | None = None  # base64, as JSON carries Go's []byte


class RuleWithOperations(Base):
    operations: list[str] | None = None
    api_groups: list[str] | None = None
    api_versions: list[str] | None = None
    resources: list[str] | None = None
    scope: str | None = None


class NamedRuleWithOperations(RuleWithOperations):
    resource_names: list[str] | None = None


class MatchCondition(Base):
    name: str = ""
    expression: str = ""


class ValidatingWebhook(Base):
    name: str = ""
    client_config: WebhookClientConfig = msgspec.field(default_factory=WebhookClientConfig)
    rules: list[RuleWithOperations] | None = None
    failure_policy: str | None = None
    match_policy: str | None = None
    namespace_selector: LabelSelector | None = None
    object_selector: LabelSelector | None = None
    side_effects: str | None = None
    timeout_seconds: int | None = None
    admission_review_versions: list[str] | None = None
    match_conditions: list[MatchCondition] | None = None


class MutatingWebhook(ValidatingWebhook):
    reinvocation_policy: str | None = None


class ValidatingWebhookConfiguration(Base):
    api_version: str = GROUP_VERSION
    kind: str = "ValidatingWebhookConfiguration"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    webhooks: list[ValidatingWebhook] | None = None


class MutatingWebhookConfiguration(Base):
    api_version: str = GROUP_VERSION
    kind: str = "MutatingWebhookConfiguration"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    webhooks: list[MutatingWebhook] | None = None


class ParamKind(Base):
    api_version: str = ""
    kind: str = ""


class MatchResources(Base):
    namespace_selector: LabelSelector | None = None
    object_selector: LabelSelector | None = None
    resource_rules: list[NamedRuleWithOperations] | None = None
    exclude_resource_rules: list[NamedRuleWithOperations] | None = None
    match_policy: str | None = None


class Validation(Base):
    expression: str = ""
    message: str | None = None
    reason: str | None = None
    message_expression: str | None = None


class AuditAnnotation(Base):
    key: str = ""
    value_expression: str = ""


class Variable(Base):
    name: str = ""
    expression: str = ""


class ValidatingAdmissionPolicySpec(Base):
    param_kind: ParamKind | None = None
    match_constraints: MatchResources | None = None
    validations: list[Validation] | None = None
    failure_policy: str | None = None
    audit_annotations: list[AuditAnnotation] | None = None
    match_conditions: list[MatchCondition] | None = None
    variables: list[Variable] | None = None


class ExpressionWarning(Base):
    field_ref: str = ""
    warning: str = ""


class TypeChecking(Base):
    expression_warnings: list[ExpressionWarning] | None = None


class ValidatingAdmissionPolicyStatus(Base):
    observed_generation: int | None = None
    type_checking: TypeChecking | None = None
    conditions: list[Condition] | None = None


class ValidatingAdmissionPolicy(Base):
    api_version: str = GROUP_VERSION
    kind: str = "ValidatingAdmissionPolicy"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ValidatingAdmissionPolicySpec = msgspec.field(default_factory=ValidatingAdmissionPolicySpec)
    status: ValidatingAdmissionPolicyStatus | None = None


class ParamRef(Base):
    name: str | None = None
    namespace: str | None = None
    selector: LabelSelector | None = None
    parameter_not_found_action: str | None = None


class ValidatingAdmissionPolicyBindingSpec(Base):
    policy_name: str = ""
    param_ref: ParamRef | None = None
    match_resources: MatchResources | None = None
    validation_actions: list[str] | None = None


class ValidatingAdmissionPolicyBinding(Base):
    api_version: str = GROUP_VERSION
    kind: str = "ValidatingAdmissionPolicyBinding"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ValidatingAdmissionPolicyBindingSpec = msgspec.field(default_factory=ValidatingAdmissionPolicyBindingSpec)


class ValidatingWebhookConfigurationList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "ValidatingWebhookConfigurationList"
    metadata: ListMeta | None = None
    items: list[ValidatingWebhookConfiguration] = msgspec.field(default_factory=list)


class MutatingWebhookConfigurationList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "MutatingWebhookConfigurationList"
    metadata: ListMeta | None = None
    items: list[MutatingWebhookConfiguration] = msgspec.field(default_factory=list)


class ValidatingAdmissionPolicyList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "ValidatingAdmissionPolicyList"
    metadata: ListMeta | None = None
    items: list[ValidatingAdmissionPolicy] = msgspec.field(default_factory=list)


class ValidatingAdmissionPolicyBindingList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "ValidatingAdmissionPolicyBindingList"
    metadata: ListMeta | None = None
    items: list[ValidatingAdmissionPolicyBinding] = msgspec.field(default_factory=list)


WEBHOOK_CONFIGURATION_KINDS = {"ValidatingWebhookConfiguration": ValidatingWebhookConfiguration,
                               "MutatingWebhookConfiguration": MutatingWebhookConfiguration}
POLICY_KINDS = {"ValidatingAdmissionPolicy": ValidatingAdmissionPolicy,
                "ValidatingAdmissionPolicyBinding": ValidatingAdmissionPolicyBinding}
LIST_KINDS = {"ValidatingWebhookConfigurationList": ValidatingWebhookConfigurationList,
              "MutatingWebhookConfigurationList": MutatingWebhookConfigurationList,
              "ValidatingAdmissionPolicyList": ValidatingAdmissionPolicyList,
              "ValidatingAdmissionPolicyBindingList": ValidatingAdmissionPolicyBindingList}
