"""Shared helpers for the allocator tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PERF = HERE.parent.parent.parent / "shared" / "perf"

try:  # dralloc.api.quantity is written concurrently; until it lands, use a minimal stand-in for the models
    import dralloc.api.quantity  # noqa: F401
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(HERE))
    import _quantity_standin  # noqa: F401


@pytest.fixture
def perf_dir() -> Path:
    if not PERF.is_dir():
        pytest.skip("../shared/perf is not next to the checkout")
    return PERF
