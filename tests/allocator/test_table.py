"""Table tests: one case per upstream rule (tests/allocator/cases/*.yaml), with expected devices."""

from __future__ import annotations

import pytest
from cases_loader import describe, load_cases, objects_of

from dralloc.allocator import AllocationError, Allocator
from dralloc.api.core_v1 import Node

CASES = load_cases()


def _run(case):
    objs = objects_of(case)
    nodes = [o for o in objs if isinstance(o, Node)]
    node = next(n for n in nodes if n.metadata.name == case.get("node", nodes[0].metadata.name))
    pending = [o for o in objs if type(o).__name__ == "ResourceClaim" and (o.status is None or o.status.allocation is None)]
    return Allocator.from_objects(objs).allocate(node, pending)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case(case):
    expect = case["expect"]
    if "error" in expect:
        with pytest.raises(AllocationError) as info:
            _run(case)
        assert str(info.value) == expect["error"]
        return
    outcome = _run(case)
    if expect.get("unschedulable"):
        assert outcome.status == "unschedulable"
        assert outcome.invalid_pools == bool(expect.get("invalid"))
        assert outcome.explanation is not None
        return
    assert outcome.status == "allocated", outcome.explanation.text()
    assert [describe(r) for r in outcome.results] == expect["allocated"]
    if "result" in expect:
        from dralloc.api import codec

        assert [codec.to_dict(r) for r in outcome.results] == expect["result"]
