"""The ValidatingAdmissionPolicy plugin's dispatch and validation (policy/validating/dispatcher.go, validator.go):
for each stored policy whose matchConstraints match the request, each of its bindings whose matchResources
match, each of the binding's params: the policy's matchConditions, then its validations, with its variables
evaluated when first read.

A validation that is not true denies the request with its reason (``Invalid`` by default, 422; ``Forbidden``
403; ``RequestEntityTooLarge`` 413) and the message of its messageExpression, its message or ``failed
expression: <expression>``, when the binding's validationActions hold ``Deny``; ``Warn`` adds it as a Warning;
``Audit`` would write an audit annotation, and this server keeps no audit log. An expression that fails to
evaluate, and a binding whose params cannot be found, follow the policy's failurePolicy. auditAnnotations are
compiled and validated but not evaluated (no audit log).

Policies, bindings, namespaces and params are read from the store's caches, so a write while no binding is
stored costs a look-up."""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from dralloc.api.admissionregistration_v1 import (
    ParamKind,
    ParamRef,
    ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
    Validation,
)
from dralloc.cel import CELRuntimeError, Program
from dralloc.cel.errors import CELError
from dralloc.server.admission.matching import Attributes, Obj, resources_match
from dralloc.server.auth.users import User
from dralloc.server.http.errors import ApiError
from dralloc.server.http.routing import Target
from dralloc.server.registry.kinds import CORE, GROUP_RESOURCES
from dralloc.server.uids import new_uid
from dralloc.store import SQLStore
from dralloc.store.cache import Key, cached
from dralloc.store.sqlite import SQLiteStore
from dralloc.validation.admission_cel import Declarations, compile_admission
from dralloc.validation.workloads import selector_matches

POLICIES = "validatingadmissionpolicies"
BINDINGS = "validatingadmissionpolicybindings"
_REASON_CODES = {"Forbidden": 403, "Invalid": 422, "RequestEntityTooLarge": 413}
MAX_MESSAGE_BYTES = 5 * 1024  # celconfig.MaxEvaluatedMessageExpressionSizeBytes


# --- compiled policies --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Check:
    """One validation, compiled."""

    validation: Validation
    program: Program | None
    error: str
    message: Program | None  # its messageExpression, when it compiles


@dataclass(frozen=True)
class Policy:
    """A stored policy, decoded and compiled once per version of it."""

    name: str
    spec: Any  # ValidatingAdmissionPolicySpec
    failure_policy: str
    conditions: tuple[tuple[str, Program | None, str], ...]  # (name, program, compile error)
    variables: tuple[tuple[str, Program | None, str], ...]
    checks: tuple[_Check, ...]


def _compile(policy: ValidatingAdmissionPolicy) -> Policy:
    spec = policy.spec
    params = spec.param_kind is not None
    composed = bool(spec.variables)
    declarations = Declarations(params=params, authorizer=True, variables=composed)
    condition_declarations = Declarations(params=params, authorizer=True)
    message_declarations = Declarations(params=params, variables=composed)

    def compiled(expression: str, returns: str, decls: Declarations) -> tuple[Program | None, str]:
        result = compile_admission(expression.strip() if returns == "bool" else expression, returns, decls)
        return result.program, result.error

    conditions = tuple((c.name, *compiled(c.expression, "bool", condition_declarations))
                       for c in spec.match_conditions or ())
    variables = tuple((v.name, *compiled(v.expression, "", declarations)) for v in spec.variables or ())
    checks = []
    for validation in spec.validations or ():
        program, error = compiled(validation.expression, "bool", declarations)
        message = None
        if (validation.message_expression or "").strip():
            message, _ = compiled(validation.message_expression or "", "string", message_declarations)
        checks.append(_Check(validation, program, error, message))
    return Policy(policy.metadata.name or "", spec, spec.failure_policy or "Fail", conditions, variables,
                  tuple(checks))


def _policies(objects: dict[Key, Obj]) -> dict[str, Policy]:
    found = {}
    for obj in objects.values():
        try:
            policy = msgspec.convert(obj, ValidatingAdmissionPolicy)
        except msgspec.ValidationError:
            continue
        found[policy.metadata.name or ""] = _compile(policy)
    return found


def _bindings(objects: dict[Key, Obj]) -> dict[str, list[ValidatingAdmissionPolicyBinding]]:
    """The bindings by the policy they bind, each policy's in name order."""
    by_policy: dict[str, list[ValidatingAdmissionPolicyBinding]] = {}
    for key in sorted(objects):
        try:
            binding = msgspec.convert(objects[key], ValidatingAdmissionPolicyBinding)
        except msgspec.ValidationError:
            continue
        by_policy.setdefault(binding.spec.policy_name, []).append(binding)
    return by_policy


# --- decisions ----------------------------------------------------------------------------------------------

@dataclass
class _Denial:
    policy: str
    binding: str | None
    message: str
    reason: str = ""


@dataclass
class _Outcome:
    denials: list[_Denial] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass
class Snapshot:
    """What the policies of a write read, taken before the write: the bindings by policy, the compiled
    policies, the request's namespace and each binding's params (or why they cannot be had). An update is
    admitted inside the store's transaction, where nothing may be read from the store: from this."""

    bindings: dict[str, list[ValidatingAdmissionPolicyBinding]]
    policies: dict[str, Policy]
    namespace: Obj | None
    params: dict[str, list[Obj | None] | str]  # by binding name; a str: the error collecting them

    def admit(self, attrs: Attributes) -> list[str]:
        """The ValidatingAdmissionPolicy admission of a write: an ApiError when a policy denies it, else the
        warnings its Warn bindings add."""
        outcome = _Outcome()
        for name in sorted(self.bindings):
            policy = self.policies.get(name)
            if policy is None or not resources_match(policy.spec.match_constraints, attrs, self.namespace):
                continue
            for binding in self.bindings[name]:
                if resources_match(binding.spec.match_resources, attrs, self.namespace):
                    self._dispatch(policy, binding, attrs, outcome)
        if outcome.denials:
            raise _forbidden(attrs, outcome.denials[0])
        return outcome.warnings

    def _dispatch(self, policy: Policy, binding: ValidatingAdmissionPolicyBinding, attrs: Attributes,
                  outcome: _Outcome) -> None:
        binding_name = binding.metadata.name or ""
        params = self.params.get(binding_name, [None])
        if isinstance(params, str):
            if policy.failure_policy == "Fail":
                outcome.denials.append(_Denial(policy.name, binding_name, f"failed to configure binding: {params}"))
            return
        namespace = None if attrs.resource == "namespaces" and not attrs.group else self.namespace
        for param in params:
            for message, reason in _validate(policy, attrs, param, namespace):
                for action in binding.spec.validation_actions or ():
                    if action == "Deny":
                        outcome.denials.append(_Denial(policy.name, binding_name, message, reason))
                    elif action == "Warn":
                        outcome.warnings.append(f"Validation failed for ValidatingAdmissionPolicy '{policy.name}' "
                                                f"with binding '{binding_name}': {message}")


class PolicyAdmission:
    """The ValidatingAdmissionPolicy admission of one store's writes: :meth:`snapshot` gives what a write is
    admitted with. While no binding is stored it costs a comparison: a store no other process writes to
    (SQLite) says when a binding was written through it, so the caches are read again only then; a shared one
    (PostgreSQL replicas) is read through its caches, which take in the others' writes within a second."""

    def __init__(self, store: SQLStore) -> None:
        self._store = store
        self._shared = not isinstance(store, SQLiteStore)
        self._none_at = -1  # the store's last write of a binding when there were none (-1: not looked yet)

    def snapshot(self, namespace: str) -> Snapshot | None:
        """The :class:`Snapshot` a write in ``namespace`` ("" cluster-scoped) is admitted with; None while no
        binding is stored."""
        if self._none_at == self._store.written(BINDINGS) and not self._shared:
            return None
        return self._snapshot(namespace)

    def _snapshot(self, namespace: str) -> Snapshot | None:
        store = self._store
        written = store.written(BINDINGS)  # (before the cache is read: a write meanwhile is seen next time)
        bindings = cached(store, BINDINGS).derived(_bindings)
        if not bindings:
            self._none_at = written
            return None
        self._none_at = -1
        policies = cached(store, POLICIES).derived(_policies)
        params: dict[str, list[Obj | None] | str] = {}
        for name, of_policy in bindings.items():
            policy = policies.get(name)
            if policy is None:
                continue
            for binding in of_policy:
                try:
                    params[binding.metadata.name or ""] = _params(store, policy.spec.param_kind,
                                                                 binding.spec.param_ref, namespace)
                except _ParamError as exc:
                    params[binding.metadata.name or ""] = str(exc)
        found = cached(store, "namespaces").get("", namespace) if namespace else None
        return Snapshot(bindings, policies, found, params)


def _forbidden(attrs: Attributes, denial: _Denial) -> ApiError:
    """admission.NewForbidden with the decision's reason and code, and the message as a cause."""
    if denial.binding is not None:
        message = (f"ValidatingAdmissionPolicy '{denial.policy}' with binding '{denial.binding}' denied request: "
                   f"{denial.message}")
    else:
        message = f"ValidatingAdmissionPolicy '{denial.policy}' denied request: {denial.message}"
    resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    qualified = f"{resource}.{attrs.group}" if attrs.group else resource
    text = f'{qualified} "{attrs.name}" is forbidden: {message}' if attrs.name else f"{qualified} is forbidden: {message}"
    reason = denial.reason or "Invalid"
    details: dict[str, Any] = {"name": attrs.name, "group": attrs.group, "kind": resource}
    details = {k: v for k, v in details.items() if v}
    details["causes"] = [{"message": message}]
    return ApiError(_REASON_CODES.get(reason, 422), text, reason=reason, details=details)


# --- params -------------------------------------------------------------------------------------------------

class _ParamError(Exception):
    pass


def _param_resource(store: SQLStore, kind: ParamKind) -> tuple[str, bool] | None:
    """The stored resource of a paramKind and whether it is namespaced: a served kind or a custom resource's."""
    group, _, version = kind.api_version.rpartition("/")
    table = CORE if not group else GROUP_RESOURCES.get(group, {})
    for resource in table.values():
        if resource.kind == kind.kind and version in resource.versions:
            return resource.name, resource.namespaced
    for crd in cached(store, "customresourcedefinitions").objects().values():
        spec = crd.get("spec") or {}
        names = spec.get("names") or {}
        if spec.get("group") == group and names.get("kind") == kind.kind and names.get("plural") \
                and any(v.get("name") == version for v in spec.get("versions") or () if isinstance(v, dict)):
            return str(names["plural"]), spec.get("scope") == "Namespaced"
    return None


def _params(store: SQLStore, kind: ParamKind | None, ref: ParamRef | None, namespace: str) -> list[Obj | None]:
    """generic.CollectParams: the params a binding evaluates its policy with ([None]: none)."""
    if kind is None or ref is None:
        return [None]
    found = _param_resource(store, kind)
    if found is None:
        raise _ParamError(f"paramKind kind `{kind.api_version}, Kind={kind.kind}` not known")
    resource, namespaced = found
    params_namespace = ""
    if namespaced:
        params_namespace = ref.namespace or namespace
        if not params_namespace:
            raise _ParamError("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")
    elif ref.namespace:
        raise _ParamError("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")
    objects = cached(store, resource).objects()
    params: list[Obj | None]
    if ref.name:
        param = objects.get((params_namespace, ref.name))
        params = [param] if param is not None else []
    else:
        selector = ref.selector
        assert selector is not None  # (validation: a name or a selector)
        params = [obj for (ns, _), obj in sorted(objects.items(), key=lambda item: item[0])
                  if ns == params_namespace and selector_matches(selector, (obj.get("metadata") or {}).get("labels") or {})]
    if not params and ref.parameter_not_found_action == "Deny":
        raise _ParamError("no params found for policy binding with `Deny` parameterNotFoundAction")
    return params


# --- evaluation ---------------------------------------------------------------------------------------------

_PENDING = object()


class _Variables(dict[str, Any]):
    """The policy's variables, each evaluated when first read (``variables.<name>``), as upstream's lazy
    composition."""

    def __init__(self, programs: tuple[tuple[str, Program | None, str], ...], activation: dict[str, Any]) -> None:
        super().__init__({name: _PENDING for name, _, _ in programs})
        self._programs = {name: (program, error) for name, program, error in programs}
        self._activation = activation

    def __getitem__(self, name: str) -> Any:
        value = dict.__getitem__(self, name)
        if value is not _PENDING:
            return value
        program, error = self._programs[name]
        try:
            if program is None:
                raise CELRuntimeError(error)
            value = program.evaluate(self._activation)
        except CELRuntimeError as exc:
            raise CELError(f'composited variable "{name}" fails to evaluate: {exc}') from None
        dict.__setitem__(self, name, value)
        return value


def request_of(attrs: Attributes) -> Obj:
    """The AdmissionRequest ``request`` is (its fields left empty are left out, as Go's JSON leaves them)."""
    kind = {"group": attrs.group, "version": attrs.version, "kind": attrs.kind}
    resource = {"group": attrs.group, "version": attrs.version, "resource": attrs.resource}
    request: Obj = {"uid": new_uid(), "kind": kind, "resource": resource, "requestKind": kind,
                    "requestResource": resource, "operation": attrs.operation, "userInfo": attrs.user}
    if attrs.subresource:
        request["subResource"] = request["requestSubResource"] = attrs.subresource
    if attrs.name:
        request["name"] = attrs.name
    if attrs.namespace:
        request["namespace"] = attrs.namespace
    if attrs.dry_run:
        request["dryRun"] = True
    return request


def namespace_object(namespace: Obj | None) -> Obj | None:
    """CreateNamespaceObject: the namespace's spec, status and identifying metadata."""
    if namespace is None:
        return None
    meta = {k: v for k, v in (namespace.get("metadata") or {}).items()
            if k not in ("managedFields", "ownerReferences", "selfLink")}
    return {"metadata": meta, "spec": namespace.get("spec") or {}, "status": namespace.get("status") or {}}


def _evaluation_error(expression: str, exc: CELRuntimeError) -> str:
    return f"expression '{expression}' resulted in error: {exc}"


def _validate(policy: Policy, attrs: Attributes, param: Obj | None, namespace: Obj | None) -> list[tuple[str, str]]:
    """validator.Validate: (message, reason) of each validation that denies; none when a match condition is
    false."""
    fail = policy.failure_policy == "Fail"
    activation: dict[str, Any] = {"object": attrs.object, "oldObject": attrs.old_object,
                                  "request": request_of(attrs), "namespaceObject": namespace_object(namespace),
                                  "authorizer": None}
    if policy.spec.param_kind is not None:
        activation["params"] = param
    errors = []
    for _, program, error in policy.conditions:
        expression = ""
        try:
            if program is None:
                raise CELRuntimeError(error)
            expression = program.expression
            if program.evaluate(activation) is False:
                return []
        except CELRuntimeError as exc:
            errors.append(_evaluation_error(expression, exc) if expression else str(exc))
    if errors:  # none false: the errors decide, by the failure policy
        return [(errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]", "")] if fail else []
    if policy.variables:
        activation["variables"] = _Variables(policy.variables, activation)
    results = []
    for check in policy.checks:
        validation = check.validation
        try:
            if check.program is None:
                raise CELRuntimeError(check.error)
            passed = check.program.evaluate(activation) is True
        except CELRuntimeError as exc:
            if fail:
                results.append((_evaluation_error(validation.expression, exc), ""))
            continue
        if not passed:
            results.append((_message(check, activation), validation.reason or "Invalid"))
    return results


def _message(check: _Check, activation: dict[str, Any]) -> str:
    """The message of a failed validation: its messageExpression's (a string of one line, not too long), else
    its message, else the expression."""
    message = ""
    if check.message is not None:
        try:
            value = check.message.evaluate({k: v for k, v in activation.items() if k != "authorizer"})
        except CELRuntimeError:
            value = None  # (upstream logs it and falls back)
        if isinstance(value, str):
            message = value.strip()
            if len(message.encode()) > MAX_MESSAGE_BYTES or "\n" in message:
                message = ""
    if not message and check.validation.message:
        message = check.validation.message.strip()
    return message or f"failed expression: {check.validation.expression.strip()}"


# --- the write path's entry ---------------------------------------------------------------------------------

USER_SCOPE_KEY = "dralloc.user"  # the request's authenticated User, in its ASGI scope


def user_info(user: User | None) -> Obj:
    """authentication/v1 UserInfo of the request's user (``request.userInfo``)."""
    return user.info() if user is not None else {}


WARNINGS_SCOPE_KEY = "dralloc.admission_warnings"  # what admission warns of, in the request's ASGI scope

Scope = MutableMapping[str, Any]


def add_warnings(scope: Scope | None, warnings: list[str]) -> None:
    """Add admission's ``warnings`` to the answer of the request of ``scope`` (None: a write of no client's)."""
    if warnings and scope is not None:
        collected = scope.setdefault(WARNINGS_SCOPE_KEY, [])
        # (a patch tried again after a lost race is admitted again: its warnings once)
        collected.extend(w for w in warnings if w not in collected)


def warnings_of(scope: Scope) -> list[str]:
    """What admission warned of while the request of ``scope`` was served."""
    found: list[str] = scope.get(WARNINGS_SCOPE_KEY) or []
    return found


def attributes(t: Target, operation: str, obj: Obj | None, old: Obj | None, dry: bool,
               scope: Scope | None) -> Attributes:
    """The admission attributes of a write of ``t`` (``obj`` as it would be stored; ``old`` as stored before an
    update; ``scope``: the request's, which says who asks)."""
    meta = (obj or old or {}).get("metadata") or {}
    return Attributes(operation, t.resource.group, t.version, t.resource.name, t.sub, t.resource.kind,
                      t.namespace if t.resource.namespaced else "", t.name or meta.get("name") or "", obj, old,
                      dry, t.resource.versions, user_info(scope.get(USER_SCOPE_KEY)) if scope is not None else {})
