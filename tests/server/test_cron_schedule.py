"""The CronJob schedule parser and its Next (robfig/cron's ParseStandard semantics): against a minute-by-minute
search for random five-field schedules, the descriptors, @every, time zones, and the error texts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dralloc.api.cron_schedule import ScheduleError, go_duration, parse

START = datetime(2026, 1, 1, tzinfo=UTC)


def _field(low: int, high: int) -> st.SearchStrategy[str]:
    single = st.integers(low, high).map(str)
    span = st.tuples(st.integers(low, high), st.integers(low, high)).map(lambda p: f"{min(p)}-{max(p)}")
    stepped = st.tuples(st.sampled_from(["*", str(low)]), st.integers(1, 7)).map(lambda p: f"{p[0]}/{p[1]}")
    part = st.one_of(single, span, stepped, st.just("*"))
    return st.lists(part, min_size=1, max_size=3).map(",".join)


def _values(text: str, low: int, high: int) -> tuple[set[int], bool]:
    """What a field selects, and whether it counts as * (test's own reading of the syntax)."""
    chosen: set[int] = set()
    star = False
    for part in text.split(","):
        rng, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if rng == "*":
            a, b = low, high
            star = star or step == 1
        elif "-" in rng:
            a, b = map(int, rng.split("-"))
        else:
            a = int(rng)
            b = high if step_text else a
        chosen |= set(range(a, b + 1, step))
    return chosen, star


def _brute_next(fields: list[str], after: datetime) -> datetime:
    minutes, _ = _values(fields[0], 0, 59)
    hours, _ = _values(fields[1], 0, 23)
    doms, dom_star = _values(fields[2], 1, 31)
    months, _ = _values(fields[3], 1, 12)
    dows, dow_star = _values(fields[4], 0, 6)
    t = after.replace(second=0, microsecond=0) + timedelta(minutes=1)
    for _ in range(60 * 24 * 366 * 5):
        dom_ok, dow_ok = t.day in doms, t.isoweekday() % 7 in dows
        day_ok = (dom_ok and dow_ok) if (dom_star or dow_star) else (dom_ok or dow_ok)
        if t.month in months and day_ok and t.hour in hours and t.minute in minutes:
            return t
        t += timedelta(minutes=1)
    raise AssertionError("no time found")


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(minute=_field(0, 59), hour=_field(0, 23), dom=_field(1, 28), month=_field(1, 12), dow=_field(0, 6),
       offset=st.integers(0, 400 * 24 * 60))
def test_next_is_the_first_matching_minute(minute: str, hour: str, dom: str, month: str, dow: str,
                                           offset: int) -> None:
    after = START + timedelta(minutes=offset, seconds=17)
    fields = [minute, hour, dom, month, dow]
    assert parse(" ".join(fields)).next(after) == _brute_next(fields, after)


def test_day_of_month_or_day_of_week_unless_one_is_a_star() -> None:
    friday_13th = parse("0 0 13 * 5")  # the 13th, or any Friday
    assert friday_13th.next(datetime(2026, 1, 1, tzinfo=UTC)) == datetime(2026, 1, 2, tzinfo=UTC)  # a Friday
    assert parse("0 0 13 * *").next(datetime(2026, 1, 1, tzinfo=UTC)) == datetime(2026, 1, 13, tzinfo=UTC)
    # */1 is a star too; */2 is not
    assert parse("0 0 */2 * 5").next(datetime(2026, 1, 1, tzinfo=UTC)) == datetime(2026, 1, 2, tzinfo=UTC)


def test_descriptors_names_and_every() -> None:
    t = datetime(2026, 5, 17, 10, 30, 5, tzinfo=UTC)
    assert parse("@yearly").next(t) == parse("@annually").next(t) == datetime(2027, 1, 1, tzinfo=UTC)
    assert parse("@monthly").next(t) == datetime(2026, 6, 1, tzinfo=UTC)
    assert parse("@weekly").next(t) == datetime(2026, 5, 24, tzinfo=UTC)  # Sunday
    assert parse("@daily").next(t) == parse("@midnight").next(t) == datetime(2026, 5, 18, tzinfo=UTC)
    assert parse("@hourly").next(t) == datetime(2026, 5, 17, 11, tzinfo=UTC)
    assert parse("0 12 * JAN,jun Sun-tue").next(t) == datetime(2026, 6, 1, 12, tzinfo=UTC)  # a Monday
    assert parse("@every 1h30m").next(t) == t.replace(second=5) + timedelta(hours=1, minutes=30)
    assert parse("@every 100ms").next(t) == t + timedelta(seconds=1)  # at least a second
    assert parse("0 0 30 2 *").next(t) is None  # never (robfig gives up after five years)


def test_time_zones() -> None:
    t = datetime(2026, 7, 1, tzinfo=UTC)
    assert parse("TZ=America/New_York 0 9 * * *").next(t) == datetime(2026, 7, 1, 13, tzinfo=UTC)  # EDT
    assert parse("CRON_TZ=Asia/Tokyo 0 9 * * *").next(t) == datetime(2026, 7, 2, 0, tzinfo=UTC)
    with pytest.raises(ScheduleError, match="^provided bad location Mars/X: unknown time zone Mars/X$"):
        parse("TZ=Mars/X 0 9 * * *")


@pytest.mark.parametrize(("spec", "error"), [
    ("", "empty spec string"),
    ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
    ("60 * * * *", "end of range (60) above maximum (59): 60"),
    ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("* * * * 7", "end of range (7) above maximum (6): 7"),
    ("a * * * *", 'failed to parse int from a: strconv.Atoi: parsing "a": invalid syntax'),
    ("-1 * * * *", 'failed to parse int from : strconv.Atoi: parsing "": invalid syntax'),
    ("5-2 * * * *", "beginning of range (5) beyond end of range (2): 5-2"),
    ("*/0 * * * *", "step of range should be a positive number: */0"),
    ("1/2/3 * * * *", "too many slashes: 1/2/3"),
    ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
    ("@reboot", "unrecognized descriptor: @reboot"),
    ("@every 5d", 'failed to parse duration @every 5d: time: unknown unit "d" in duration "5d"'),
    ("@every 5", 'failed to parse duration @every 5: time: missing unit in duration "5"'),
])
def test_errors_are_robfigs(spec: str, error: str) -> None:
    with pytest.raises(ScheduleError) as raised:
        parse(spec)
    assert str(raised.value) == error


def test_go_durations() -> None:
    assert go_duration("1h2m3.5s") == 3723.5 and go_duration("-90s") == -90 and go_duration("0") == 0
    assert go_duration("250ms") == 0.25
