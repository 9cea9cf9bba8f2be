"""The replay's HTML report: the allocation and fragmentation curves as inline SVG, and the summary."""

from __future__ import annotations

from html import escape

from dralloc.trace.charts import line_chart
from dralloc.trace.replay import ReplayResult


def html_report(results: list[ReplayResult], title: str = "Trace replay") -> str:
    alloc = {f"{r.policy} (seed {r.seed})": [(float(x), y) for x, y in r.curve] for r in results}
    frag = {f"{r.policy} (seed {r.seed})": [(float(x), y) for x, y in r.frag_curve] for r in results}
    rows = "".join(
        f"<tr><td>{escape(r.policy)}</td><td>{r.seed}</td><td>{r.pods}</td><td>{r.failed_pods}</td>"
        f"<td>{_fmt(r.at(100))}</td><td>{_fmt(r.at(100, r.frag_curve))}</td><td>{r.seconds:.1f}</td></tr>"
        for r in results)
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
            "<style>body{font-family:sans-serif;margin:2em}td,th{padding:4px 10px;border-bottom:1px solid #ddd}"
            "</style></head><body>"
            f"<h1>{escape(title)}</h1><table><tr><th>policy</th><th>seed</th><th>pods</th><th>failed</th>"
            "<th>GPU allocated at 100 % arrived</th><th>fragmentation at 100 %</th><th>seconds</th></tr>"
            f"{rows}</table>"
            + line_chart(alloc, title="GPU allocation", x_label="GPU demand arrived (% of cluster)",
                         y_label="GPU allocated (% of cluster)")
            + line_chart(frag, title="GPU fragmentation", x_label="GPU demand arrived (% of cluster)",
                         y_label="fragmented GPU (% of cluster)")
            + "".join(_event_charts(r) for r in results if r.events is not None)
            + "</body></html>\n")


def _event_charts(result: ReplayResult) -> str:
    """Utilisation, fragmentation and queue length against trace time (days), for an event-driven replay."""
    ev = result.events
    if ev is None:
        return ""
    days = [t / 86400 for t in ev.times]
    name = f"{result.policy} (seed {result.seed})"
    return (f"<h2>{escape(name)} over time</h2><p>wait mean {ev.mean_wait:.1f} s, p99 {ev.p99_wait:.0f} s, "
            f"{ev.never_scheduled} pods never scheduled</p>"
            + line_chart({name: list(zip(days, ev.allocated))}, title="GPU utilisation over time",
                         x_label="trace time (days)", y_label="GPU allocated (% of cluster)")
            + line_chart({name: list(zip(days, ev.fragmentation))}, title="GPU fragmentation over time",
                         x_label="trace time (days)", y_label="fragmented GPU (% of cluster)")
            + line_chart({name: [(d, float(w)) for d, w in zip(days, ev.waiting)]}, title="Queue length over time",
                         x_label="trace time (days)", y_label="pods waiting"))


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"
