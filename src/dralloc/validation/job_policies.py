"""ValidateJobSpec's rules of a Job's completion mode, per-index backoff, success policy and pod replacement
policy (``pkg/apis/batch/validation``), with kube-apiserver's field paths and texts:

* an Indexed Job needs ``completions``; ``backoffLimitPerIndex`` and ``maxFailedIndexes`` are not negative,
  need Indexed completion, and ``maxFailedIndexes`` needs ``backoffLimitPerIndex`` and is at most
  ``completions`` (and 100000);
* a ``successPolicy`` needs Indexed completion and 1 to 20 rules, each with ``succeededCount`` or
  ``succeededIndexes``: the indexes a well formed, increasing list below ``completions`` (``0,2-4``, at most
  64 KiB), the count not negative, at most ``completions`` and at most the number of those indexes;
* a pod failure policy has at most 20 rules, each with a known action (``FailIndex`` needs
  ``backoffLimitPerIndex``) and either an exit-code requirement (``In`` or ``NotIn``, a container of the
  template, 1 to 255 ordered, distinct values, no 0 with ``In``) or up to 20 pod-condition patterns (a
  qualified type, a ``True``/``False``/``Unknown`` status);
* ``podReplacementPolicy`` is ``Failed`` or ``TerminatingOrFailed`` (``Failed`` only, with a pod failure
  policy)."""

from __future__ import annotations

import re
from typing import Any

from dralloc.api.batch_v1 import JobSpec
from dralloc.validation import field as f
from dralloc.validation.formats import is_qualified_name
from dralloc.validation.quantities import NEGATIVE

MAX_FAILED_INDEXES = 100_000
MAX_SUCCESS_POLICY_RULES = 20
MAX_SUCCEEDED_INDEXES_LENGTH = 64 * 1024
MAX_POD_FAILURE_POLICY_RULES = 20
MAX_EXIT_CODE_VALUES = 255
MAX_POD_CONDITION_PATTERNS = 20
# (sorted, as upstream lists its sets)
POD_FAILURE_ACTIONS = ["Count", "FailIndex", "FailJob", "Ignore"]
EXIT_CODE_OPERATORS = ["In", "NotIn"]
CONDITION_STATUSES = ["False", "True", "Unknown"]
_GO_INT = re.compile(r"[+-]?[0-9]+")  # what strconv.Atoi reads
_INT64 = 2**63


def _nonnegative(value: int | None, path: str) -> list[f.FieldError]:
    return [f.invalid(path, value, NEGATIVE)] if value is not None and value < 0 else []


def _atoi(text: str) -> int | None:
    value = int(text) if _GO_INT.fullmatch(text) else None
    return value if value is not None and -_INT64 <= value < _INT64 else None


def _interval(text: str, completions: int) -> tuple[int, int]:
    """parseIndexInterval: ``x`` or ``x-y`` (x < y), both below ``completions``; ValueError with upstream's
    text otherwise."""
    limits = text.split("-")
    if len(limits) > 2:
        raise ValueError(f"the fragment {f.go_quote(text)} violates the requirement that an index interval can "
                         "have at most two parts separated by '-'")
    bounds = []
    for part in limits:
        value = _atoi(part)
        if value is None:
            raise ValueError(f"cannot convert string to integer for index: {f.go_quote(part)}")
        if value >= completions:
            raise ValueError(f"too large index: {f.go_quote(part)}")
        bounds.append(value)
    if len(bounds) == 2 and bounds[0] >= bounds[1]:
        raise ValueError(f"non-increasing order, previous: {bounds[0]}, current: {bounds[1]}")
    return bounds[0], bounds[-1]


def index_list_total(text: str, completions: int) -> int:
    """validateIndexesFormat: how many indexes a compressed list names (ValueError: not well formed)."""
    if not text:
        return 0
    total, last = 0, None
    for part in text.split(","):
        first, end = _interval(part, completions)
        if last is not None and last >= first:
            raise ValueError(f"non-increasing order, previous: {last}, current: {first}")
        total += end - first + 1
        last = end
    return total


def _rule_errors(rule: Any, completions: int | None, path: str) -> list[f.FieldError]:
    """validateSuccessPolicyRule."""
    rule = rule if isinstance(rule, dict) else {}
    count, indexes = rule.get("succeededCount"), rule.get("succeededIndexes")
    errs = []
    if count is None and indexes is None:
        errs.append(f.required(path, "at least one of succeededCount or succeededIndexes must be specified"))
    total = 0
    if isinstance(indexes, str):
        where = f.child(path, "succeededIndexes")
        if len(indexes) > MAX_SUCCEEDED_INDEXES_LENGTH:
            errs.append(f.too_long(where, MAX_SUCCEEDED_INDEXES_LENGTH))
        if completions is not None:
            try:
                total = index_list_total(indexes, completions)
            except ValueError as exc:
                errs.append(f.invalid(where, indexes, f"error parsing succeededIndexes: {exc}"))
    if isinstance(count, int) and not isinstance(count, bool):
        where = f.child(path, "succeededCount")
        errs += _nonnegative(count, where)
        if completions is not None and count > completions:
            errs.append(f.invalid(where, count, f"must be less than or equal to {completions} (the number of "
                                                "specified completions)"))
        if indexes is not None and count > total:
            errs.append(f.invalid(where, count, f"must be less than or equal to {total} (the number of indexes "
                                                "in the specified succeededIndexes field)"))
    return errs


def job_policy_errors(spec: JobSpec, path: str = "spec") -> list[f.FieldError]:
    """The completion-mode, per-index, success-policy and replacement-policy rules of ``spec``."""
    errs: list[f.FieldError] = []
    indexed = spec.completion_mode == "Indexed"
    per_index, most = spec.backoff_limit_per_index, spec.max_failed_indexes
    errs += _nonnegative(per_index, f.child(path, "backoffLimitPerIndex"))
    if most is not None:
        errs += _nonnegative(most, f.child(path, "maxFailedIndexes"))
        if per_index is None:
            errs.append(f.required(f.child(path, "backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
    if indexed:
        if spec.completions is None and spec.parallelism is not None:  # (SetDefaults_Job gives 1 when neither is set)
            errs.append(f.required(f.child(path, "completions"), "when completion mode is Indexed"))
        if spec.completions is not None and most is not None and most > spec.completions:
            errs.append(f.invalid(f.child(path, "maxFailedIndexes"), most, "must be less than or equal to completions"))
        if most is not None and most > MAX_FAILED_INDEXES:
            errs.append(f.invalid(f.child(path, "maxFailedIndexes"), most,
                                  f"must be less than or equal to {MAX_FAILED_INDEXES}"))
    elif spec.completion_mode in (None, "NonIndexed"):
        if per_index is not None:
            errs.append(f.invalid(f.child(path, "backoffLimitPerIndex"), per_index, "requires indexed completion mode"))
        if most is not None:
            errs.append(f.invalid(f.child(path, "maxFailedIndexes"), most, "requires indexed completion mode"))
    policy = spec.success_policy
    if policy is not None:
        where = f.child(path, "successPolicy")
        if not indexed:
            errs.append(f.invalid(where, policy, "requires indexed completion mode"))
        else:
            rules = policy.get("rules") if isinstance(policy, dict) else None
            rules = rules if isinstance(rules, list) else []
            rules_path = f.child(where, "rules")
            if not rules:
                errs.append(f.required(rules_path, "at least one rules must be specified when the successPolicy is "
                                                   "specified"))
            if len(rules) > MAX_SUCCESS_POLICY_RULES:
                errs.append(f.too_many(rules_path, len(rules), MAX_SUCCESS_POLICY_RULES))
            for i, rule in enumerate(rules):
                errs += _rule_errors(rule, spec.completions, f.index(rules_path, i))
    errs += _pod_failure_policy_errors(spec, f.child(path, "podFailurePolicy"))
    return errs + _replacement_errors(spec, f.child(path, "podReplacementPolicy"))


def _pod_failure_policy_errors(spec: JobSpec, path: str) -> list[f.FieldError]:
    """validatePodFailurePolicy: at most 20 rules, each with a known action (FailIndex only with per-index
    backoff) and exactly one of its exit-code requirement and its pod-condition patterns."""
    policy = spec.pod_failure_policy
    if not isinstance(policy, dict):
        return []
    rules = policy.get("rules")
    rules = rules if isinstance(rules, list) else []
    rules_path = f.child(path, "rules")
    errs = [f.too_many(rules_path, len(rules), MAX_POD_FAILURE_POLICY_RULES)] \
        if len(rules) > MAX_POD_FAILURE_POLICY_RULES else []
    template = spec.template.spec
    names = {c.name for c in [*template.containers, *(template.init_containers or ())]}
    for i, rule in enumerate(rules):
        if isinstance(rule, dict):
            errs += _pod_failure_rule_errors(spec, rule, f.index(rules_path, i), names)
    return errs


def _pod_failure_rule_errors(spec: JobSpec, rule: dict[str, Any], path: str, names: set[str]) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    action_path = f.child(path, "action")
    action = rule.get("action") or ""
    if not action:
        errs.append(f.required(action_path, f"valid values: {_go_list(POD_FAILURE_ACTIONS)}"))
    elif action == "FailIndex":
        if spec.backoff_limit_per_index is None:
            errs.append(f.invalid(action_path, action, "requires the backoffLimitPerIndex to be set"))
    elif action not in POD_FAILURE_ACTIONS:
        errs.append(f.not_supported(action_path, action, POD_FAILURE_ACTIONS))
    exit_codes = rule.get("onExitCodes")
    conditions = rule.get("onPodConditions") or []
    if isinstance(exit_codes, dict):
        errs += _exit_code_errors(exit_codes, f.child(path, "onExitCodes"), names)
    if conditions:
        errs += _pod_condition_errors(conditions, f.child(path, "onPodConditions"))
    if exit_codes is not None and conditions:
        errs.append(f.invalid(path, f.OMIT, "specifying both OnExitCodes and OnPodConditions is not supported"))
    if exit_codes is None and not conditions:
        errs.append(f.invalid(path, f.OMIT, "specifying one of OnExitCodes and OnPodConditions is required"))
    return errs


def _exit_code_errors(requirement: dict[str, Any], path: str, names: set[str]) -> list[f.FieldError]:
    """validatePodFailurePolicyRuleOnExitCodes."""
    errs: list[f.FieldError] = []
    operator = requirement.get("operator") or ""
    operator_path = f.child(path, "operator")
    if not operator:
        errs.append(f.required(operator_path, f"valid values: {_go_list(EXIT_CODE_OPERATORS)}"))
    elif operator not in EXIT_CODE_OPERATORS:
        errs.append(f.not_supported(operator_path, operator, EXIT_CODE_OPERATORS))
    container = requirement.get("containerName")
    if container is not None and container not in names:
        errs.append(f.invalid(f.child(path, "containerName"), container,
                              "must be one of the container or initContainer names in the pod template"))
    values = requirement.get("values") or []
    values_path = f.child(path, "values")
    if not values:
        errs.append(f.invalid(values_path, values, "at least one value is required"))
    elif len(values) > MAX_EXIT_CODE_VALUES:
        errs.append(f.too_many(values_path, len(values), MAX_EXIT_CODE_VALUES))
    seen: set[int] = set()
    for j, value in enumerate(values):
        if operator == "In" and value == 0:
            errs.append(f.invalid(f.index(values_path, j), value, "must not be 0 for the In operator"))
        if value in seen:
            errs.append(f.duplicate(f.index(values_path, j), value))
        seen.add(value)
    if any(values[j - 1] > values[j] for j in range(1, len(values))):
        errs.append(f.invalid(values_path, values, "must be ordered"))
    return errs


def _pod_condition_errors(patterns: list[Any], path: str) -> list[f.FieldError]:
    """validatePodFailurePolicyRuleOnPodConditions."""
    errs = [f.too_many(path, len(patterns), MAX_POD_CONDITION_PATTERNS)] \
        if len(patterns) > MAX_POD_CONDITION_PATTERNS else []
    for j, pattern in enumerate(patterns):
        if not isinstance(pattern, dict):
            continue
        where = f.index(path, j)
        kind = str(pattern.get("type") or "")
        errs += [f.invalid(f.child(where, "type"), kind, m) for m in is_qualified_name(kind)]
        status = pattern.get("status") or ""
        if not status:
            errs.append(f.required(f.child(where, "status"), f"valid values: {_go_list(CONDITION_STATUSES)}"))
        elif status not in CONDITION_STATUSES:
            errs.append(f.not_supported(f.child(where, "status"), status, CONDITION_STATUSES))
    return errs


def _go_list(values: list[str]) -> str:
    """Go's %q of a []string: ["a" "b"]."""
    return "[" + " ".join(f.go_quote(v) for v in values) + "]"


def _replacement_errors(spec: JobSpec, path: str) -> list[f.FieldError]:
    """validatePodReplacementPolicy."""
    policy = spec.pod_replacement_policy
    if policy is None:
        return []
    if spec.pod_failure_policy is not None:
        if policy != "Failed":
            return [f.not_supported(path, policy, ["Failed"])]
    elif policy not in ("Failed", "TerminatingOrFailed"):
        return [f.not_supported(path, policy, ["Failed", "TerminatingOrFailed"])]
    return []
