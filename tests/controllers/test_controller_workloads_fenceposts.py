"""The deployment controller's fenceposts: how far a rollout may surge above and fall below the replicas."""

from __future__ import annotations

import pytest

from dralloc.controllers.workloads import rollout_fenceposts


@pytest.mark.parametrize(("strategy", "replicas", "want"), [
    (None, 4, (1, 1)),  # 25 % each: surge rounded up, unavailable rounded down
    (None, 10, (3, 2)),
    ({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2, "maxUnavailable": "50%"}}, 5, (2, 2)),
    # both round to 0: one pod may be unavailable, the surge stays 0 (ResolveFenceposts)
    ({"rollingUpdate": {"maxSurge": 0, "maxUnavailable": "10%"}}, 3, (0, 1)),
    ({"rollingUpdate": {"maxSurge": "0%", "maxUnavailable": 7}}, 3, (0, 3)),  # never more than the replicas
    ({"type": "Recreate"}, 4, (0, 4)),
])
def test_rollout_fenceposts(strategy: dict[str, object] | None, replicas: int, want: tuple[int, int]) -> None:
    assert rollout_fenceposts(strategy, replicas) == want
