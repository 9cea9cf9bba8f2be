"""KubeSchedulerConfiguration as kube-scheduler 1.36 reads it: defaults, MultiPoint expansion, validation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dralloc.errors import InputError
from dralloc.scheduler.config import config_from_dict, default_config, load_config
from dralloc.scheduler.config import types as t
from dralloc.scheduler.features import FeatureGates

V1 = "kubescheduler.config.k8s.io/v1"


def cfg(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": V1, "kind": "KubeSchedulerConfiguration", **fields}


def test_defaults_are_the_136_default_profile() -> None:
    c = default_config()
    (p,) = c.profiles
    assert p.scheduler_name == "default-scheduler"
    assert p.plugins.points["filter"] == [
        "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
        "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
        "InterPodAffinity", "DynamicResources"]
    assert p.plugins.points["postFilter"] == ["DynamicResources", "DefaultPreemption"]
    assert p.plugins.weights == {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "VolumeBinding": 1,
                                 "PodTopologySpread": 2, "InterPodAffinity": 2, "DynamicResources": 1,
                                 "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1}
    fit = p.args["NodeResourcesFit"]
    assert isinstance(fit, t.NodeResourcesFitArgs) and fit.scoring_strategy is not None
    assert fit.scoring_strategy.type == "LeastAllocated"
    assert p.args["InterPodAffinity"] == t.InterPodAffinityArgs(hard_pod_affinity_weight=1)
    assert p.args["PodTopologySpread"] == t.PodTopologySpreadArgs(defaulting_type="System")
    assert c.percentage_for(p) == 0


def test_most_allocated_profile_and_a_disabled_score_plugin() -> None:
    c = config_from_dict(cfg(percentageOfNodesToScore=50, profiles=[{
        "schedulerName": "bin-packing",
        "plugins": {"score": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}],
                              "enabled": [{"name": "NodeResourcesFit", "weight": 5}]}},
        "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
            "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1},
                                                  {"name": "nvidia.com/gpu", "weight": 3}]}}}]}]))
    p = c.profiles[0]
    assert "NodeResourcesBalancedAllocation" not in p.plugins.points["score"]
    assert p.plugins.points["score"][0] == "NodeResourcesFit"  # an override keeps the specific point's order
    assert p.plugins.weights["NodeResourcesFit"] == 5
    fit = p.args["NodeResourcesFit"]
    assert isinstance(fit, t.NodeResourcesFitArgs) and fit.scoring_strategy is not None
    assert [(r.name, r.weight) for r in fit.scoring_strategy.resources or ()] == [("cpu", 1), ("nvidia.com/gpu", 3)]
    assert c.percentage_for(p) == 50


def test_several_profiles_by_scheduler_name() -> None:
    c = config_from_dict(cfg(profiles=[{"schedulerName": "default-scheduler"},
                                       {"schedulerName": "no-scoring", "plugins": {"score": {"disabled": [
                                           {"name": "*"}]}}}]))
    assert c.profile("no-scoring") is not None and c.profile("no-scoring").plugins.points["score"] == []  # type: ignore[union-attr]
    assert c.profile("other") is None


@pytest.mark.parametrize(("doc", "text"), [
    (cfg(profiles=[{"schedulerName": "a"}, {"schedulerName": "a"}]),
     'profiles[1].schedulerName: Duplicate value: "profiles[0].schedulerName"'),
    (cfg(percentageOfNodesToScore=101), "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"),
    (cfg(profiles=[{"schedulerName": "a", "pluginConfig": [{"name": "NodeResourcesFit", "args": {
        "scoringStrategy": {"type": "Fancy"}}}]}]),
     'profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "Fancy": supported values: '
     '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'),
    (cfg(profiles=[{"schedulerName": "a", "pluginConfig": [{"name": "InterPodAffinity", "args": {
        "hardPodAffinityWeight": 101}}]}]),
     "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"),
    (cfg(profiles=[{"schedulerName": "a", "pluginConfig": [{"name": "DefaultPreemption", "args": {
        "minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0}}]}]),
     "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same "
     "time as minCandidateNodesAbsolute"),
    (cfg(profiles=[{"schedulerName": "a", "pluginConfig": [{"name": "PodTopologySpread", "args": {
        "defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}]}}]}]),
     'profiles[0].pluginConfig[0].args.defaultingType: Invalid value: "System": when .defaultConstraints are '
     'not empty'),
    (cfg(profiles=[{"schedulerName": "a", "pluginConfig": [{"name": "NodeResourcesFit", "args": {
        "scoringStrategy": {"type": "RequestedToCapacityRatio"}}}]}]),
     "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio: Required value: must be "
     "specified when type is RequestedToCapacityRatio"),
    (cfg(profiles=[{"schedulerName": "a", "plugins": {"filter": {"enabled": [{"name": "EBSLimits"}]}}}]),
     'profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in version '
     '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")'),
    (cfg(profiles=[{"schedulerName": "a", "plugins": {"filter": {"enabled": [{"name": "Nope"}]}}}]),
     'creating profile for scheduler name a: FilterPlugin "Nope" does not exist'),
    (cfg(profiles=[{"schedulerName": "a", "plugins": {"score": {"enabled": [{"name": "NodeName"}]}}}]),
     'plugin "NodeName" does not extend ScorePlugin plugin'),
    (cfg(profiles=[{"schedulerName": "a", "plugin": {}}]), 'strict decoding error: unknown field "profiles[0].plugin"'),
    (cfg(profiles=[{"schedulerName": "a", "pluginConfig": [{"name": "NodeResourcesFit", "args": {
        "scoringStrategi": {}}}]}]), 'strict decoding error: unknown field "scoringStrategi"'),
    ({"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "KubeSchedulerConfiguration"},
     'no kind "KubeSchedulerConfiguration" is registered for version "kubescheduler.config.k8s.io/v1beta3"'),
])
def test_invalid_configurations_say_what_kube_scheduler_says(doc: dict[str, Any], text: str) -> None:
    with pytest.raises(InputError) as err:
        config_from_dict(doc)
    assert text in str(err.value)


def test_dra_args_depend_on_gates() -> None:
    doc = cfg(profiles=[{"schedulerName": "a", "pluginConfig": [{"name": "DynamicResources", "args": {
        "filterTimeout": "-1s"}}]}])
    with pytest.raises(InputError, match="filterTimeout: Invalid value: \"-1s\": must be zero or positive"):
        config_from_dict(doc)
    off = FeatureGates.parse("DRASchedulerFilterTimeout=false")
    ok_doc = cfg(profiles=[{"schedulerName": "a", "pluginConfig": [{"name": "DynamicResources", "args": {
        "filterTimeout": "20s"}}]}])
    with pytest.raises(InputError, match="DRASchedulingFilterTimeout feature gate is disabled"):
        config_from_dict(ok_doc, off)
    assert config_from_dict(ok_doc).profiles[0].args["DynamicResources"] == t.DynamicResourcesArgs(filter_timeout="20s")


def test_a_file_with_a_repeated_key_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(f"apiVersion: {V1}\nkind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 10\n"
                 "percentageOfNodesToScore: 20\n")
    with pytest.raises(InputError, match="already set in map"):
        load_config(str(f))
    f.write_text(f"apiVersion: {V1}\nkind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 10\n")
    assert load_config(str(f)).percentage_of_nodes_to_score == 10
