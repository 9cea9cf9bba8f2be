"""Self-contained SVG line charts (no plotting library): the replay report's and the sweep's figures."""

from __future__ import annotations

from html import escape

COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")


def line_chart(series: dict[str, list[tuple[float, float]]], *, title: str, x_label: str, y_label: str,
               x_range: tuple[float, float] | None = None, y_range: tuple[float, float] | None = None,
               width: int = 720, height: int = 420) -> str:
    """One SVG with a line per series (name → (x, y) points), axes with ticks and a legend."""
    left, right, top, bottom = 60, 160, 40, 50
    xs = [x for pts in series.values() for x, _ in pts] or [0.0, 1.0]
    ys = [y for pts in series.values() for _, y in pts] or [0.0, 1.0]
    x0, x1 = x_range or (min(xs), max(xs))
    y0, y1 = y_range or (min(ys), max(ys))
    if x1 == x0:
        x1 = x0 + 1
    if y1 == y0:
        y1 = y0 + 1
    pw, ph = width - left - right, height - top - bottom

    def px(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * pw

    def py(y: float) -> float:
        return top + ph - (y - y0) / (y1 - y0) * ph

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left + pw / 2}" y="22" text-anchor="middle" font-size="15">{escape(title)}</text>']
    for i in range(6):
        xv, yv = x0 + (x1 - x0) * i / 5, y0 + (y1 - y0) * i / 5
        out.append(f'<line x1="{px(xv):.1f}" y1="{top}" x2="{px(xv):.1f}" y2="{top + ph}" stroke="#eee"/>')
        out.append(f'<line x1="{left}" y1="{py(yv):.1f}" x2="{left + pw}" y2="{py(yv):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{px(xv):.1f}" y="{top + ph + 16}" text-anchor="middle">{xv:g}</text>')
        out.append(f'<text x="{left - 6}" y="{py(yv) + 4:.1f}" text-anchor="end">{yv:.4g}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>')
    out.append(f'<text x="{left + pw / 2}" y="{height - 12}" text-anchor="middle">{escape(x_label)}</text>')
    out.append(f'<text x="16" y="{top + ph / 2}" text-anchor="middle" '
               f'transform="rotate(-90 16 {top + ph / 2})">{escape(y_label)}</text>')
    for i, (name, pts) in enumerate(series.items()):
        colour = COLOURS[i % len(COLOURS)]
        shown = [(x, y) for x, y in pts if x0 <= x <= x1 and y0 <= y <= y1]
        if shown:
            path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in shown)
            out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.8"/>')
        ly = top + 14 + i * 18
        out.append(f'<line x1="{left + pw + 12}" y1="{ly - 4}" x2="{left + pw + 32}" y2="{ly - 4}" '
                   f'stroke="{colour}" stroke-width="3"/>')
        out.append(f'<text x="{left + pw + 38}" y="{ly}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out)
