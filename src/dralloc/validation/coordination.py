"""coordination.k8s.io Lease rules of kube-apiserver (pkg/apis/coordination/validation)."""

from __future__ import annotations

from dralloc.api.coordination_v1 import LeaseSpec
from dralloc.validation import field as f
from dralloc.validation.formats import is_qualified_name

LEASE_STRATEGIES = ["OldestEmulationVersion"]


def _strategy(strategy: str, path: str) -> list[f.FieldError]:
    # (upstream names the field twice: the caller's path already ends in "strategy")
    where = f.child(path, "strategy")
    if len(strategy.split("/")) == 1:
        return [] if strategy in LEASE_STRATEGIES else [f.not_supported(where, strategy, LEASE_STRATEGIES)]
    return [f.invalid(where, strategy, m) for m in is_qualified_name(strategy)]


def validate_lease_spec(spec: LeaseSpec | None, path: str = "spec") -> list[f.FieldError]:
    """A positive duration, no negative transition count, a known or qualified strategy, and a preferred
    holder only with a strategy (any holder identity is valid)."""
    if spec is None:
        return []
    errs: list[f.FieldError] = []
    if spec.lease_duration_seconds is not None and spec.lease_duration_seconds <= 0:
        errs.append(f.invalid(f.child(path, "leaseDurationSeconds"), spec.lease_duration_seconds,
                              "must be greater than 0"))
    if spec.lease_transitions is not None and spec.lease_transitions < 0:
        errs.append(f.invalid(f.child(path, "leaseTransitions"), spec.lease_transitions,
                              "must be greater than or equal to 0"))
    if spec.strategy is not None:
        errs += _strategy(spec.strategy, f.child(path, "strategy"))
    if spec.preferred_holder and not spec.strategy:
        errs.append(f.forbidden(f.child(path, "preferredHolder"), "may only be specified if `strategy` is defined"))
    return errs
