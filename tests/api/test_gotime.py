"""Times read as kube-apiserver reads them (Go's time.Parse with RFC 3339), refused with Go's texts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dralloc.api.gotime import model_time_error, parse_error, time_error

LAYOUT = '"2006-01-02T15:04:05Z07:00"'


@pytest.mark.parametrize("value, error", [
    ("2026-11-27T10:00:00Z", None), ("2026-11-27T10:00:00.123456789Z", None), ("2026-11-27T10:00:00-07:30", None),
    ("2024-02-29T00:00:00Z", None), ("2026-11-27T1:00:00Z", None),  # Go reads a one-digit hour
    ("garbage", f'parsing time "garbage" as {LAYOUT}: cannot parse "garbage" as "2006"'),
    ("2026-13-01T00:00:00Z", 'parsing time "2026-13-01T00:00:00Z": month out of range'),
    ("2025-02-29T00:00:00Z", 'parsing time "2025-02-29T00:00:00Z": day out of range'),
    ("2026-11-27", f'parsing time "2026-11-27" as {LAYOUT}: cannot parse "" as "T"'),
    ("2026-1-01T00:00:00Z", f'parsing time "2026-1-01T00:00:00Z" as {LAYOUT}: cannot parse "1-01T00:00:00Z" as "01"'),
    ("2026-11-27T10:00:00", f'parsing time "2026-11-27T10:00:00" as {LAYOUT}: cannot parse "" as "Z07:00"'),
    ("2026-11-27T10:00:00Zz", 'parsing time "2026-11-27T10:00:00Zz": extra text: "z"'),
    ("2026-11-27T24:00:00Z", 'parsing time "2026-11-27T24:00:00Z": hour out of range'),
])
def test_rfc3339_times_parse_or_fail_with_gos_texts(value: str, error: str | None) -> None:
    assert parse_error(value) == error


@given(st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)),
       st.integers(-23 * 60, 23 * 60))
def test_every_time_rfc3339_writes_is_read(moment: datetime, offset: int) -> None:
    stamp = moment.replace(tzinfo=timezone(timedelta(minutes=offset))).isoformat()
    assert parse_error(stamp) is None
    assert parse_error(moment.replace(tzinfo=UTC).strftime("%Y-%m-%dT%H:%M:%SZ").rjust(20, "0")) is None


@given(st.text(max_size=40))
def test_any_text_gets_an_answer(text: str) -> None:
    error = parse_error(text)
    assert error is None or error.startswith("parsing time ")


def test_the_times_of_core_and_modelled_objects_are_found_where_they_are() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "creationTimestamp": "2026-01-01T00:00:00Z"},
           "status": {"conditions": [{"type": "Ready", "lastProbeTime": None, "lastTransitionTime": "noon"}]}}
    assert time_error(pod) == f'parsing time "noon" as {LAYOUT}: cannot parse "noon" as "2006"'
    pod["status"]["conditions"][0]["lastTransitionTime"] = "2026-01-01T12:00:00Z"
    assert time_error(pod) is None
    claim = {"kind": "ResourceClaim", "status": {"allocation": {"allocationTimestamp": "2026-02-30T00:00:00Z"}}}
    assert model_time_error(claim) == 'parsing time "2026-02-30T00:00:00Z": day out of range'
    assert model_time_error({"kind": "Lease", "spec": {"renewTime": "2026-01-01T00:00:00.000001Z"}}) is None


MICRO = '"2006-01-02T15:04:05.000000Z07:00"'


@pytest.mark.parametrize("value, error", [
    ("2026-11-27T10:00:00.123456Z", None), ("2026-11-27T10:00:00,000001+02:00", None),
    ("2026-11-27T10:00:00.+12345Z", None), ("2026-11-27T10:00:00.-00000Z", None),  # Go's atoi takes a sign
    ("2026-11-27T10:00:00Z", f'parsing time "2026-11-27T10:00:00Z" as {MICRO}: cannot parse "Z" as ".000000"'),
    ("2026-11-27T10:00:00.123Z",
     f'parsing time "2026-11-27T10:00:00.123Z" as {MICRO}: cannot parse ".123Z" as ".000000"'),
    ("2026-11-27T10:00:00.123456789Z",
     f'parsing time "2026-11-27T10:00:00.123456789Z" as {MICRO}: cannot parse "789Z" as "Z07:00"'),
    ("2026-11-27T10:00:00.12a456Z",
     f'parsing time "2026-11-27T10:00:00.12a456Z" as {MICRO}: cannot parse ".12a456Z" as ".000000"'),
    ("2026-11-27T10:00:00.-00001Z", 'parsing time "2026-11-27T10:00:00.-00001Z": fractional second out of range'),
])
def test_micro_times_need_six_fraction_digits_as_gos_rfc3339micro_layout(value: str, error: str | None) -> None:
    assert parse_error(value, micro=True) == error


def test_the_micro_times_of_events_and_leases_are_read_with_the_micro_layout() -> None:
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}, "eventTime": "2026-01-01T00:00:00Z",
             "firstTimestamp": "2026-01-01T00:00:00Z"}  # (a metav1.Time: no fraction needed)
    assert time_error(event) == f'parsing time "2026-01-01T00:00:00Z" as {MICRO}: cannot parse "Z" as ".000000"'
    event["eventTime"] = "2026-01-01T00:00:00.000000Z"
    event["series"] = {"count": 2, "lastObservedTime": "2026-01-01T00:00:01Z"}
    assert time_error(event) is not None
    event["series"]["lastObservedTime"] = "2026-01-01T00:00:01.500000Z"
    assert time_error(event) is None
    assert model_time_error({"kind": "Lease", "spec": {"acquireTime": "2026-01-01T00:00:00Z"}}) is not None


def test_the_first_bad_time_of_a_slice_is_the_first_in_document_order() -> None:
    """Paths are read in their order (metadata first), and a path's values in document order: device by
    device, taint by taint, whatever holds None or no list on the way."""
    def taints(*times: str | None) -> list[dict[str, str | None]]:
        return [{"key": "k", "effect": "NoSchedule", "timeAdded": t} for t in times]

    slice_ = {"kind": "ResourceSlice", "metadata": {"name": "s", "managedFields": [{"time": None}, "x"]},
              "spec": {"devices": [None, {"name": "a", "taints": None}, {"name": "b", "taints": taints(None, "one")},
                                   {"name": "c", "taints": "not a list"}, {"name": "d", "taints": taints("two")}]}}
    assert model_time_error(slice_) == f'parsing time "one" as {LAYOUT}: cannot parse "one" as "2006"'
    slice_["spec"]["devices"][2]["taints"] = taints("2026-01-01T00:00:00Z")  # type: ignore[index]
    assert model_time_error(slice_) == f'parsing time "two" as {LAYOUT}: cannot parse "two" as "2006"'
    slice_["metadata"]["managedFields"] = [{"time": "three"}]  # type: ignore[index]
    assert model_time_error(slice_) == f'parsing time "three" as {LAYOUT}: cannot parse "three" as "2006"'
