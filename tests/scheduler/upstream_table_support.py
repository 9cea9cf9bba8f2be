"""What every runner of upstream's plugin test tables shares: known disagreements run as expected failures,
and each table names its source and the upstream tests it leaves out."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

# libyaml's loader: the tables hold hundreds of cases, read while the tests are collected
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_table(path: Path) -> Any:
    """A table file's YAML."""
    return yaml.load(path.read_text(), Loader=_LOADER)  # noqa: S506 (a safe loader)


def run_checked(case_data: Mapping[str, Any], check: Callable[[], None]) -> None:
    """Run a case's check; a case that records a ``knownDisagreement`` must still fail (so a fix shows as soon as
    it lands) and is reported as an expected failure with the reason."""
    if "knownDisagreement" in case_data:
        with pytest.raises(AssertionError):
            check()
        pytest.xfail(case_data["knownDisagreement"])
    check()


def assert_tables_name_their_sources(tables: Path) -> None:
    """A table says where its cases come from and why any upstream test of that file is left out."""
    for path in sorted(tables.glob("*.yaml")):
        table = load_table(path)
        assert table["source"].startswith("pkg/scheduler/framework/plugins/"), path
        for skipped in table.get("skipped") or ():
            assert skipped["test"] and skipped["reason"], path
