"""Defaulting of a KubeSchedulerConfiguration (v1 SetDefaults_*) and the framework's expansion of MultiPoint
plugins into each extension point: what a profile's plugin lists and weights end up being."""

from __future__ import annotations

from dataclasses import dataclass, field

from msgspec.structs import replace

from dralloc.scheduler.config import types as t
from dralloc.scheduler.config.plugins import DEFAULT_MULTI_POINT, EXTENSION_POINTS, IMPLEMENTS

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_RESOURCES = (t.ResourceSpec(name="cpu", weight=1), t.ResourceSpec(name="memory", weight=1))


class ProfileError(ValueError):
    """The framework refuses the profile (kube-scheduler: "creating profile for scheduler name ...")."""


def _merge_set(default: t.PluginSet, custom: t.PluginSet | None) -> t.PluginSet:
    """mergePluginSet: drop disabled defaults ("*" drops all), replace re-configured ones in place, append the
    other custom ones."""
    if custom is None:
        return default
    disabled = [t.Plugin(name=p.name) for p in custom.disabled or ()] + \
        [t.Plugin(name=p.name) for p in default.disabled or ()]
    disabled_names = {p.name for p in disabled}
    custom_enabled = list(custom.enabled or ())
    by_name = {p.name: i for i, p in enumerate(custom_enabled)}
    replaced: set[int] = set()
    enabled: list[t.Plugin] = []
    if "*" not in disabled_names:
        for plugin in default.enabled or ():
            if plugin.name in disabled_names:
                continue
            if plugin.name in by_name:
                replaced.add(by_name[plugin.name])
                plugin = custom_enabled[by_name[plugin.name]]
            enabled.append(plugin)
    enabled.extend(p for i, p in enumerate(custom_enabled) if i not in replaced)
    return t.PluginSet(enabled=enabled, disabled=disabled)


POINT_FIELDS = {point: "".join("_" + c.lower() if c.isupper() else c for c in point) for point, _ in EXTENSION_POINTS}


def merged_plugins(custom: t.Plugins | None) -> t.Plugins:
    """mergePlugins over getDefaultPlugins."""
    default = t.Plugins(multi_point=t.PluginSet(enabled=[t.Plugin(name=n, weight=w) for n, w in DEFAULT_MULTI_POINT]))
    if custom is None:
        return default
    out = replace(default, multi_point=_merge_set(default.multi_point or t.PluginSet(), custom.multi_point))
    for attr in POINT_FIELDS.values():
        out = replace(out, **{attr: _merge_set(getattr(out, attr) or t.PluginSet(), getattr(custom, attr))})
    return out


@dataclass
class ProfilePlugins:
    """Each extension point's plugins in run order, and every score plugin's weight (0 becomes 1)."""

    points: dict[str, list[str]] = field(default_factory=dict)
    weights: dict[str, int] = field(default_factory=dict)

    def enabled(self) -> set[str]:
        return {name for names in self.points.values() for name in names}


def expand(plugins: t.Plugins, known: set[str]) -> ProfilePlugins:
    """The framework's updatePluginList then expandMultiPointPlugins; ProfileError with the framework's texts."""
    out = ProfilePlugins()
    multi = list((plugins.multi_point or t.PluginSet()).enabled or ())
    weights: dict[str, int] = {}
    for p in multi:
        if p.weight is not None:
            weights[p.name] = p.weight
    for point, go_type in EXTENSION_POINTS:
        pset = getattr(plugins, POINT_FIELDS[point]) or t.PluginSet()
        specific: list[str] = []
        for p in pset.enabled or ():
            if p.name not in known:
                raise ProfileError(f"{go_type} {p.name!r} does not exist".replace("'", '"'))
            if point not in IMPLEMENTS.get(p.name, frozenset()):
                raise ProfileError(f'plugin "{p.name}" does not extend {go_type} plugin')
            if p.name in specific:
                raise ProfileError(f'plugin "{p.name}" already registered as "{go_type}"')
            specific.append(p.name)
            if point == "score" and p.weight is not None:
                weights[p.name] = p.weight
        disabled = {p.name for p in pset.disabled or ()}
        if "*" in disabled:
            out.points[point] = specific
            continue
        overrides: list[str] = []
        from_multi: list[str] = []
        for p in multi:
            if p.name not in known:
                raise ProfileError(f'{go_type} "{p.name}" does not exist')
            if point not in IMPLEMENTS.get(p.name, frozenset()) or p.name in disabled:
                continue
            if p.name in specific:
                overrides.append(p.name)
                continue
            if p.name in from_multi:
                raise ProfileError(f'plugin "{p.name}" already registered as "{go_type}"')
            from_multi.append(p.name)
        ordered = [n for n in specific if n in overrides] + from_multi + [n for n in specific if n not in overrides]
        out.points[point] = ordered
    for name in out.points.get("score", []):
        out.weights[name] = weights.get(name) or 1
    if len(out.points.get("queueSort", [])) == 0:
        raise ProfileError("no queue sort plugin is enabled")
    if len(out.points.get("bind", [])) == 0:
        raise ProfileError("at least one bind plugin is needed")
    return out


def default_args(name: str, args: t.ArgsBase | None) -> t.ArgsBase | None:
    """SetDefaults_<Name>Args."""
    if isinstance(args, t.DefaultPreemptionArgs) or (args is None and name == "DefaultPreemption"):
        a = args if isinstance(args, t.DefaultPreemptionArgs) else t.DefaultPreemptionArgs()
        return replace(a, min_candidate_nodes_percentage=10 if a.min_candidate_nodes_percentage is None
                       else a.min_candidate_nodes_percentage,
                       min_candidate_nodes_absolute=100 if a.min_candidate_nodes_absolute is None
                       else a.min_candidate_nodes_absolute)
    if isinstance(args, t.InterPodAffinityArgs) or (args is None and name == "InterPodAffinity"):
        a2 = args if isinstance(args, t.InterPodAffinityArgs) else t.InterPodAffinityArgs()
        return replace(a2, hard_pod_affinity_weight=1 if a2.hard_pod_affinity_weight is None
                       else a2.hard_pod_affinity_weight)
    if isinstance(args, t.NodeResourcesBalancedAllocationArgs) or \
            (args is None and name == "NodeResourcesBalancedAllocation"):
        a3 = args if isinstance(args, t.NodeResourcesBalancedAllocationArgs) else t.NodeResourcesBalancedAllocationArgs()
        resources = [replace(r, weight=r.weight or 1) for r in a3.resources or ()] or list(DEFAULT_RESOURCES)
        return replace(a3, resources=resources)
    if isinstance(args, t.PodTopologySpreadArgs) or (args is None and name == "PodTopologySpread"):
        a4 = args if isinstance(args, t.PodTopologySpreadArgs) else t.PodTopologySpreadArgs()
        return replace(a4, defaulting_type=a4.defaulting_type or "System")
    if isinstance(args, t.NodeResourcesFitArgs) or (args is None and name == "NodeResourcesFit"):
        a5 = args if isinstance(args, t.NodeResourcesFitArgs) else t.NodeResourcesFitArgs()
        strategy = a5.scoring_strategy or t.ScoringStrategy(type="LeastAllocated", resources=list(DEFAULT_RESOURCES))
        resources = [replace(r, weight=r.weight or 1) for r in strategy.resources or ()] or list(DEFAULT_RESOURCES)
        return replace(a5, scoring_strategy=replace(strategy, resources=resources))
    if isinstance(args, t.VolumeBindingArgs) or (args is None and name == "VolumeBinding"):
        a6 = args if isinstance(args, t.VolumeBindingArgs) else t.VolumeBindingArgs()
        return replace(a6, bind_timeout_seconds=600 if a6.bind_timeout_seconds is None else a6.bind_timeout_seconds)
    if args is None and name == "NodeAffinity":
        return t.NodeAffinityArgs()
    if args is None and name == "DynamicResources":
        return t.DynamicResourcesArgs()
    return args
