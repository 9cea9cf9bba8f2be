"""Hard generated inputs: time and search steps per allocate call, the worst case and the distribution.

    .venv/bin/python benchmarks/bench_allocator_hard.py [--generator hard|small|fuzz|all] [--cases 200]
                                                        [--first 0] [--limit 10] [--plain] [--timeout 10]
                                                        [--show-slow 1.0] [--seeds 17,301] [--json FILE]

Generators (each deterministic by seed):

* ``hard``  ``tests/allocator/hard_inputs.py`` (families mig, numa, counters, mixed; up to ~100 devices
  and 5 pending claims);
* ``small`` the same families, small enough for the plain search (upstream's order, no pruning);
* ``fuzz``  the random clusters of ``tests/allocator/test_properties.py`` (the hypothesis strategy, drawn
  from ``random.Random(seed)``).

For each input one fresh Allocator allocates the pending claims on the node, with a time limit per input
(``--limit``: the input counts as a timeout). Times are the process's CPU seconds, limit included, so that
other jobs on a shared machine do not inflate them (wall-clock seconds are in the ``--json`` records). The report gives, per generator and family, the p50 / p99 /
worst time and steps, the answers (allocated / unschedulable / error / upstream timeout: the search proved that
kube-scheduler's allocator runs past its filter timeout here), and every input slower than
``--show-slow`` seconds, printed as soon as it is met. ``--json`` also writes one record per input (label,
family, seconds, steps, kind of answer, a digest of the whole answer), so that runs over several seed ranges
can be combined, and runs of two versions compared answer by answer. ``--plain`` also runs the plain search with a time
limit (``--timeout``) and checks that both give byte-identical answers where the plain search finishes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "allocator"))

from hard_inputs import HardCase  # noqa: E402

from dralloc.allocator import AllocationError, Allocator  # noqa: E402
from dralloc.allocator.errors import AllocationTimeout  # noqa: E402
from dralloc.api import codec  # noqa: E402


class _TimeLimit(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _TimeLimit


class Input:
    """One generated allocate call: what the Allocator is built from and the claims it allocates."""

    def __init__(self, label: str, family: str, slices: list[Any], classes: list[Any], allocated: list[Any],
                 node: Any, pending: list[Any]) -> None:
        self.label = label
        self.family = family
        self.slices = slices
        self.classes = classes
        self.allocated = allocated
        self.node = node
        self.pending = pending


def hard_input(seed: int, small: bool) -> Input:
    case = HardCase(seed, small=small)
    return Input(f"{'small' if small else 'hard'}:{seed}", case.family, case.slices, case.classes, case.allocated,
                 case.node, case.pending)


def fuzz_input(seed: int) -> Input:
    from hypothesis.internal.conjecture.data import ConjectureData
    from test_properties import clusters

    objs = ConjectureData(random=random.Random(seed)).draw(clusters())
    kinds = [type(o).__name__ for o in objs]
    return Input(f"fuzz:{seed}", "fuzz",
                 [o for o, k in zip(objs, kinds) if k == "ResourceSlice"],
                 [o for o, k in zip(objs, kinds) if k == "DeviceClass"],
                 [o for o, k in zip(objs, kinds) if k == "ResourceClaim" and o.status is not None],
                 next(o for o, k in zip(objs, kinds) if k == "Node"),
                 [o for o, k in zip(objs, kinds) if k == "ResourceClaim" and o.status is None])


GENERATORS: dict[str, Callable[[int], Input]] = {
    "hard": lambda seed: hard_input(seed, False),
    "small": lambda seed: hard_input(seed, True),
    "fuzz": fuzz_input,
}


def run_input(inp: Input, prune: bool, limit: float = 0) -> tuple[str, float, int | None]:
    """(answer, CPU seconds, steps) for one input; answer "timeout" when the CPU time limit hit."""
    answer, seconds, _, steps = run_timed(inp, prune, limit)
    return answer, seconds, steps


def run_timed(inp: Input, prune: bool, limit: float = 0) -> tuple[str, float, float, int | None]:
    """(answer, CPU seconds, wall-clock seconds, steps) for one input."""
    alloc = Allocator(inp.slices, inp.classes, inp.allocated, prune=prune)
    if limit:
        signal.setitimer(signal.ITIMER_PROF, limit)
    wall = time.perf_counter()
    t = time.process_time()
    steps = None
    try:
        out = alloc.allocate(inp.node, inp.pending)
        steps = out.steps
        answer = out.status
        if out.status == "allocated":
            answer = json.dumps([codec.to_dict(r) for r in out.results], sort_keys=True)
        elif out.invalid_pools:
            answer += " (invalid pools)"
    except AllocationTimeout as exc:
        answer = f"upstream timeout: {exc.filter_message}"
    except AllocationError as exc:
        answer = f"error: {exc}"
    except _TimeLimit:
        answer = "timeout"
    finally:
        if limit:
            signal.setitimer(signal.ITIMER_PROF, 0)
    return answer, time.process_time() - t, time.perf_counter() - wall, steps


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _row(label: str, times: list[float], steps: list[int]) -> str:
    return (f"{label:14} {len(times):6} {_quantile(times, 0.5) * 1e3:9.2f} {_quantile(times, 0.99) * 1e3:9.2f} "
            f"{max(times) * 1e3:10.1f} {_quantile(steps, 0.5):9.0f} {_quantile(steps, 0.99):9.0f} {max(steps):9}")


def _seeds(args: argparse.Namespace) -> Iterator[int]:
    if args.seeds:
        yield from (int(s) for s in args.seeds.split(","))
    else:
        yield from range(args.first, args.first + args.cases)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--generator", default="hard", choices=[*GENERATORS, "all"])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--seeds", default="", help="comma-separated seeds instead of --first/--cases")
    parser.add_argument("--limit", type=float, default=10.0, help="time limit per input, CPU seconds")
    parser.add_argument("--plain", action="store_true", help="also run the plain search and compare answers")
    parser.add_argument("--timeout", type=float, default=10.0, help="time limit per plain search, CPU seconds")
    parser.add_argument("--show-slow", type=float, default=1.0, help="list inputs slower than this, seconds")
    parser.add_argument("--json", default="", help="write one record per input to this file")
    args = parser.parse_args()
    records: list[dict[str, Any]] = []

    signal.signal(signal.SIGPROF, _alarm)
    generators = list(GENERATORS) if args.generator == "all" else [args.generator]
    rows: dict[str, tuple[list[float], list[int]]] = {}
    slow: list[tuple[str, str, float, int | None]] = []
    mismatches: list[str] = []
    plain_timeouts = 0
    answers: dict[str, int] = {}
    for name in generators:
        for seed in _seeds(args):
            inp = GENERATORS[name](seed)
            answer, seconds, wall, steps = run_timed(inp, True, args.limit)
            kind = ("allocated" if answer.startswith("[") else "error" if answer.startswith("error")
                    else "upstream timeout" if answer.startswith("upstream timeout") else answer)
            answers[kind] = answers.get(kind, 0) + 1
            records.append({"input": inp.label, "family": inp.family, "seconds": round(seconds, 6),
                            "wall_seconds": round(wall, 6), "steps": steps, "answer": kind,
                            "digest": hashlib.sha256(answer.encode()).hexdigest()[:16]})
            for key in (f"{name}/{inp.family}" if name != "fuzz" else "", name):
                if key:
                    times, counts = rows.setdefault(key, ([], []))
                    times.append(seconds)
                    counts.append(steps or 0)
            if seconds > args.show_slow or answer == "timeout":
                slow.append((inp.label, inp.family, round(seconds, 3), steps))
                print(f"slow: {inp.label} ({inp.family}) {seconds:.3f} s, {steps} steps"
                      f"{' (timeout)' if answer == 'timeout' else ''}", flush=True)
            if args.plain:
                plain, _, _ = run_input(inp, False, args.timeout)
                if plain == "timeout":
                    plain_timeouts += 1
                elif plain != answer and answer != "timeout":
                    mismatches.append(inp.label)
                    print(f"DIFFERENT ANSWER: {inp.label}", flush=True)
    header = (f"{'input':14} {'cases':>6} {'p50 ms':>9} {'p99 ms':>9} {'worst ms':>10} {'p50 steps':>9} "
              f"{'p99 steps':>9} {'max steps':>9}")
    print(header)
    print("-" * len(header))
    for key, (times, counts) in sorted(rows.items()):
        print(_row(key, times, counts))
    print(f"answers: {answers}")
    print(f"slower than {args.show_slow} s: {len(slow)} {slow or ''}")
    if args.json:
        Path(args.json).write_text(json.dumps(records) + "\n")
    if args.plain:
        print(f"plain search: {len(mismatches)} different answers {mismatches or ''}, "
              f"{plain_timeouts} over {args.timeout} s")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
