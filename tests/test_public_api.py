"""What users import: the flat namespace and each package's ``__all__``."""

from __future__ import annotations

import importlib

import pytest

import dralloc


def test_the_flat_namespace_offers_the_documented_names() -> None:
    for name in ("Allocator", "Quantity", "Scheduler", "compile_selector", "load", "validate"):
        assert name in dralloc.__all__
        assert getattr(dralloc, name) is not None
    with pytest.raises(AttributeError):
        dralloc.NotAThing  # noqa: B018


@pytest.mark.parametrize("package", ["allocator", "cel", "resources", "scheduler", "validation"])
def test_each_package_exports_what_its_all_lists(package: str) -> None:
    module = importlib.import_module(f"dralloc.{package}")
    assert module.__all__, package
    for name in module.__all__:
        assert hasattr(module, name), f"dralloc.{package}.{name}"
