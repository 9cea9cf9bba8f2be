"""The core/v1 field table (strict decoding of Pods, Nodes, Namespaces and Events) is the schema of the
Kubernetes OpenAPI document, as lightkube-models carries it."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import pytest

from dralloc.api import core_v1_fields

pytest.importorskip("lightkube.models.core_v1")

from generate_core_v1_fields import render, table  # noqa: E402


def test_the_committed_table_is_what_the_generator_finds_in_the_installed_models() -> None:
    assert core_v1_fields.FIELDS == table(), (
        f"lightkube-models {version('lightkube-models')} differs from the table: regenerate it with "
        f"tests/api/generate_core_v1_fields.py")


def test_the_committed_table_is_formatted_as_the_generator_writes_it() -> None:
    committed = Path(core_v1_fields.__file__).read_text()
    assert committed.split('"""', 2)[2] == render(core_v1_fields.FIELDS).split('"""', 2)[2]


def test_the_table_knows_every_field_dralloc_writes_on_pods_and_nodes() -> None:
    fields = core_v1_fields.FIELDS
    assert {"resourceClaimStatuses", "extendedResourceClaimStatus", "nominatedNodeName"} <= fields["PodStatus"].keys()
    assert {"resourceClaims", "schedulingGates", "resources"} <= fields["PodSpec"].keys()
    assert fields["PodSpec"]["containers"] == "[Container]" and fields["Pod"]["metadata"] == "ObjectMeta"
    assert fields["NodeStatus"]["allocatable"] == ""  # a map of quantities is a value
