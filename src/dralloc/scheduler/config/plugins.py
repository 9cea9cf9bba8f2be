"""kube-scheduler 1.36's plugins as a configuration sees them: the default MultiPoint list (getDefaultPlugins,
DynamicResources before DefaultPreemption) and the extension points each plugin implements, which decide where a
MultiPoint plugin is expanded."""

from __future__ import annotations

# Extension points in the framework's expansion order (getExtensionPoints), with the Go interface names its
# errors print.
EXTENSION_POINTS: tuple[tuple[str, str], ...] = (
    ("preFilter", "PreFilterPlugin"), ("filter", "FilterPlugin"), ("postFilter", "PostFilterPlugin"),
    ("reserve", "ReservePlugin"), ("preScore", "PreScorePlugin"), ("score", "ScorePlugin"),
    ("preBind", "PreBindPlugin"), ("bind", "BindPlugin"), ("postBind", "PostBindPlugin"),
    ("permit", "PermitPlugin"), ("preEnqueue", "PreEnqueuePlugin"), ("queueSort", "QueueSortPlugin"),
)

IMPLEMENTS: dict[str, frozenset[str]] = {
    "SchedulingGates": frozenset({"preEnqueue"}),
    "PrioritySort": frozenset({"queueSort"}),
    "NodeUnschedulable": frozenset({"filter"}),
    "NodeName": frozenset({"filter"}),
    "TaintToleration": frozenset({"filter", "preScore", "score"}),
    "NodeAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    "NodePorts": frozenset({"preFilter", "filter"}),
    "NodeResourcesFit": frozenset({"preFilter", "filter", "preScore", "score"}),
    "VolumeRestrictions": frozenset({"preFilter", "filter"}),
    "NodeVolumeLimits": frozenset({"preFilter", "filter"}),
    "VolumeBinding": frozenset({"preFilter", "filter", "reserve", "preBind", "preScore", "score"}),
    "VolumeZone": frozenset({"preFilter", "filter"}),
    "PodTopologySpread": frozenset({"preFilter", "filter", "preScore", "score"}),
    "InterPodAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    "DynamicResources": frozenset({"preEnqueue", "preFilter", "filter", "postFilter", "preScore", "score",
                                   "reserve", "preBind"}),
    "DefaultPreemption": frozenset({"postFilter"}),
    "NodeResourcesBalancedAllocation": frozenset({"preScore", "score"}),
    "ImageLocality": frozenset({"score"}),
    "DefaultBinder": frozenset({"bind"}),
}

# getDefaultPlugins: (name, MultiPoint weight or None).
DEFAULT_MULTI_POINT: tuple[tuple[str, int | None], ...] = (
    ("SchedulingGates", None), ("PrioritySort", None), ("NodeUnschedulable", None), ("NodeName", None),
    ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", None), ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None), ("NodeVolumeLimits", None), ("VolumeBinding", None), ("VolumeZone", None),
    ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", None), ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", None),
)

# Plugins removed from the v1 configuration (validation's invalidPluginsByVersion).
INVALID_IN_V1 = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")
