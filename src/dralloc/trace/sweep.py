"""A grid of replays (policies × seeds × traces) in parallel processes, as CSV rows and an SVG chart.

Each experiment is one :func:`dralloc.trace.replay.replay` in a worker process (``concurrent.futures``);
with ``ray=True`` the same grid runs as Ray tasks (the optional ``dralloc[ray]`` extra; ``ray.init()``
joins the cluster named by ``RAY_ADDRESS``, else starts a local one).
"""

from __future__ import annotations

import csv
import functools
import io
import os
import statistics
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dralloc.errors import InputError
from dralloc.trace.charts import line_chart

if TYPE_CHECKING:
    from dralloc.trace.workload import Workload

MARKS = (50, 80, 90, 100, 110, 120, 130)


@dataclass(frozen=True, slots=True)
class Experiment:
    trace: str  # a label: the pod list's file name
    nodes: str
    pods: str
    policy: str
    seed: int
    inflate: float


@dataclass(frozen=True, slots=True)
class Outcome:
    experiment: Experiment
    total_gpus: int
    pods: int
    failed_pods: int
    seconds: float
    curve: tuple[tuple[int, float], ...]
    frag_curve: tuple[tuple[int, float], ...]

    def at(self, x: int, frag: bool = False) -> float | None:
        return next((y for cx, y in (self.frag_curve if frag else self.curve) if cx == x), None)


def run_one(exp: Experiment) -> Outcome:
    """One experiment (in a worker: the trace is read once per process)."""
    from dralloc.scheduler.plugins.trace_policies.registry import profile
    from dralloc.trace.replay import replay

    work = _workload(exp.nodes, exp.pods)
    result = replay(work, profile(exp.policy, seed=exp.seed, workload=work.typical()), seed=exp.seed,
                    inflate=exp.inflate)
    return Outcome(exp, result.total_gpus, result.pods, result.failed_pods, result.seconds,
                   tuple(result.curve), tuple(result.frag_curve))


@functools.lru_cache(maxsize=8)
def _workload(nodes: str, pods: str) -> Workload:
    """The trace's workload, read once per worker process for all the experiments it runs on those files."""
    from dralloc.trace import workload

    return workload.from_csv(nodes, pods)


def grid(nodes: str, traces: list[str], policies: list[str], seeds: list[int], inflate: float) -> list[Experiment]:
    return [Experiment(os.path.basename(t).removesuffix(".csv"), nodes, t, p, s, inflate)
            for t in traces for s in seeds for p in policies]


def run_grid(experiments: list[Experiment], *, workers: int = 0, ray: bool = False,
             progress: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Every experiment, in the grid's order (runs finish in any order)."""
    if ray:
        return _run_ray(experiments, progress)
    outcomes: dict[Experiment, Outcome] = {}
    with ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
        futures = [pool.submit(run_one, e) for e in experiments]
        for future in as_completed(futures):
            outcome = future.result()
            outcomes[outcome.experiment] = outcome
            if progress is not None:
                progress(outcome)
    return [outcomes[e] for e in experiments]


def _run_ray(experiments: list[Experiment], progress: Callable[[Outcome], None] | None) -> list[Outcome]:
    try:
        import ray  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise InputError("--ray needs Ray: pip install 'dralloc[ray]'") from None
    if not ray.is_initialized():
        ray.init()
    remote = ray.remote(run_one)
    pending = {remote.remote(e): e for e in experiments}
    outcomes: dict[Experiment, Outcome] = {}
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            outcome = ray.get(ref)
            outcomes[pending.pop(ref)] = outcome
            if progress is not None:
                progress(outcome)
    return [outcomes[e] for e in experiments]


def to_csv(outcomes: Iterable[Outcome]) -> str:
    """One row per experiment: its coordinates, pods, failures, seconds and the curve at the marks."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["trace", "policy", "seed", "inflate", "total_gpus", "pods", "failed_pods", "seconds",
                     *(f"alloc_{m}" for m in MARKS), *(f"frag_{m}" for m in MARKS)])
    for o in outcomes:
        e = o.experiment
        writer.writerow([e.trace, e.policy, e.seed, e.inflate, o.total_gpus, o.pods, o.failed_pods,
                         f"{o.seconds:.2f}", *(_cell(o.at(m)) for m in MARKS), *(_cell(o.at(m, True)) for m in MARKS)])
    return out.getvalue()


def _cell(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def summary(outcomes: list[Outcome], arrived: int = 100) -> list[tuple[str, str, float, float, float, int]]:
    """(trace, policy, mean allocation at ``arrived`` %, sample sd, mean seconds, runs) per trace and policy,
    in the grid's order."""
    groups: dict[tuple[str, str], list[Outcome]] = {}
    for o in outcomes:
        groups.setdefault((o.experiment.trace, o.experiment.policy), []).append(o)
    rows = []
    for (trace, policy), runs in groups.items():
        values = [v for o in runs if (v := o.at(arrived)) is not None]
        mean = statistics.fmean(values) if values else float("nan")
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        rows.append((trace, policy, mean, sd, statistics.fmean(o.seconds for o in runs), len(runs)))
    return rows


def chart(outcomes: list[Outcome]) -> str:
    """Unallocated GPU (%) against arrived workload, the median over seeds per policy (the paper's Fig. 9)."""
    series: dict[str, list[tuple[float, float]]] = {}
    groups: dict[tuple[str, str], list[Outcome]] = {}
    for o in outcomes:
        groups.setdefault((o.experiment.trace, o.experiment.policy), []).append(o)
    traces = {t for t, _ in groups}
    for (trace, policy), runs in groups.items():
        xs = sorted({x for o in runs for x, _ in o.curve})
        points = []
        for x in xs:
            values = [v for o in runs if (v := o.at(x)) is not None]
            if values:
                points.append((float(x), 100 - statistics.median(values)))
        series[policy if len(traces) == 1 else f"{trace}/{policy}"] = points
    return line_chart(series, title="Unallocated GPU (median over seeds)", x_label="GPU demand arrived (%)",
                      y_label="unallocated GPU (% of cluster)", x_range=(75, 130), y_range=(0, 30))
