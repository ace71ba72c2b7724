"""The bench report's plots, drawn with matplotlib (the bench extra) from `ReportData`: SVG for
the page, and one PNG summary a README can embed.

Figures are made with `matplotlib.figure.Figure` and its Agg/SVG canvases directly, never
through pyplot (no global figure state, no GUI backend). No text that came from the samples (task
ids, messages) is drawn: labels are our own words and numbers, so nothing in a plot needs
escaping, and mathtext never parses a task id. SVG text is drawn as paths and carries no date, so
the same data gives the same bytes.
"""

from __future__ import annotations

import importlib.util
import io
from collections.abc import Callable

from verifier._distribution import install_hint
from verifier.bench.report_data import PHASES, ReportData

if importlib.util.find_spec("matplotlib") is None:  # the plots: say which extra
    raise ModuleNotFoundError(
        f"verifier.bench.report needs the bench extra (matplotlib not installed): {install_hint('bench')}",
        name="matplotlib",
    )

from matplotlib.axes import Axes
from matplotlib.figure import Figure

BASE_COLOR = "#4c72b0"
PLUS_COLOR = "#dd8452"
STATUS_COLORS = {"passed": "#55a868", "failed": "#c44e52", "timeout": "#8172b3", "error": "#937860"}
OTHER_COLOR = "#8c8c8c"
PHASE_COLORS = ["#8c8c8c", "#64b5cd", "#ccb974", "#4c72b0", "#c44e52", "#b0b0b0"]


def _figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    fig.patch.set_facecolor("white")
    return fig


def problem_rates(ax: Axes, data: ReportData) -> None:
    """Each problem's pass rate (passed / samples), problems sorted from hardest to easiest;
    with plus, the plus rate beside it on the same order."""
    order = sorted(data.problems, key=lambda p: (p.passed / p.samples, p.task))
    xs = range(len(order))
    ax.bar(xs, [p.passed / p.samples for p in order], width=1.0, linewidth=0, color=BASE_COLOR, label="base")
    if data.plus_pass_at_k is not None:
        rates = [(p.plus_passed or 0) / p.samples for p in order]
        ax.bar(xs, rates, width=0.5, linewidth=0, color=PLUS_COLOR, label="base + plus")
        ax.legend(loc="upper left", frameon=False)
    ax.set_xlim(-0.5, max(len(order), 1) - 0.5)
    ax.set_ylim(0, 1.02)
    ax.set_xticks([])
    ax.set_xlabel(f"{len(order)} problems, hardest first")
    ax.set_ylabel("pass rate")
    ax.set_title("Pass rate per problem")


def status_counts(ax: Axes, data: ReportData) -> None:
    shown = {status: n for status, n in data.statuses.items() if n}
    names = list(shown)[::-1]
    bars = ax.barh(names, [shown[s] for s in names], color=[STATUS_COLORS.get(s, OTHER_COLOR) for s in names])
    ax.bar_label(bars, padding=3)
    ax.set_xlim(0, max(shown.values(), default=1) * 1.18)
    ax.set_xlabel("samples")
    ax.set_title("Status")


def latency(ax: Axes, data: ReportData) -> None:
    """The jobs' total times, with the median and p90 marked."""
    lat = data.latency
    if not lat.values:
        ax.text(0.5, 0.5, "no evidence store", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return
    bins = min(40, max(5, len(lat.values) // 4))
    low, high = min(lat.values), max(lat.values)
    if low > 0 and high / low > 20:  # a long tail (loops that run to their limit): log-spaced bins
        ax.set_xscale("log")
        ax.hist(lat.values, bins=[low * (high / low) ** (i / bins) for i in range(bins + 1)], color=BASE_COLOR)
    else:
        ax.hist(lat.values, bins=bins, color=BASE_COLOR)
    for value, name, style in ((lat.median, "median", "-"), (lat.p90, "p90", "--")):
        if value is not None:
            ax.axvline(value, color="black", linestyle=style, linewidth=1, label=f"{name} {value:.2f} s")
    ax.legend(frameon=False)
    ax.set_xlabel("seconds per job (total)" + (", log scale" if ax.get_xscale() == "log" else ""))
    ax.set_ylabel("jobs")
    ax.set_title(f"Latency ({len(lat.values)} jobs)")


def time_spent(ax: Axes, data: ReportData) -> None:
    """Where the jobs' time went: one stacked bar of the phases' sums."""
    left = 0.0
    for (phase, words), color in zip(PHASES.items(), PHASE_COLORS, strict=True):
        seconds = data.time_s.get(phase, 0.0)
        ax.barh([0], [seconds], left=left, color=color, label=f"{words}: {seconds:.1f} s")
        left += seconds
    ax.set_yticks([])
    ax.set_xlabel("seconds, summed over the jobs")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.35), ncol=3, frameon=False, fontsize="small")
    ax.set_title("Where the time went")


def failure_kinds(ax: Axes, data: ReportData) -> None:
    kinds = dict(list(data.failure_kinds.items())[:12])
    if not kinds:
        ax.text(0.5, 0.5, "no failures", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return
    names = list(kinds)[::-1]
    bars = ax.barh(names, [kinds[k] for k in names], color="#c44e52")
    ax.bar_label(bars, padding=3)
    ax.set_xlim(0, max(kinds.values()) * 1.18)
    ax.set_xlabel("failing samples (first failure)")
    ax.set_title("What failed how")


def _svg(draw: Callable[[Axes, ReportData], None], data: ReportData, size: tuple[float, float]) -> str:
    fig = _figure(*size)
    draw(fig.add_subplot(), data)
    out = io.StringIO()
    fig.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()


def svgs(data: ReportData) -> dict[str, str]:
    """Every plot of the page as an SVG document, by name."""
    return {
        "rates": _svg(problem_rates, data, (9, 3.2)),
        "status": _svg(status_counts, data, (4.5, 3.2)),
        "latency": _svg(latency, data, (4.5, 3.2)),
        "time": _svg(time_spent, data, (9, 2.2)),
        "kinds": _svg(failure_kinds, data, (4.5, 3.2)),
    }


def headline(data: ReportData) -> str:
    """pass@k on one line: base, and plus when the results have it."""
    parts = [f"{k} {v:.3f}" for k, v in data.pass_at_k.items()]
    text = ", ".join(parts) if parts else "pass@k not reported"
    if data.plus_pass_at_k:
        text += "  |  plus: " + ", ".join(f"{k} {v:.3f}" for k, v in data.plus_pass_at_k.items())
    return text


def summary_png(data: ReportData) -> bytes:
    """The README picture: pass@k in the title, pass rate per problem, status, what failed how,
    latency."""
    fig = _figure(13, 6.2)
    fig.suptitle(f"{data.samples} samples, {len(data.problems)} problems: {headline(data)}")
    grid = fig.add_gridspec(2, 3)
    problem_rates(fig.add_subplot(grid[0, :]), data)
    status_counts(fig.add_subplot(grid[1, 0]), data)
    failure_kinds(fig.add_subplot(grid[1, 1]), data)
    latency(fig.add_subplot(grid[1, 2]), data)
    out = io.BytesIO()
    fig.savefig(out, format="png", metadata={"Software": None})
    return out.getvalue()
