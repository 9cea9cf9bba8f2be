"""scheduling.k8s.io PriorityClass rules of kube-apiserver (pkg/apis/scheduling/validation)."""

from __future__ import annotations

from dralloc.api.defaults import PREEMPT_LOWER_PRIORITY
from dralloc.api.scheduling_v1 import PriorityClass
from dralloc.validation import field as f
from dralloc.validation.meta import IMMUTABLE

HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PREFIX = "system-"
# the classes kube-apiserver creates at start: name -> (value, globalDefault)
SYSTEM_PRIORITY_CLASSES = {"system-node-critical": (2_000_001_000, False),
                           "system-cluster-critical": (2_000_000_000, False)}
PREEMPTION_POLICIES = [PREEMPT_LOWER_PRIORITY, "Never"]


def _system_class_problem(pc: PriorityClass) -> str | None:
    """Why a class with the system prefix is not one of the system classes as they are; None if it is."""
    name = pc.metadata.name or ""
    known = SYSTEM_PRIORITY_CLASSES.get(name)
    if known is None:
        return f"{name} is not a known system priority class"
    value, default = known
    if pc.value != value:
        return f"value of {name} PriorityClass must be {value}"
    if bool(pc.global_default) != default:
        return f"globalDefault of {name} PriorityClass must be {str(default).lower()}"
    return None


def validate_priority_class(pc: PriorityClass) -> list[f.FieldError]:
    """The class's own rules (its metadata is checked by the caller): a system name only for the system
    classes as they are, a user value at most one billion, a known preemption policy."""
    errs: list[f.FieldError] = []
    if (pc.metadata.name or "").startswith(SYSTEM_PREFIX):
        problem = _system_class_problem(pc)
        if problem is not None:
            errs.append(f.forbidden("metadata.name", f"priority class names with '{SYSTEM_PREFIX}' prefix are "
                                                     f"reserved for system use only. error: {problem}"))
    elif pc.value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(f.forbidden("value", f"maximum allowed value of a user defined priority is "
                                         f"{HIGHEST_USER_DEFINABLE_PRIORITY}"))
    if pc.preemption_policy is not None and pc.preemption_policy not in PREEMPTION_POLICIES:
        errs.append(f.not_supported("preemptionPolicy", pc.preemption_policy, PREEMPTION_POLICIES))
    return errs


def validate_priority_class_update(new: PriorityClass, old: PriorityClass) -> list[f.FieldError]:
    """What an update may not change: the value and the preemption policy."""
    errs = validate_priority_class(new)
    if new.value != old.value:
        errs.append(f.forbidden("value", "may not be changed in an update."))
    if new.preemption_policy != old.preemption_policy:
        errs.append(f.invalid("preemptionPolicy", new.preemption_policy, IMMUTABLE))
    return errs
