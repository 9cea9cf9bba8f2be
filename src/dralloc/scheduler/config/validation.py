"""ValidateKubeSchedulerConfiguration and the plugin args validation of kube-scheduler 1.36, with its field
paths and texts (the parts that concern what dralloc simulates)."""

from __future__ import annotations

import re

from dralloc.scheduler.config import types as t
from dralloc.scheduler.config.plugins import EXTENSION_POINTS, INVALID_IN_V1
from dralloc.scheduler.features import FeatureGates
from dralloc.validation import field as f
from dralloc.validation.meta import validate_label_name, validate_node_selector

MAX_CUSTOM_PRIORITY_SCORE = 10
SCORING_STRATEGIES = ["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]
V1 = t.API_VERSION


def _percentage(path: str, value: int | None) -> list[f.FieldError]:
    if value is not None and not 0 <= value <= 100:
        return [f.invalid(path, value, "not in valid range [0-100]")]
    return []


def validate_configuration(cfg: t.KubeSchedulerConfiguration) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    if cfg.parallelism is not None and cfg.parallelism <= 0:
        errs.append(f.invalid("parallelism", cfg.parallelism, "should be an integer value greater than zero"))
    profiles = cfg.profiles or []
    if not profiles:
        errs.append(f.required("profiles"))
    seen: dict[str, int] = {}
    for i, profile in enumerate(profiles):
        path = f.index("profiles", i)
        errs.extend(_profile(path, profile))
        name = profile.scheduler_name or ""
        if name in seen:
            errs.append(f.duplicate(f.child(path, "schedulerName"), f.child(f.index("profiles", seen[name]),
                                                                                "schedulerName")))
        seen[name] = i
    if profiles:
        errs.extend(_common_queue_sort(profiles))
    errs.extend(_percentage("percentageOfNodesToScore", cfg.percentage_of_nodes_to_score))
    initial = cfg.pod_initial_backoff_seconds
    if initial is not None and initial <= 0:
        errs.append(f.invalid("podInitialBackoffSeconds", initial, "must be greater than 0"))
    if initial is not None and cfg.pod_max_backoff_seconds is not None and cfg.pod_max_backoff_seconds < initial:
        errs.append(f.invalid("podMaxBackoffSeconds", cfg.pod_max_backoff_seconds,
                              "must be greater than or equal to PodInitialBackoffSeconds"))
    return errs


def _profile(path: str, profile: t.Profile) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    if not profile.scheduler_name:
        errs.append(f.required(f.child(path, "schedulerName")))
    errs.extend(_percentage(f.child(path, "percentageOfNodesToScore"), profile.percentage_of_nodes_to_score))
    if profile.plugins is not None:
        from dralloc.scheduler.config.defaults import POINT_FIELDS

        for point, _ in EXTENSION_POINTS:
            pset = getattr(profile.plugins, POINT_FIELDS[point])
            for i, plugin in enumerate(pset.enabled or () if pset is not None else ()):
                if plugin.name in INVALID_IN_V1:
                    errs.append(f.invalid(f.index(f.child(f.child(f.child(path, "plugins"), point), "enabled"), i),
                                          plugin.name, f'was invalid in version "{V1}" (KubeSchedulerConfiguration '
                                                       f'is version "{V1}")'))
    seen: set[str] = set()
    for i, pc in enumerate(profile.plugin_config or ()):
        pc_path = f.index(f.child(path, "pluginConfig"), i)
        if pc.name in seen:
            errs.append(f.duplicate(pc_path, pc.name))
        seen.add(pc.name)
        if pc.name in INVALID_IN_V1:
            errs.append(f.invalid(pc_path, pc.name, f'was invalid in version "{V1}" (KubeSchedulerConfiguration '
                                                    f'is version "{V1}")'))
    return errs


def _common_queue_sort(profiles: list[t.Profile]) -> list[f.FieldError]:
    errs: list[f.FieldError] = []

    def queue_sort(p: t.Profile) -> t.PluginSet | None:
        return p.plugins.queue_sort if p.plugins is not None else None

    canon = queue_sort(profiles[0])
    if canon is not None and len(canon.enabled or ()) > 1:
        errs.append(f.invalid("profiles[0].plugins.queueSort.Enabled", len(canon.enabled or ()),
                              "only one queue sort plugin can be enabled"))
    for i in range(1, len(profiles)):
        current = queue_sort(profiles[i])
        if (canon or t.PluginSet()) != (current or t.PluginSet()):
            errs.append(f.invalid(f"profiles[{i}].plugins.queueSort", _go_plugin_set(current),
                                  "must be the same for all profiles"))
    return errs


def _go_plugin_set(pset: t.PluginSet | None) -> str:
    """The value as Go's %v prints a PluginSet (for the error text)."""
    def plugins(items: list[t.Plugin] | None) -> str:
        return "[" + " ".join(f"{{{p.name} {p.weight or 0}}}" for p in items or ()) + "]"
    pset = pset or t.PluginSet()
    return f"{{{plugins(pset.enabled)} {plugins(pset.disabled)}}}"


# ---------------------------------------------------------------------------------------------- plugin args
def validate_args(path: str, args: t.ArgsBase, gates: FeatureGates) -> list[f.FieldError]:
    if isinstance(args, t.DefaultPreemptionArgs):
        return _default_preemption(path, args)
    if isinstance(args, t.InterPodAffinityArgs):
        w = args.hard_pod_affinity_weight or 0
        if not 0 <= w <= 100:
            return [f.invalid(f.child(path, "hardPodAffinityWeight"), w, "not in valid range [0, 100]")]
        return []
    if isinstance(args, t.PodTopologySpreadArgs):
        return _pod_topology_spread(path, args)
    if isinstance(args, t.NodeResourcesBalancedAllocationArgs):
        return _balanced(path, args)
    if isinstance(args, t.NodeAffinityArgs):
        return _node_affinity(path, args)
    if isinstance(args, t.NodeResourcesFitArgs):
        return _fit(path, args)
    if isinstance(args, t.VolumeBindingArgs):
        return _volume_binding(path, args)
    if isinstance(args, t.DynamicResourcesArgs):
        return _dynamic_resources(path, args, gates)
    return []


def _dynamic_resources(path: str, args: t.DynamicResourcesArgs, gates: FeatureGates) -> list[f.FieldError]:
    """Fields of a feature that is off are errors here (unlike in the REST API)."""
    errs = []
    if args.filter_timeout is not None:
        p = f.child(path, "filterTimeout")
        if not gates.enabled("DRASchedulerFilterTimeout"):
            errs.append(f.forbidden(p, "DRASchedulingFilterTimeout feature gate is disabled"))
        elif parse_duration(args.filter_timeout, p) < 0:
            errs.append(f.invalid(p, args.filter_timeout, "must be zero or positive"))
    if args.binding_timeout is not None:
        p = f.child(path, "bindingTimeout")
        if not (gates.enabled("DRADeviceBindingConditions") and gates.enabled("DRAResourceClaimDeviceStatus")):
            errs.append(f.forbidden(p, "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate "
                                       "is disabled"))
        elif parse_duration(args.binding_timeout, p) < 1.0:
            errs.append(f.invalid(p, args.binding_timeout, "must be at least 1 second"))
    return errs


_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str, path: str = "") -> float:
    """A Go duration (``metav1.Duration``: "10s", "1m30s", "-5s") in seconds; DurationError when malformed."""
    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return 0.0
    pos, total = 0, 0.0
    while pos < len(body):
        m = _DURATION_PART.match(body, pos)
        if m is None:
            raise DurationError(f'{path}: time: invalid duration "{text}"' if path else
                                f'time: invalid duration "{text}"')
        total += float(m.group(1)) * _UNIT_SECONDS[m.group(2)]
        pos = m.end()
    if not body:
        raise DurationError(f'time: invalid duration "{text}"')
    return -total if text.startswith("-") else total


class DurationError(ValueError):
    pass


def _default_preemption(path: str, args: t.DefaultPreemptionArgs) -> list[f.FieldError]:
    errs = []
    pct = args.min_candidate_nodes_percentage or 0
    absolute = args.min_candidate_nodes_absolute or 0
    pct_path, abs_path = f.child(path, "minCandidateNodesPercentage"), f.child(path, "minCandidateNodesAbsolute")
    if not 0 <= pct <= 100:
        errs.append(f.invalid(pct_path, pct, "not in valid range [0, 100]"))
    if absolute < 0:
        errs.append(f.invalid(abs_path, absolute, "not in valid range [0, inf)"))
    if pct == 0 and absolute == 0:
        errs.append(f.invalid(pct_path, pct, "cannot be zero at the same time as minCandidateNodesAbsolute"))
        errs.append(f.invalid(abs_path, absolute, "cannot be zero at the same time as minCandidateNodesPercentage"))
    return errs


def _pod_topology_spread(path: str, args: t.PodTopologySpreadArgs) -> list[f.FieldError]:
    errs = []
    constraints = args.default_constraints or []
    kind = args.defaulting_type or ""
    if kind not in ("System", "List"):
        errs.append(f.not_supported(f.child(path, "defaultingType"), kind, ["System", "List"]))
    elif kind == "System" and constraints:
        errs.append(f.invalid(f.child(path, "defaultingType"), kind, "when .defaultConstraints are not empty"))
    cpath = f.child(path, "defaultConstraints")
    for i, c in enumerate(constraints):
        p = f.index(cpath, i)
        if c.max_skew <= 0:
            errs.append(f.invalid(f.child(p, "maxSkew"), c.max_skew, "not in valid range (0, inf)"))
        if not c.topology_key:
            errs.append(f.required(f.child(p, "topologyKey"), "can not be empty"))
        else:
            errs.extend(validate_label_name(c.topology_key, f.child(p, "topologyKey")))
        if not c.when_unsatisfiable:
            errs.append(f.required(f.child(p, "whenUnsatisfiable"), "can not be empty"))
        elif c.when_unsatisfiable not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(f.not_supported(f.child(p, "whenUnsatisfiable"), c.when_unsatisfiable,
                                        ["DoNotSchedule", "ScheduleAnyway"]))
        if c.label_selector is not None:
            errs.append(f.forbidden(f.child(p, "labelSelector"),
                                    "constraint must not define a selector, as they deduced for each pod"))
        for other in constraints[:i]:
            if other.topology_key == c.topology_key and other.when_unsatisfiable == c.when_unsatisfiable:
                errs.append(f.duplicate(p, f"{{{c.topology_key}, {c.when_unsatisfiable}}}"))
                break
    return errs


def _balanced(path: str, args: t.NodeResourcesBalancedAllocationArgs) -> list[f.FieldError]:
    errs = []
    seen: set[str] = set()
    for i, r in enumerate(args.resources or ()):
        p = f.index(f.child(path, "resources"), i)
        if r.name in seen:
            errs.append(f.duplicate(f.child(p, "name"), r.name))
        seen.add(r.name)
        if r.weight != 1:
            errs.append(f.invalid(f.child(p, "weight"), r.weight, "must be 1"))
    return errs


def _node_affinity(path: str, args: t.NodeAffinityArgs) -> list[f.FieldError]:
    affinity = args.added_affinity
    if affinity is None:
        return []
    errs = []
    base = f.child(path, "addedAffinity")
    if affinity.required_during_scheduling_ignored_during_execution is not None:
        errs.extend(validate_node_selector(affinity.required_during_scheduling_ignored_during_execution,
                                           f.child(base, "requiredDuringSchedulingIgnoredDuringExecution")))
    for i, term in enumerate(affinity.preferred_during_scheduling_ignored_during_execution or ()):
        from dralloc.api.core_v1 import NodeSelector

        errs.extend(validate_node_selector(
            NodeSelector(node_selector_terms=[term.preference]),
            f.index(f.child(base, "preferredDuringSchedulingIgnoredDuringExecution"), i)))
    return errs


def _shape(path: str, shape: list[t.UtilizationShapePoint] | None) -> list[f.FieldError]:
    if not shape:
        return [f.required(path, "at least one point must be specified")]
    errs = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(f.invalid(f.child(f.index(path, i), "utilization"), shape[i].utilization,
                                  "values must be sorted in increasing order"))
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= 100:
            errs.append(f.invalid(f.child(f.index(path, i), "utilization"), point.utilization,
                                  "not in valid range [0, 100]"))
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(f.invalid(f.child(f.index(path, i), "score"), point.score,
                                  f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"))
    return errs


def _fit(path: str, args: t.NodeResourcesFitArgs) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    for i, res in enumerate(args.ignored_resources or ()):
        errs.extend(validate_label_name(res, f.index(f.child(path, "ignoredResources"), i)))
    for i, group in enumerate(args.ignored_resource_groups or ()):
        p = f.index(f.child(path, "ignoredResourceGroups"), i)
        if "/" in group:
            errs.append(f.invalid(p, group, "resource group name can't contain '/'"))
        errs.extend(validate_label_name(group, p))
    spath = f.child(path, "scoringStrategy")
    strategy = args.scoring_strategy
    if strategy is None:
        errs.append(f.required(spath, "ScoringStrategy field is required"))
        return errs
    if strategy.type not in SCORING_STRATEGIES:
        errs.append(f.not_supported(f.child(spath, "type"), strategy.type, SCORING_STRATEGIES))
    for i, r in enumerate(strategy.resources or ()):
        if not 0 < r.weight <= 100:
            errs.append(f.invalid(f.child(f.index(f.child(spath, "resources"), i), "weight"), r.weight,
                                  f"resource weight of {r.name} not in valid range (0, 100]"))
    ratio_path = f.child(spath, "requestedToCapacityRatio")
    if strategy.type == "RequestedToCapacityRatio":
        if strategy.requested_to_capacity_ratio is None:
            errs.append(f.required(ratio_path, "must be specified when type is RequestedToCapacityRatio"))
        else:
            errs.extend(_shape(f.child(ratio_path, "shape"), strategy.requested_to_capacity_ratio.shape))
    elif strategy.requested_to_capacity_ratio is not None:
        errs.append(f.forbidden(ratio_path, "must be nil when type is not RequestedToCapacityRatio"))
    return errs


def _volume_binding(path: str, args: t.VolumeBindingArgs) -> list[f.FieldError]:
    errs = []
    if args.bind_timeout_seconds is not None and args.bind_timeout_seconds < 0:
        errs.append(f.invalid(f.child(path, "bindTimeoutSeconds"), args.bind_timeout_seconds,
                              "invalid BindTimeoutSeconds, should not be a negative value"))
    if args.shape is not None:
        errs.append(f.invalid(f.child(path, "shape"), "", "unexpected field `shape`, remove it or turn on the "
                                                          "feature gate StorageCapacityScoring"))
    return errs
