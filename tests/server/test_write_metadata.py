"""The metadata the server stamps on every write: uids and timestamps."""

from __future__ import annotations

import time
import uuid

import pytest

from dralloc.server import clock
from dralloc.server.uids import new_uid


def test_a_new_uid_is_a_random_rfc_4122_version_4_uuid_in_canonical_text() -> None:
    uids = [new_uid() for _ in range(2000)]
    for text in uids:
        parsed = uuid.UUID(text)
        assert str(parsed) == text
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
    assert len(set(uids)) == len(uids)
    assert {text[19] for text in uids} == set("89ab")  # the variant's two free bits vary too
    assert len({text[15] for text in uids}) == 16  # and the digits around the fixed ones


@pytest.mark.parametrize("second", [0, 1_700_000_000, 1_700_000_059, 4_102_444_800])
def test_now_is_the_current_second_in_rfc_3339_utc(monkeypatch: pytest.MonkeyPatch, second: int) -> None:
    expected = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second))
    monkeypatch.setattr(time, "time", lambda: second + 0.999)
    assert clock.now() == expected


def test_now_moves_on_with_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    seconds = iter([1_700_000_000.2, 1_700_000_000.7, 1_700_000_001.0, 1_700_000_000.5])
    monkeypatch.setattr(time, "time", lambda: next(seconds))
    assert [clock.now() for _ in range(4)] == ["2023-11-14T22:13:20Z", "2023-11-14T22:13:20Z",
                                               "2023-11-14T22:13:21Z", "2023-11-14T22:13:20Z"]
