"""Hard generated inputs: time and search steps per allocate call, pruned search against the plain one.

    .venv/bin/python benchmarks/bench_allocator_hard.py [--cases 200] [--first 0] [--plain] [--timeout 10]
                                                        [--small] [--show-slow 1.0]

The inputs come from ``tests/allocator/hard_inputs.py`` (deterministic by seed; families mig, numa,
counters, mixed; up to ~100 devices and 5 pending claims). For each case one fresh Allocator allocates the
pending claims on the node; the figures are the median and worst time and step count per family and
overall. ``--plain`` also runs upstream's plain search (``prune=False``) with a per-case time limit and
checks that both give byte-identical answers where the plain search finishes.
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "allocator"))

from hard_inputs import FAMILIES, HardCase  # noqa: E402

from dralloc.allocator import AllocationError, Allocator  # noqa: E402
from dralloc.api import codec  # noqa: E402


class _TimeLimit(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _TimeLimit


def run_case(case: HardCase, prune: bool, timeout: float = 0) -> tuple[str, float, int | None]:
    """(answer, seconds, steps) for one case; answer "timeout" when the time limit hit."""
    alloc = Allocator(case.slices, case.classes, case.allocated, prune=prune)
    if timeout:
        signal.setitimer(signal.ITIMER_REAL, timeout)
    t = time.perf_counter()
    steps = None
    try:
        out = alloc.allocate(case.node, case.pending)
        steps = out.steps
        answer = out.status
        if out.status == "allocated":
            answer = json.dumps([codec.to_dict(r) for r in out.results], sort_keys=True)
        elif out.invalid_pools:
            answer += " (invalid pools)"
    except AllocationError as exc:
        answer = f"error: {exc}"
    except _TimeLimit:
        answer = "timeout"
    finally:
        if timeout:
            signal.setitimer(signal.ITIMER_REAL, 0)
    return answer, time.perf_counter() - t, steps


def _summary(label: str, times: list[float], steps: list[int]) -> str:
    return (f"{label:10} {len(times):5} {statistics.median(times) * 1e3:11.2f} {max(times) * 1e3:11.2f} "
            f"{statistics.median(steps):11.0f} {max(steps):11}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--small", action="store_true", help="the small variants (the plain search finishes)")
    parser.add_argument("--plain", action="store_true", help="also run the plain search and compare answers")
    parser.add_argument("--timeout", type=float, default=10.0, help="time limit per plain search, seconds")
    parser.add_argument("--limit", type=float, default=30.0, help="time limit per pruned search, seconds")
    parser.add_argument("--show-slow", type=float, default=1.0, help="list cases slower than this, seconds")
    args = parser.parse_args()

    signal.signal(signal.SIGALRM, _alarm)
    by_family: dict[str, tuple[list[float], list[int]]] = {f: ([], []) for f in FAMILIES}
    slow, mismatches, plain_timeouts = [], [], 0
    statuses: dict[str, int] = {}
    for seed in range(args.first, args.first + args.cases):
        case = HardCase(seed, small=args.small)
        answer, seconds, steps = run_case(case, True, args.limit)
        kind = answer if not answer.startswith(("[", "error")) else answer[:5].strip("[:")
        statuses[kind or "allocated"] = statuses.get(kind or "allocated", 0) + 1
        times, counts = by_family[case.family]
        times.append(seconds)
        counts.append(steps or 0)
        if seconds > args.show_slow:
            slow.append((seed, case.family, round(seconds, 3), steps))
        if args.plain:
            plain, _, _ = run_case(case, False, args.timeout)
            if plain == "timeout":
                plain_timeouts += 1
            elif plain != answer:
                mismatches.append(seed)
    header = f"{'family':10} {'cases':>5} {'median ms':>11} {'worst ms':>11} {'med steps':>11} {'max steps':>11}"
    print(header)
    print("-" * len(header))
    all_times: list[float] = []
    all_steps: list[int] = []
    for family, (times, counts) in by_family.items():
        if times:
            print(_summary(family, times, counts))
            all_times += times
            all_steps += counts
    print(_summary("all", all_times, all_steps))
    print(f"answers: {statuses}")
    print(f"slower than {args.show_slow} s: {slow or 'none'}")
    if args.plain:
        print(f"plain search: {len(mismatches)} different answers {mismatches or ''}, "
              f"{plain_timeouts} over {args.timeout} s")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
