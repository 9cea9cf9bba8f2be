"""ValidateJobSpec's rules of a Job's completion mode, per-index backoff, success policy and pod replacement
policy (``pkg/apis/batch/validation``), with kube-apiserver's field paths and texts:

* an Indexed Job needs ``completions``; ``backoffLimitPerIndex`` and ``maxFailedIndexes`` are not negative,
  need Indexed completion, and ``maxFailedIndexes`` needs ``backoffLimitPerIndex`` and is at most
  ``completions`` (and 100000);
* a ``successPolicy`` needs Indexed completion and 1 to 20 rules, each with ``succeededCount`` or
  ``succeededIndexes``: the indexes a well formed, increasing list below ``completions`` (``0,2-4``, at most
  64 KiB), the count not negative, at most ``completions`` and at most the number of those indexes;
* a pod failure policy's ``FailIndex`` rule needs ``backoffLimitPerIndex``;
* ``podReplacementPolicy`` is ``Failed`` or ``TerminatingOrFailed`` (``Failed`` only, with a pod failure
  policy)."""

from __future__ import annotations

import re
from typing import Any

from dralloc.api.batch_v1 import JobSpec
from dralloc.validation import field as f
from dralloc.validation.quantities import NEGATIVE

MAX_FAILED_INDEXES = 100_000
MAX_SUCCESS_POLICY_RULES = 20
MAX_SUCCEEDED_INDEXES_LENGTH = 64 * 1024
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
    errs += _fail_index_errors(spec, f.child(path, "podFailurePolicy"))
    return errs + _replacement_errors(spec, f.child(path, "podReplacementPolicy"))


def _fail_index_errors(spec: JobSpec, path: str) -> list[f.FieldError]:
    """validatePodFailurePolicyRule's FailIndex rule: it needs per-index backoff."""
    policy = spec.pod_failure_policy
    rules = policy.get("rules") if isinstance(policy, dict) else None
    errs = []
    for i, rule in enumerate(rules if isinstance(rules, list) else []):
        if isinstance(rule, dict) and rule.get("action") == "FailIndex" and spec.backoff_limit_per_index is None:
            errs.append(f.invalid(f.child(f.index(f.child(path, "rules"), i), "action"), "FailIndex",
                                  "requires the backoffLimitPerIndex to be set"))
    return errs


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
