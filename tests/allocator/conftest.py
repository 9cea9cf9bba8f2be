"""Shared helpers for the allocator tests."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PERF = HERE.parent.parent.parent / "shared" / "perf"


@pytest.fixture
def perf_dir() -> Path:
    if not PERF.is_dir():
        pytest.skip("../shared/perf is not next to the checkout")
    return PERF
