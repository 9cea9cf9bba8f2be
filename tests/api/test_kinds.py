"""Every kind dralloc decodes has the scope kube-apiserver serves it with."""

from __future__ import annotations

from dralloc.api.kinds import CLUSTER_KINDS, NAMESPACED_KINDS, modelled_kinds


def test_every_modelled_kind_is_either_namespaced_or_cluster_scoped():
    assert not NAMESPACED_KINDS & CLUSTER_KINDS
    assert modelled_kinds() == NAMESPACED_KINDS | CLUSTER_KINDS
