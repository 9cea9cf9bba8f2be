"""Share IDs are uuid5 in the allocator's namespace, byte for byte, however they are computed."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from dralloc.allocator.results import SHARE_ID_NAMESPACE, uuid5_text


@given(st.text())
def test_uuid5_text_is_uuid5(name: str) -> None:
    assert uuid5_text(name) == str(uuid.uuid5(SHARE_ID_NAMESPACE, name))
