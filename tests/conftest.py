import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


@pytest.fixture
def examples_dir() -> Path:
    return ROOT / "examples"


@pytest.fixture
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip("../shared is not next to the checkout")
    return SHARED


@pytest.fixture
def dralloc_cmd() -> list[str]:
    """The real console script, as a user runs it."""
    exe = Path(sys.executable).with_name("dralloc")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "dralloc"]
