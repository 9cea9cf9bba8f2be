"""What a request of a custom resource's version is told: kube-apiserver's Warning for a deprecated version."""

from __future__ import annotations

from dralloc.server.crds.custom_resources import CustomResourceStrategy
from dralloc.server.registry.kinds import Resource


def deprecation(resource: Resource, api_version: str) -> str:
    """The Warning of a request of ``api_version`` of a custom resource ("" for any other resource)."""
    strategy = resource.strategy
    return strategy.deprecation(api_version) if isinstance(strategy, CustomResourceStrategy) else ""
