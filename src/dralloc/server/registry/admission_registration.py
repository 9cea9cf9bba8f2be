"""The admissionregistration.k8s.io/v1 strategies: ValidatingWebhookConfigurations and
MutatingWebhookConfigurations (stored with their defaults and validation; ``dralloc serve`` calls no webhook, and
says so in a Warning on every write of one), ValidatingAdmissionPolicies (with the status kube-apiserver's
type-checking controller writes) and their bindings, which ``dralloc.server.admission`` enforces. And the
columns ``kubectl get`` prints (pkg/printers/internalversion)."""

from __future__ import annotations

from typing import Any

from dralloc.api.codec import decode
from dralloc.api.meta import LabelSelector
from dralloc.server.registry.strategy import Strategy
from dralloc.server.types import Obj
from dralloc.validation.admission_registration import (
    binding_errors,
    policy_errors,
    policy_status_errors,
    webhook_configuration_errors,
)
from dralloc.validation.field import FieldError

WEBHOOKS_NOT_CALLED = ("dralloc serve does not call admission webhooks: the webhooks of {kind} {name!r} are stored "
                       "but never called")


# --- defaults (pkg/apis/admissionregistration/v1/defaults.go) ------------------------------------------------

def _default_rules(rules: Any) -> Any:
    """SetDefaults_Rule: a rule's scope is ``*``."""
    if not isinstance(rules, list):
        return rules
    return [{**rule, "scope": "*"} if isinstance(rule, dict) and rule.get("scope") is None else rule
            for rule in rules]


def _default_selectors(obj: Obj) -> Obj:
    for key in ("namespaceSelector", "objectSelector"):
        if obj.get(key) is None:
            obj[key] = {}
    return obj


def default_webhook(hook: Any, mutating: bool) -> Any:
    """SetDefaults_ValidatingWebhook / _MutatingWebhook, SetDefaults_Rule and SetDefaults_ServiceReference."""
    if not isinstance(hook, dict):
        return hook
    hook = _default_selectors(dict(hook))
    defaults: dict[str, Any] = {"failurePolicy": "Fail", "matchPolicy": "Equivalent", "timeoutSeconds": 10}
    if mutating:
        defaults["reinvocationPolicy"] = "Never"
    for key, value in defaults.items():
        if hook.get(key) is None:
            hook[key] = value
    if "rules" in hook:
        hook["rules"] = _default_rules(hook["rules"])
    config = hook.get("clientConfig")
    if isinstance(config, dict) and isinstance(config.get("service"), dict) and config["service"].get("port") is None:
        hook["clientConfig"] = {**config, "service": {**config["service"], "port": 443}}
    return hook


def default_match_resources(match: Any) -> Any:
    """SetDefaults_MatchResources (matchPolicy Equivalent, empty selectors) and its rules' scope."""
    if not isinstance(match, dict):
        return match
    match = _default_selectors(dict(match))
    if match.get("matchPolicy") is None:
        match["matchPolicy"] = "Equivalent"
    for key in ("resourceRules", "excludeResourceRules"):
        if key in match:
            match[key] = _default_rules(match[key])
    return match


# --- webhook configurations ---------------------------------------------------------------------------------

class WebhookConfigurationStrategy(Strategy):
    """validatingwebhookconfiguration / mutatingwebhookconfiguration strategy: generation 1 on create, one up
    when the webhooks change."""

    def __init__(self, mutating: bool) -> None:
        self.mutating = mutating

    def decode_defaults(self, obj: Obj, sub: str) -> None:
        if isinstance(obj.get("webhooks"), list):
            obj["webhooks"] = [default_webhook(hook, self.mutating) for hook in obj["webhooks"]]

    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[FieldError]:
        return webhook_configuration_errors(typed)

    def with_system_fields(self, created: Obj) -> Obj:
        return {**created, "metadata": {**created["metadata"], "generation": 1}}

    def prepare_for_update(self, merged: Obj, old: Obj, sub: str) -> None:
        generation = old["metadata"].get("generation") or 1
        changed = merged.get("webhooks") != old.get("webhooks")
        merged["metadata"]["generation"] = generation + 1 if changed else generation

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[FieldError]:
        return super().update_errors(merged, old, sub, typed_meta) + webhook_configuration_errors(
            decode(merged), decode(old))

    def create_warnings(self, created: Obj) -> list[str]:
        return [self._not_called(created)]

    def update_warnings(self, written: Obj, sub: str) -> list[str]:
        return [self._not_called(written)]

    def _not_called(self, obj: Obj) -> str:
        name = (obj.get("metadata") or {}).get("name") or ""
        return WEBHOOKS_NOT_CALLED.format(kind=obj.get("kind") or "", name=name)


VALIDATING_WEBHOOKS = WebhookConfigurationStrategy(mutating=False)
MUTATING_WEBHOOKS = WebhookConfigurationStrategy(mutating=True)


# --- policies and bindings ----------------------------------------------------------------------------------

def type_checked_status(policy: Obj) -> Obj:
    """The status kube-apiserver's type-checking controller writes for a policy at its generation (no
    warnings: expressions are checked against dynamic objects, see the README)."""
    return {"observedGeneration": (policy.get("metadata") or {}).get("generation") or 1, "typeChecking": {}}


class PolicyStrategy(Strategy):
    """validatingadmissionpolicy strategy: generation kept, status from the type-checking controller."""

    tracks_generation = True

    def decode_defaults(self, obj: Obj, sub: str) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        spec = dict(spec)
        if spec.get("failurePolicy") is None:
            spec["failurePolicy"] = "Fail"
        if "matchConstraints" in spec:
            spec["matchConstraints"] = default_match_resources(spec["matchConstraints"])
        obj["spec"] = spec

    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[FieldError]:
        return policy_errors(typed)

    def with_system_fields(self, created: Obj) -> Obj:
        return {**created, "status": type_checked_status(created)}

    def prepare_for_update(self, merged: Obj, old: Obj, sub: str) -> None:
        if sub != "status" and merged.get("spec") != old.get("spec"):
            merged["status"] = type_checked_status(merged)

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[FieldError]:
        errors = super().update_errors(merged, old, sub, typed_meta)
        if sub == "status":
            return errors + policy_status_errors(decode(merged))
        return errors + policy_errors(decode(merged), decode(old))


class BindingStrategy(Strategy):
    """validatingadmissionpolicybinding strategy: generation kept."""

    tracks_generation = True

    def decode_defaults(self, obj: Obj, sub: str) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict) and "matchResources" in spec:
            obj["spec"] = {**spec, "matchResources": default_match_resources(spec["matchResources"])}

    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[FieldError]:
        return binding_errors(typed)

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[FieldError]:
        return super().update_errors(merged, old, sub, typed_meta) + binding_errors(decode(merged))


POLICIES = PolicyStrategy()
BINDINGS = BindingStrategy()


# --- columns ------------------------------------------------------------------------------------------------

def _param_kind(policy: Obj) -> str:
    kind = (policy.get("spec") or {}).get("paramKind")
    if not isinstance(kind, dict):
        return "<unset>"
    return f"{kind.get('apiVersion') or ''}/{kind.get('kind') or ''}"


def selector_string(selector: LabelSelector) -> str:
    """A LabelSelector as its generated Go String() prints it (the binding's PARAMREF column)."""
    labels = "".join(f"{k}: {v}," for k, v in sorted((selector.match_labels or {}).items()))
    requirements = "".join(
        f"LabelSelectorRequirement{{Key:{r.key},Operator:{r.operator},Values:[{' '.join(r.values or [])}],}},"
        for r in selector.match_expressions or ())
    return (f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},"
            f"MatchExpressions:[]LabelSelectorRequirement{{{requirements}}},}}")


def _param_ref(binding: Obj) -> str:
    ref = (binding.get("spec") or {}).get("paramRef")
    if not isinstance(ref, dict):
        return "<unset>"
    if ref.get("name"):
        # (whether the params are cluster-scoped is not known here: a name without a namespace reads */name)
        return f"{ref.get('namespace') or '*'}/{ref['name']}"
    if ref.get("selector") is not None:
        import msgspec

        return selector_string(msgspec.convert(ref["selector"], LabelSelector))
    return "<unset>"


COLUMNS = {"=webhookCount": lambda obj: len(obj.get("webhooks") or []),
           "=validationCount": lambda obj: len((obj.get("spec") or {}).get("validations") or []),
           "=paramKind": _param_kind, "=paramRef": _param_ref}
COLUMN_TYPES = {"=webhookCount": "integer", "=validationCount": "integer"}
WEBHOOK_TABLE = (("Name", "metadata.name", 0), ("Webhooks", "=webhookCount", 0), ("Age", "=age", 0))
POLICY_TABLE = (("Name", "metadata.name", 0), ("Validations", "=validationCount", 0), ("ParamKind", "=paramKind", 0),
                ("Age", "=age", 0))
BINDING_TABLE = (("Name", "metadata.name", 0), ("PolicyName", "spec.policyName", 0), ("ParamRef", "=paramRef", 0),
                 ("Age", "=age", 0))
