import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"

# Generated inputs are the same on every run (and on every machine): a test's time and outcome do not depend on
# which inputs a run happens to draw. Many tests compare with an exponential reference (the allocator's plain
# search), which one unlucky draw can keep busy for many minutes. HYPOTHESIS_PROFILE=explore draws new ones.
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


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
