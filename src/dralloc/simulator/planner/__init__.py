"""Capacity planning on the simulator: the fewest nodes per template that make pending pods fit (scale up),
and a set of nodes that can go together, their pods rescheduled elsewhere (scale down).

    from dralloc.simulator.planner import load_template, plan_scale_up, plan_scale_down
    plan = sched.plan_scale_up([load_template("h100", "h100.yaml")], max_nodes={"h100": 20})
    plan.to_dict()   # {"kind": "ScaleUpPlan", "add": {"h100": 3}, "pods": [...], "unschedulable": 0}

Every answer comes from whole simulations with the same rules, seed, feature gates and settings as
``dralloc simulate``, so it holds for DRA claims, counters, taints and everything the simulator models.
"""

from dralloc.simulator.planner.expanders import EXPANDERS
from dralloc.simulator.planner.scale_down import ScaleDownPlan, plan_scale_down
from dralloc.simulator.planner.scale_up import ScaleUpPlan, plan_scale_up
from dralloc.simulator.planner.templates import NodeTemplate, load_template
from dralloc.simulator.planner.trial import PlanSettings

__all__ = ["EXPANDERS", "NodeTemplate", "PlanSettings", "ScaleDownPlan", "ScaleUpPlan", "load_template",
           "plan_scale_down", "plan_scale_up"]
