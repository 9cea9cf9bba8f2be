"""admissionregistration.k8s.io/v1 rules (pkg/apis/admissionregistration/validation), with upstream's field
paths and texts: the webhook configurations (fully qualified unique names, rules, side effects, timeouts, the
client config, admission review versions, match conditions), ValidatingAdmissionPolicies (their CEL compiled
with :mod:`.admission_cel`) and their bindings.

An update is checked by the same rules, loosened where the stored object already broke a rule introduced
later (side effects, review versions, unique names), and with unchanged match conditions not compiled again,
as upstream ratchets them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from dralloc.api.admissionregistration_v1 import (
    MatchCondition,
    MatchResources,
    MutatingWebhook,
    MutatingWebhookConfiguration,
    NamedRuleWithOperations,
    ParamKind,
    ParamRef,
    RuleWithOperations,
    ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
    ValidatingWebhook,
    ValidatingWebhookConfiguration,
    Validation,
    Variable,
    WebhookClientConfig,
)
from dralloc.validation import field as f
from dralloc.validation.admission_cel import Declarations, compile_admission
from dralloc.validation.formats import is_dns1123_subdomain, is_qualified_name, max_len_error, regex_error
from dralloc.validation.meta import label_selector_errors, name_is_dns_subdomain, validate_object_meta
from dralloc.validation.podgroups import path_segment_problems

WebhookConfiguration = ValidatingWebhookConfiguration | MutatingWebhookConfiguration
FAILURE_POLICIES = ["Fail", "Ignore"]
MATCH_POLICIES = ["Equivalent", "Exact"]
SIDE_EFFECTS = ["None", "NoneOnDryRun", "Some", "Unknown"]
NO_SIDE_EFFECTS = ["None", "NoneOnDryRun"]
OPERATIONS = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"]
REINVOCATION_POLICIES = ["IfNeeded", "Never"]
SCOPES = ["*", "Cluster", "Namespaced"]
REASONS = ["Forbidden", "Invalid", "RequestEntityTooLarge"]
VALIDATION_ACTIONS = ["Audit", "Deny", "Warn"]
REVIEW_VERSIONS = ["v1", "v1beta1"]  # what the previous kube-apiserver understands
MAX_MATCH_CONDITIONS = 64
MAX_AUDIT_ANNOTATIONS = 20
MAX_AUDIT_VALUE_EXPRESSION = 5 * 1024
_CEL_IDENTIFIER = re.compile(r"^[_a-zA-Z][_a-zA-Z0-9]*$")
_CEL_RESERVED = {"true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function",
                 "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while"}
_URL_FORM = "; desired format: https://host[/path]"


@dataclass(frozen=True, slots=True)
class _Options:
    """What an update loosens (validationOptions)."""

    ignore_match_conditions: bool = False
    params_in_match_conditions: bool = False
    require_no_side_effects: bool = True
    require_recognized_review_version: bool = True
    require_unique_names: bool = True


# --- rules ------------------------------------------------------------------------------------------------

def _has_wildcard(values: list[str]) -> bool:
    return "*" in values


def _resources_errors(resources: list[str], path: str) -> list[f.FieldError]:
    """validateResources: resources with subresources and their wildcards."""
    errs = [] if resources else [f.required(path)]
    with_wildcard_sub: set[str] = set()
    sub_with_wildcard_resource: set[str] = set()
    double = single = plain = False
    for i, entry in enumerate(resources):
        if not entry:
            errs.append(f.required(f.index(path, i)))
            continue
        double = double or entry == "*/*"
        single = single or entry == "*"
        resource, slash, sub = entry.partition("/")
        if not slash:
            plain = entry != "*"  # (upstream keeps the last one's answer)
            continue
        if resource in with_wildcard_sub:
            errs.append(f.invalid(f.index(path, i), entry, f"if '{resource}/*' is present, must not specify {entry}"))
        if sub in sub_with_wildcard_resource:
            errs.append(f.invalid(f.index(path, i), entry, f"if '*/{sub}' is present, must not specify {entry}"))
        if sub == "*":
            with_wildcard_sub.add(resource)
        if resource == "*":
            sub_with_wildcard_resource.add(sub)
    if len(resources) > 1 and double:
        errs.append(f.invalid(path, resources, "if '*/*' is present, must not specify other resources"))
    if single and plain:
        errs.append(f.invalid(path, resources, "if '*' is present, must not specify other resources without "
                                               "subresources"))
    return errs


def rule_errors(rule: RuleWithOperations, path: str) -> list[f.FieldError]:
    """validateRuleWithOperations (subresources allowed)."""
    errs: list[f.FieldError] = []
    operations = rule.operations or []
    if not operations:
        errs.append(f.required(f.child(path, "operations")))
    if len(operations) > 1 and _has_wildcard(operations):
        errs.append(f.invalid(f.child(path, "operations"), operations,
                              "if '*' is present, must not specify other operations"))
    for i, operation in enumerate(operations):
        if operation not in OPERATIONS:
            errs.append(f.not_supported(f.index(f.child(path, "operations"), i), operation, OPERATIONS))
    groups, versions = rule.api_groups or [], rule.api_versions or []
    if not groups:
        errs.append(f.required(f.child(path, "apiGroups")))
    if len(groups) > 1 and _has_wildcard(groups):
        errs.append(f.invalid(f.child(path, "apiGroups"), groups, "if '*' is present, must not specify other API groups"))
    if not versions:
        errs.append(f.required(f.child(path, "apiVersions")))
    if len(versions) > 1 and _has_wildcard(versions):
        errs.append(f.invalid(f.child(path, "apiVersions"), versions,
                              "if '*' is present, must not specify other API versions"))
    for i, version in enumerate(versions):
        if not version:
            errs.append(f.required(f.index(f.child(path, "apiVersions"), i)))
    errs += _resources_errors(rule.resources or [], f.child(path, "resources"))
    if rule.scope is not None and rule.scope not in SCOPES:
        errs.append(f.not_supported(f.child(path, "scope"), rule.scope, SCOPES))
    return errs


def _named_rule_errors(rule: NamedRuleWithOperations, path: str) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    seen: set[str] = set()
    for i, name in enumerate(rule.resource_names or ()):
        at = f.index(f.child(path, "resourceNames"), i)
        errs += [f.invalid(at, name, m) for m in path_segment_problems(name)]
        if name in seen:
            errs.append(f.duplicate(at, name))
        seen.add(name)
    return errs + rule_errors(rule, path)


# --- webhooks ---------------------------------------------------------------------------------------------

def _fully_qualified_name_errors(name: str, path: str) -> list[f.FieldError]:
    """utilvalidation.IsFullyQualifiedName."""
    if not name:
        return [f.required(path)]
    problems = is_dns1123_subdomain(name)
    if problems:
        return [f.invalid(path, name, ",".join(problems))]
    if len(name.split(".")) < 3:
        return [f.invalid(path, name, "should be a domain with at least three segments separated by dots")]
    return []


def _url_errors(url: str, path: str) -> list[f.FieldError]:
    """webhook.ValidateWebhookURL, https required."""
    try:
        parts = urlsplit(url)
        host = parts.netloc.rpartition("@")[2]
    except ValueError as exc:
        return [f.required(path, f"url must be a valid URL: {exc}{_URL_FORM}")]
    errs = []
    if parts.scheme != "https":
        errs.append(f.invalid(path, parts.scheme, "'https' is the only allowed URL scheme" + _URL_FORM))
    if not host:
        errs.append(f.invalid(path, host, "host must be specified" + _URL_FORM))
    if "@" in parts.netloc:
        errs.append(f.invalid(path, parts.netloc.rpartition("@")[0], "user information is not permitted in the URL"))
    if parts.fragment:
        errs.append(f.invalid(path, parts.fragment, "fragments are not permitted in the URL"))
    if parts.query:
        errs.append(f.invalid(path, parts.query, "query parameters are not permitted in the URL"))
    return errs


def _service_errors(path: str, namespace: str, name: str, url_path: str | None, port: int | None) -> list[f.FieldError]:
    """webhook.ValidateWebhookService(fldPath, namespace, name, path, port). Upstream's callers pass the
    service's name as ``namespace`` and its namespace as ``name`` (kubernetes#141353), so a missing name is
    reported at ``service.namespace`` and the other way round: kept, for the same answers."""
    errs = []
    if not name:
        errs.append(f.required(f.child(path, "name")))
    if not namespace:
        errs.append(f.required(f.child(path, "namespace")))
    if port is not None and not 1 <= port <= 65535:
        errs.append(f.invalid(f.child(path, "port"), port, "port is not valid: must be between 1 and 65535, inclusive"))
    if url_path is None or url_path in ("", "/"):
        return errs
    at = f.child(path, "path")
    if url_path == "//":
        return errs + [f.invalid(at, url_path, "segment[0] may not be empty")]
    if not url_path.startswith("/"):
        errs.append(f.invalid(at, url_path, "must start with a '/'"))
    to_check = url_path[1:]
    if to_check.endswith("/"):
        to_check = to_check[:-1]
    for i, step in enumerate(to_check.split("/")):
        if not step:
            errs.append(f.invalid(at, url_path, f"segment[{i}] may not be empty"))
            continue
        errs += [f.invalid(at, url_path, f"segment[{i}]: {m}") for m in is_dns1123_subdomain(step)]
    return errs


def _client_config_errors(config: WebhookClientConfig, path: str) -> list[f.FieldError]:
    if (config.url is None) == (config.service is None):
        return [f.required(f.child(path, "clientConfig"), "exactly one of url or service is required")]
    if config.url is not None:
        return _url_errors(config.url, f.child(f.child(path, "clientConfig"), "url"))
    service = config.service
    assert service is not None
    return _service_errors(f.child(f.child(path, "clientConfig"), "service"), service.name, service.namespace,
                           service.path, service.port)


def _webhook_errors(hook: ValidatingWebhook, opts: _Options, path: str) -> list[f.FieldError]:
    """validateValidatingWebhook / validateMutatingWebhook."""
    errs = _fully_qualified_name_errors(hook.name, f.child(path, "name"))
    for i, rule in enumerate(hook.rules or ()):
        errs += rule_errors(rule, f.index(f.child(path, "rules"), i))
    if hook.failure_policy is not None and hook.failure_policy not in FAILURE_POLICIES:
        errs.append(f.not_supported(f.child(path, "failurePolicy"), hook.failure_policy, FAILURE_POLICIES))
    if hook.match_policy is not None and hook.match_policy not in MATCH_POLICIES:
        errs.append(f.not_supported(f.child(path, "matchPolicy"), hook.match_policy, MATCH_POLICIES))
    allowed = NO_SIDE_EFFECTS if opts.require_no_side_effects else SIDE_EFFECTS
    if hook.side_effects is None:
        errs.append(f.required(f.child(path, "sideEffects"), f"must specify one of {', '.join(allowed)}"))
    elif hook.side_effects not in allowed:
        errs.append(f.not_supported(f.child(path, "sideEffects"), hook.side_effects, allowed))
    if hook.timeout_seconds is not None and not 1 <= hook.timeout_seconds <= 30:
        errs.append(f.invalid(f.child(path, "timeoutSeconds"), hook.timeout_seconds,
                              "the timeout value must be between 1 and 30 seconds"))
    if hook.namespace_selector is not None:
        errs += label_selector_errors(hook.namespace_selector, f.child(path, "namespaceSelector"))
    if hook.object_selector is not None:
        errs += label_selector_errors(hook.object_selector, f.child(path, "objectSelector"))
    if isinstance(hook, MutatingWebhook) and hook.reinvocation_policy is not None \
            and hook.reinvocation_policy not in REINVOCATION_POLICIES:
        errs.append(f.not_supported(f.child(path, "reinvocationPolicy"), hook.reinvocation_policy,
                                    REINVOCATION_POLICIES))
    errs += _client_config_errors(hook.client_config, path)
    if not opts.ignore_match_conditions:
        errs += match_conditions_errors(hook.match_conditions or [], opts, f.child(path, "matchConditions"))
    return errs


def _review_versions_errors(versions: list[str], require_recognized: bool, path: str) -> list[f.FieldError]:
    if not versions:
        return [f.required(path, f"must specify one of {', '.join(REVIEW_VERSIONS)}")]
    errs: list[f.FieldError] = []
    seen: set[str] = set()
    for i, version in enumerate(versions):
        if version in seen:
            errs.append(f.invalid(f.index(path, i), version, "duplicate version"))
            continue
        seen.add(version)
        errs += [f.invalid(f.index(path, i), version, m) for m in is_dns1035_label(version)]
    if require_recognized and not seen.intersection(REVIEW_VERSIONS):
        errs.append(f.invalid(path, versions, f"must include at least one of {', '.join(REVIEW_VERSIONS)}"))
    return errs


_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035 = re.compile(_DNS1035_FMT)
_DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                "alphabetic character, and end with an alphanumeric character")


def is_dns1035_label(value: str) -> list[str]:
    """IsDNS1035Label."""
    errs = [max_len_error(63)] if len(value) > 63 else []
    if not _DNS1035.fullmatch(value):
        errs.append(regex_error(_DNS1035_MSG, _DNS1035_FMT, "my-name", "abc-123"))
    return errs


def webhook_configuration_errors(config: WebhookConfiguration, old: WebhookConfiguration | None = None) -> list[f.FieldError]:
    """ValidateValidatingWebhookConfiguration / ValidateMutatingWebhookConfiguration, and their Update forms
    when ``old`` is given."""
    opts = _Options()
    if old is not None:
        old_hooks = old.webhooks or []
        names = [h.name for h in old_hooks]
        new_conditions = [h.match_conditions for h in config.webhooks or []]
        opts = _Options(
            ignore_match_conditions=new_conditions == [h.match_conditions for h in old_hooks],
            require_no_side_effects=all(h.side_effects in NO_SIDE_EFFECTS for h in old_hooks),
            require_recognized_review_version=all(
                not h.admission_review_versions or set(h.admission_review_versions).intersection(REVIEW_VERSIONS)
                for h in old_hooks),
            require_unique_names=len(set(names)) == len(names))
    errs = validate_object_meta(config.metadata, False, name_is_dns_subdomain)
    seen: set[str] = set()
    for i, hook in enumerate(config.webhooks or ()):
        at = f.index("webhooks", i)
        errs += _webhook_errors(hook, opts, at)
        errs += _review_versions_errors(hook.admission_review_versions or [], opts.require_recognized_review_version,
                                        f.child(at, "admissionReviewVersions"))
        if opts.require_unique_names and hook.name:
            if hook.name in seen:
                errs.append(f.duplicate(f.child(at, "name"), hook.name))
            seen.add(hook.name)
    return errs


# --- CEL ----------------------------------------------------------------------------------------------------

def _cel_errors(expression: str, returns: str, declarations: Declarations, path: str) -> list[f.FieldError]:
    compiled = compile_admission(expression, returns, declarations)
    return [f.invalid(path, expression, compiled.error)] if compiled.error else []


def match_conditions_errors(conditions: list[MatchCondition], opts: _Options, path: str) -> list[f.FieldError]:
    errs = [f.too_many(path, len(conditions), MAX_MATCH_CONDITIONS)] if len(conditions) > MAX_MATCH_CONDITIONS else []
    declarations = Declarations(params=opts.params_in_match_conditions, authorizer=True)
    seen: set[str] = set()
    for i, condition in enumerate(conditions):
        at = f.index(path, i)
        expression = condition.expression.strip()
        if not expression:
            errs.append(f.required(f.child(at, "expression")))
        else:
            errs += _cel_errors(expression, "bool", declarations, f.child(at, "expression"))
        if not condition.name:
            errs.append(f.required(f.child(at, "name")))
        else:
            errs += [f.invalid(f.child(at, "name"), condition.name, m) for m in is_qualified_name(condition.name)]
            if condition.name in seen:
                errs.append(f.duplicate(f.child(at, "name"), condition.name))
            seen.add(condition.name)
    return errs


def _variable_errors(variable: Variable, declarations: Declarations, path: str) -> list[f.FieldError]:
    errs = []
    if not variable.name.strip():
        errs.append(f.required(f.child(path, "name"), "name is not specified"))
    elif not _CEL_IDENTIFIER.match(variable.name) or variable.name in _CEL_RESERVED:
        errs.append(f.invalid(f.child(path, "name"), variable.name, "name is not a valid CEL identifier"))
    if not variable.expression.strip():
        errs.append(f.required(f.child(path, "expression"), "expression is not specified"))
    else:
        errs += _cel_errors(variable.expression, "", declarations, f.child(path, "expression"))
    return errs


def _validation_errors(validation: Validation, declarations: Declarations, message_declarations: Declarations,
                       path: str) -> list[f.FieldError]:
    errs = []
    if not validation.expression.strip():
        errs.append(f.required(f.child(path, "expression"), "expression is not specified"))
    else:
        errs += _cel_errors(validation.expression, "bool", declarations, f.child(path, "expression"))
    message_expression = validation.message_expression or ""
    if message_expression and not message_expression.strip():
        errs.append(f.invalid(f.child(path, "messageExpression"), message_expression, "must be non-empty if specified"))
    elif message_expression:
        errs += _cel_errors(message_expression, "string", message_declarations, f.child(path, "messageExpression"))
    message = validation.message or ""
    if message and not message.strip():
        errs.append(f.invalid(f.child(path, "message"), message, "message must be non-empty if specified"))
    elif re.search(r"[\n\r]", message.strip()):
        errs.append(f.invalid(f.child(path, "message"), message, "message must not contain line breaks"))
    if validation.reason is not None and validation.reason not in REASONS:
        errs.append(f.not_supported(f.child(path, "reason"), validation.reason, REASONS))
    return errs


# --- policies and bindings ----------------------------------------------------------------------------------

def _group_version(api_version: str) -> tuple[str, str] | None:
    if api_version in ("", "/"):
        return "", ""
    if api_version.count("/") == 0:
        return "", api_version
    if api_version.count("/") == 1:
        group, _, version = api_version.partition("/")
        return group, version
    return None


def _param_kind_errors(kind: ParamKind, path: str) -> list[f.FieldError]:
    errs = []
    at = f.child(path, "apiVersion")
    gv = _group_version(kind.api_version)
    if not kind.api_version:
        errs.append(f.required(at))
    elif gv is None:
        errs.append(f.invalid(at, kind.api_version, f"unexpected GroupVersion string: {kind.api_version}"))
    else:
        group, version = gv
        if group and (problems := is_dns1123_subdomain(group)):
            errs.append(f.invalid(at, group, ",".join(problems)))
        if not version:
            errs.append(f.invalid(at, kind.api_version, "version must be specified"))
        elif problems := is_dns1035_label(version):
            errs.append(f.invalid(at, version, ",".join(problems)))
    if not kind.kind:
        errs.append(f.required(f.child(path, "kind")))
    elif problems := is_dns1035_label(kind.kind.lower()):
        errs.append(f.invalid(f.child(path, "kind"), kind.kind,
                              "may have mixed case, but should otherwise match: " + ",".join(problems)))
    return errs


def match_resources_errors(match: MatchResources | None, path: str) -> list[f.FieldError]:
    if match is None:
        return []
    errs = []
    if match.match_policy is None:
        errs.append(f.required(f.child(path, "matchPolicy")))
    elif match.match_policy not in MATCH_POLICIES:
        errs.append(f.not_supported(f.child(path, "matchPolicy"), match.match_policy, MATCH_POLICIES))
    for key, selector in (("namespaceSelector", match.namespace_selector), ("objectSelector", match.object_selector)):
        if selector is None:
            errs.append(f.required(f.child(path, key)))
        else:
            errs += label_selector_errors(selector, f.child(path, key))
    for key, rules in (("resourceRules", match.resource_rules), ("excludeResourceRules", match.exclude_resource_rules)):
        for i, rule in enumerate(rules or ()):
            errs += _named_rule_errors(rule, f.index(f.child(path, key), i))
    return errs


def policy_errors(policy: ValidatingAdmissionPolicy, old: ValidatingAdmissionPolicy | None = None) -> list[f.FieldError]:
    """ValidateValidatingAdmissionPolicy (and its Update form, which compiles unchanged match conditions no
    more)."""
    spec = policy.spec
    ignore_conditions = old is not None and old.spec.param_kind == spec.param_kind \
        and old.spec.match_conditions == spec.match_conditions
    has_params = spec.param_kind is not None
    opts = _Options(ignore_match_conditions=ignore_conditions, params_in_match_conditions=has_params)
    composed = bool(spec.variables)
    declarations = Declarations(params=has_params, authorizer=True, variables=composed)
    # (a messageExpression may read params exactly when match conditions may; never the authorizer)
    message_declarations = Declarations(params=has_params, variables=composed)
    errs = validate_object_meta(policy.metadata, False, name_is_dns_subdomain)
    path = "spec"
    if spec.failure_policy is None:
        errs.append(f.required(f.child(path, "failurePolicy")))
    elif spec.failure_policy not in FAILURE_POLICIES:
        errs.append(f.not_supported(f.child(path, "failurePolicy"), spec.failure_policy, FAILURE_POLICIES))
    if spec.param_kind is not None:
        errs += _param_kind_errors(spec.param_kind, f.child(path, "paramKind"))
    if spec.match_constraints is None:
        errs.append(f.required(f.child(path, "matchConstraints")))
    else:
        errs += match_resources_errors(spec.match_constraints, f.child(path, "matchConstraints"))
        if not spec.match_constraints.resource_rules:  # (the rules give the expressions their types)
            errs.append(f.required("spec.matchConstraints.resourceRules"))
    if not opts.ignore_match_conditions:
        errs += match_conditions_errors(spec.match_conditions or [], opts, f.child(path, "matchConditions"))
    for i, variable in enumerate(spec.variables or ()):
        errs += _variable_errors(variable, declarations, f.index(f.child(path, "variables"), i))
    if not spec.validations and not spec.audit_annotations:
        detail = "validations or auditAnnotations must contain at least one item"
        return errs + [f.required(f.child(path, "validations"), detail),
                       f.required(f.child(path, "auditAnnotations"), detail)]
    for i, validation in enumerate(spec.validations or ()):
        errs += _validation_errors(validation, declarations, message_declarations,
                                   f.index(f.child(path, "validations"), i))
    annotations = spec.audit_annotations or []
    if len(annotations) > MAX_AUDIT_ANNOTATIONS:
        errs.append(f.invalid(f.child(path, "auditAnnotations"), [{"key": a.key, "valueExpression": a.value_expression}
                                                                  for a in annotations],
                              f"must not have more than {MAX_AUDIT_ANNOTATIONS} auditAnnotations"))
    keys: set[str] = set()
    for i, annotation in enumerate(annotations):
        at = f.index(f.child(path, "auditAnnotations"), i)
        if policy.metadata.name:
            qualified = f"{policy.metadata.name}/{annotation.key}"
            errs += [f.invalid(f.child(at, "key"), qualified, m) for m in is_qualified_name(qualified)]
        else:
            errs.append(f.invalid(f.child(at, "key"), annotation.key, "requires metadata.name be non-empty"))
        value = annotation.value_expression.strip()
        if not value:
            errs.append(f.required(f.child(at, "valueExpression"), "valueExpression is not specified"))
        elif len(value) > MAX_AUDIT_VALUE_EXPRESSION:
            errs.append(f.required(f.child(at, "valueExpression"),
                                   f"must not exceed {MAX_AUDIT_VALUE_EXPRESSION} bytes in length"))
        else:
            compiled = compile_admission(value, "", declarations)
            if compiled.error:
                errs.append(f.invalid(f.child(at, "valueExpression"), annotation.value_expression, compiled.error))
        if annotation.key in keys:
            errs.append(f.duplicate(f.child(at, "key"), annotation.key))
        keys.add(annotation.key)
    return errs


def _param_ref_errors(ref: ParamRef | None, path: str) -> list[f.FieldError]:
    if ref is None:
        return []
    errs = []
    if ref.name:
        errs += [f.invalid(f.child(path, "name"), ref.name, m) for m in path_segment_problems(ref.name)]
        if ref.selector is not None:
            errs.append(f.forbidden(f.child(path, "name"), "name and selector are mutually exclusive"))
    if ref.selector is not None:
        errs += label_selector_errors(ref.selector, f.child(path, "selector"))
        if ref.name:
            errs.append(f.forbidden(f.child(path, "selector"), "name and selector are mutually exclusive"))
    if not ref.name and ref.selector is None:
        errs.append(f.required(path, "one of name or selector must be specified"))
    action = ref.parameter_not_found_action
    if not action:
        errs.append(f.required(f.child(path, "parameterNotFoundAction")))
    elif action not in ("Deny", "Allow"):
        errs.append(f.not_supported(f.child(path, "parameterNotFoundAction"), action, ["Deny", "Allow"]))
    return errs


def _validation_actions_errors(actions: list[str], path: str) -> list[f.FieldError]:
    errs = []
    seen: set[str] = set()
    for i, action in enumerate(actions):
        if action not in VALIDATION_ACTIONS:
            errs.append(f.not_supported(f.index(path, i), action, VALIDATION_ACTIONS))
        if action in seen:
            errs.append(f.duplicate(f.index(path, i), action))
        seen.add(action)
    if {"Deny", "Warn"} <= seen:
        errs.append(f.invalid(path, actions, "must not contain both Deny and Warn (repeating the same validation "
                                             "failure information in the API response and headers serves no purpose)"))
    if not seen:
        errs.append(f.required(path, "at least one validation action is required"))
    return errs


def binding_errors(binding: ValidatingAdmissionPolicyBinding) -> list[f.FieldError]:
    """ValidateValidatingAdmissionPolicyBinding (the same rules on update)."""
    spec = binding.spec
    errs = validate_object_meta(binding.metadata, False, name_is_dns_subdomain)
    if not spec.policy_name:
        errs.append(f.required("spec.policyName"))
    else:
        errs += [f.invalid("spec.policyName", spec.policy_name, m) for m in name_is_dns_subdomain(spec.policy_name, False)]
    errs += _param_ref_errors(spec.param_ref, "spec.paramRef")
    errs += match_resources_errors(spec.match_resources, "spec.matchResources")
    return errs + _validation_actions_errors(spec.validation_actions or [], "spec.validationActions")


def policy_status_errors(policy: ValidatingAdmissionPolicy) -> list[f.FieldError]:
    """ValidateValidatingAdmissionPolicyStatusUpdate: each type-checking warning has its text and field."""
    errs: list[f.FieldError] = []
    checking = policy.status.type_checking if policy.status is not None else None
    for i, warning in enumerate((checking.expression_warnings if checking is not None else None) or ()):
        at = f.index("status.typeChecking.expressionWarnings", i)
        if not warning.warning:
            errs.append(f.required(f.child(at, "warning")))
        if not warning.field_ref.strip():
            errs.append(f.required(f.child(at, "fieldRef")))
    return errs

