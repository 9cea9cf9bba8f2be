"""Every protobuf test module runs twice: with the C reader (the ``_fastwire`` extension, where it is built)
and with the Python path alone. A module imports :func:`reader` (an autouse fixture of module scope, so
hypothesis' tests run under it as well)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dralloc.server.protobuf import accelerated
from dralloc.server.protobuf.decoder import use_accelerator

READERS = ["C", "Python"]


@pytest.fixture(scope="module", params=READERS, autouse=True)
def reader(request: pytest.FixtureRequest) -> Iterator[str]:
    """Which reader reads the module's bodies: "C" or "Python"."""
    if request.param == "C" and not accelerated.AVAILABLE:
        pytest.skip(f"the C reader is not built: {accelerated.IMPORT_ERROR}")
    before = use_accelerator(request.param == "C")
    yield request.param
    use_accelerator(before)
