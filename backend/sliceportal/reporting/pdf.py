"""The capacity planning report as a PDF, rendered on the server from the report document.

reportlab lays out the text and tables; the delay-vs-capacity figures are drawn with matplotlib
(`Figure` directly: no pyplot, no global state, safe in worker threads) and embedded as PNG.
The fonts are the DejaVu faces matplotlib ships, so µ, Σ and ≤ print everywhere without a
system font.

Order follows what a reader needs first: the findings and their recommendations, then one
section per link (the paper's Table III pattern for the capacities), then the slices.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import matplotlib
from matplotlib.figure import Figure
from reportlab.lib import colors
from reportlab.lib.enums import TA_LEFT
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import (
    Flowable,
    Image,
    KeepTogether,
    Paragraph,
    SimpleDocTemplate,
    Spacer,
    Table,
    TableStyle,
)

from sliceportal.domain.formatting import format_bytes, format_delay, format_rate
from sliceportal.domain.reports.document import (
    Finding,
    LinkReport,
    PerModel,
    Report,
    SliceReport,
)

T = TypeVar("T")

_FONT_DIR = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
_FONT, _BOLD = "DejaVuSans", "DejaVuSans-Bold"
_INK = colors.HexColor("#1d2433")
_MUTED = colors.HexColor("#5b6475")
_RULE = colors.HexColor("#c9ced8")
_HEAD_FILL = colors.HexColor("#eef1f6")
_MISS_HEX = "#b42318"
_SEVERITY_HEX = {"critical": _MISS_HEX, "warning": "#b54708", "info": "#175cd3"}
_MODEL_COLOUR = {"harkous": "#1f5fbf", "netcalc": "#c2410c"}
_PAGE_MARGIN = 16 * mm
_WIDTH = A4[0] - 2 * _PAGE_MARGIN
_FIGURE_DPI = 150
_Y_TOP_TARGETS = 2.5
"""The delay axis ends at this many times the loosest of the levels' tightest targets."""
_CELL_PADDING = 3
_LABEL_NAMES = 3
"""Slices named in a level's legend entry before "+n"."""


def _register_fonts() -> None:
    if _FONT not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(TTFont(_FONT, str(_FONT_DIR / "DejaVuSans.ttf")))
        pdfmetrics.registerFont(TTFont(_BOLD, str(_FONT_DIR / "DejaVuSans-Bold.ttf")))


def _style(name: str, size: float, *, bold: bool = False, **extra: Any) -> ParagraphStyle:
    settings: dict[str, Any] = {
        "fontName": _BOLD if bold else _FONT,
        "fontSize": size,
        "leading": size * 1.3,
        "textColor": _INK,
        "alignment": TA_LEFT,
    }
    return ParagraphStyle(name, **(settings | extra))


_TITLE = _style("title", 17, bold=True, spaceAfter=2 * mm)
_H1 = _style("h1", 13, bold=True, spaceBefore=5 * mm, spaceAfter=2 * mm)
_H2 = _style("h2", 10.5, bold=True, spaceBefore=3 * mm, spaceAfter=1.5 * mm)
_BODY = _style("body", 8.5)
_SMALL = _style("small", 7.5, textColor=_MUTED)
_CELL = _style("cell", 7.5)
_CELL_BOLD = _style("cell-bold", 7.5, bold=True)


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _or_dash(value: T | None, show: Callable[[T], str]) -> str:
    return "—" if value is None else show(value)


def _delay(value: float | None) -> str:
    return "unbounded" if value is None else format_delay(value)


def _capacity(value: float | None) -> str:
    return "none ≤ 1 Pbit/s" if value is None else format_rate(value)


def _yes(value: bool) -> str:
    return "yes" if value else "NO"


def _cell(text: str, width: float) -> str | Paragraph:
    """Cells that fit their column as plain strings (thousands of Paragraphs make long tables
    slow to lay out); the others as Paragraphs, which wrap."""
    if pdfmetrics.stringWidth(text, _FONT, _CELL.fontSize) <= width - 2 * _CELL_PADDING:
        return text
    return Paragraph(_esc(text), _CELL)


def _table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    widths: Sequence[float],
    *,
    misses: Sequence[tuple[int, int]] = (),
) -> Table:
    """A ruled table whose header repeats on every page; ``misses`` (row, column) print red."""
    red = set(misses)
    data: list[list[str | Paragraph]] = [[Paragraph(_esc(h), _CELL_BOLD) for h in header]]
    data += [
        [
            Paragraph(f'<font color="{_MISS_HEX}">{_esc(cell)}</font>', _CELL_BOLD)
            if (r, c) in red
            else _cell(cell, widths[c] * _WIDTH)
            for c, cell in enumerate(row)
        ]
        for r, row in enumerate(rows)
    ]
    table = Table(data, colWidths=[w * _WIDTH for w in widths], repeatRows=1, hAlign="LEFT")
    table.setStyle(
        TableStyle(
            [
                ("BACKGROUND", (0, 0), (-1, 0), _HEAD_FILL),
                ("FONTNAME", (0, 1), (-1, -1), _FONT),
                ("FONTSIZE", (0, 1), (-1, -1), _CELL.fontSize),
                ("TEXTCOLOR", (0, 1), (-1, -1), _INK),
                ("LINEBELOW", (0, 0), (-1, 0), 0.6, _RULE),
                ("LINEBELOW", (0, 1), (-1, -1), 0.25, _RULE),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("LEFTPADDING", (0, 0), (-1, -1), _CELL_PADDING),
                ("RIGHTPADDING", (0, 0), (-1, -1), _CELL_PADDING),
                ("TOPPADDING", (0, 0), (-1, -1), 2),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 2),
            ]
        )
    )
    return table


def _facts(pairs: Sequence[tuple[str, str]]) -> Table:
    """Label/value pairs in two columns of pairs, for a section's key figures."""
    cells = [
        [Paragraph(_esc(label), _SMALL), Paragraph(_esc(value), _CELL_BOLD)]
        for label, value in pairs
    ]
    half = (len(cells) + 1) // 2
    left, right = cells[:half], cells[half:]
    right += [[Paragraph("", _SMALL), Paragraph("", _CELL)]] * (half - len(right))
    rows = [a + b for a, b in zip(left, right, strict=True)]
    table = Table(rows, colWidths=[w * _WIDTH for w in (0.2, 0.3, 0.2, 0.3)], hAlign="LEFT")
    table.setStyle(
        TableStyle(
            [
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("LEFTPADDING", (0, 0), (-1, -1), 2),
                ("TOPPADDING", (0, 0), (-1, -1), 1),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 1),
            ]
        )
    )
    return table


def _per_model(values: PerModel[T], show: Callable[[T], str]) -> tuple[str, str]:
    return show(values.harkous), show(values.netcalc)


# --- Sections ---------------------------------------------------------------------------------


def _front(report: Report) -> list[Flowable]:
    scope = report.scope
    title = "Network" if scope.kind == "network" else f"{scope.kind.capitalize()} {scope.name}"
    p = report.parameters
    telemetry = (
        f"telemetry over the last {format_delay(p.telemetry_window_s)}"
        if p.telemetry_window_s
        else "no telemetry"
    )
    s = report.summary
    severities = ", ".join(f"{s.findings.get(k, 0)} {k}" for k in ("critical", "warning", "info"))
    facts = [
        ("links", str(s.links)),
        ("slices", str(s.slices)),
        ("inadmissible links (harkous / netcalc)", _pair(s.inadmissible_links)),
        ("end-to-end misses (harkous / netcalc)", _pair(s.e2e_violations)),
        ("findings", severities),
        ("tightest link", s.tightest_link or "—"),
    ]
    return [
        Paragraph(_esc(f"Capacity planning report — {title}"), _TITLE),
        Paragraph(
            _esc(
                f"Generated {report.generated_at:%Y-%m-%d %H:%M UTC}; rates growing "
                f"{p.growth_percent_per_month:g} %/month over {p.horizon_months} months; "
                f"{telemetry}. Bounds: harkous (the paper's busy-period equations) and netcalc "
                "(strict-priority network calculus); each link's own model is the one admission "
                "enforces, and headroom, growth and recommendations use it."
            ),
            _SMALL,
        ),
        Spacer(1, 3 * mm),
        _facts(facts),
    ]


def _pair(values: PerModel[int]) -> str:
    return f"{values.harkous} / {values.netcalc}"


def _findings(findings: Sequence[Finding]) -> list[Flowable]:
    out: list[Flowable] = [Paragraph("Findings and recommendations", _H1)]
    if not findings:
        out.append(Paragraph("Nothing to report: every slice keeps its targets.", _BODY))
        return out
    for number, finding in enumerate(findings, 1):
        colour = _SEVERITY_HEX[finding.severity]
        out.append(
            KeepTogether(
                [
                    Paragraph(
                        f'{number}. <font color="{colour}"><b>{finding.severity.upper()}</b></font>'
                        f" · {_esc(finding.subject)}",
                        _SMALL,
                    ),
                    Paragraph(_esc(finding.finding), _BODY),
                    Paragraph(f"<b>→ {_esc(finding.recommendation)}</b>", _BODY),
                    Spacer(1, 1.5 * mm),
                ]
            )
        )
    return out


def _level_label(names: Sequence[str]) -> str:
    shown = ", ".join(names[:_LABEL_NAMES])
    more = len(names) - _LABEL_NAMES
    return f"{shown} +{more}" if more > 0 else shown


def _curves_figure(link: LinkReport) -> Image | None:
    """The bound against capacity, one panel per model, the link's capacity marked.

    Both models give every slice of a priority level the same bound, so one curve per level
    (named by its slices) carries all of them, with the level's tightest target dotted.
    """
    curves = link.curves
    if not curves.capacity_bps or not link.slices:
        return None
    levels: dict[int, list[str]] = {}
    tightest: dict[int, float] = {}
    for row in sorted(link.slices, key=lambda r: r.name):
        levels.setdefault(row.priority, []).append(row.name)
        tightest[row.priority] = min(tightest.get(row.priority, math.inf), row.delay_target_s)
    figure = Figure(figsize=(7.2, 2.5), dpi=_FIGURE_DPI, layout="constrained")
    axes = figure.subplots(1, 2, sharey=True)
    capacities = [c / 1e6 for c in curves.capacity_bps]
    for ax, model in zip(axes, ("harkous", "netcalc"), strict=True):
        per_slice: dict[str, list[float | None]] = getattr(curves.bound_s, model)
        for index, priority in enumerate(sorted(levels, reverse=True)):
            names = levels[priority]
            colour = f"C{index % 10}"
            ys = [math.nan if b is None else b * 1e3 for b in per_slice[names[0]]]
            label = f"P{priority}: {_level_label(names)}"
            ax.plot(capacities, ys, color=colour, linewidth=1.4, label=label)
            ax.axhline(tightest[priority] * 1e3, color=colour, linewidth=0.8, linestyle=":")
        ax.axvline(link.capacity_bps / 1e6, color="#444", linewidth=1, linestyle="--")
        ax.set_title(model, fontsize=9, color=_MODEL_COLOUR[model])
        ax.set_xlabel("capacity (Mbit/s)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("worst-case delay (ms)", fontsize=8)
    # Near the knee (capacity close to the rates) bounds shoot up; show up to a few times the
    # targets, where the decisions are, rather than squashing every curve to the axis.
    axes[0].set_ylim(0, _Y_TOP_TARGETS * max(tightest.values()) * 1e3)
    axes[1].legend(fontsize=6.5, loc="upper right", frameon=False)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    buffer.seek(0)
    return Image(buffer, width=_WIDTH, height=_WIDTH * 2.5 / 7.2)


def _link_section(link: LinkReport) -> list[Flowable]:
    model = link.model
    margin = link.capacity_margin_bps
    growth = link.growth
    months = growth.months_until_inadmissible
    if months is None:
        grows = "still admits its slices at the horizon"
    elif months == 0:
        grows = "does not admit its slices today"
    else:
        grows = f"stops admitting its slices in month {months}"
    facts = [
        ("switch", link.switch),
        ("capacity", format_rate(link.capacity_bps)),
        ("model enforced", model),
        ("queues / MTU", f"{link.queue_count} / {link.mtu_bytes} B"),
        ("Σ rates (utilisation)", f"{format_rate(link.total_rate_bps)} ({link.utilisation:.1%})"),
        ("admissible (harkous / netcalc)", " / ".join(_per_model(link.admissible, _yes))),
        (
            "capacity margin",
            "no capacity works" if margin is None else format_rate(margin),
        ),
        ("growth", grows),
        ("capacity needed at horizon", _capacity(growth.capacity_at_horizon_bps)),
    ]
    out: list[Flowable] = [Paragraph(_esc(f"Link {link.name}"), _H1), _facts(facts)]
    if not link.slices:
        out.append(Paragraph("No slice crosses this link.", _BODY))
        return out
    rows, misses = [], []
    for index, row in enumerate(sorted(link.slices, key=lambda r: (-r.priority, r.name))):
        h, n = _per_model(row.bound_s, _delay)
        rows.append(
            [
                row.name,
                str(row.priority),
                format_rate(row.rate_bps),
                format_bytes(row.burst_bytes),
                format_delay(row.delay_target_s),
                h,
                n,
                _or_dash(getattr(row.slack_s, model), format_delay),
            ]
        )
        for column, ok in ((5, row.meets_target.harkous), (6, row.meets_target.netcalc)):
            if not ok:
                misses.append((index, column))
    out += [
        Paragraph("Slices and per-hop bounds", _H2),
        _table(
            ["slice", "prio", "rate", "burst", "target", "harkous", "netcalc", f"slack ({model})"],
            rows,
            (0.2, 0.06, 0.12, 0.1, 0.1, 0.14, 0.14, 0.14),
            misses=misses,
        ),
    ]
    caps = link.min_capacity_bps
    best = caps.best_plan
    out += [
        Paragraph("Minimum capacity by priority plan (the paper's Table III)", _H2),
        _table(
            ["priorities", "harkous", "netcalc"],
            [
                ["as they are", *_per_model(caps.current, _capacity)],
                ["all at one level", *_per_model(caps.one_level, _capacity)],
                [
                    "best plan found",
                    *_per_model(best, lambda plan: _capacity(plan.capacity_bps)),
                ],
            ],
            (0.4, 0.3, 0.3),
        ),
    ]
    plan = getattr(best, model)
    if plan.priorities:
        levels = ", ".join(f"{name} → {p}" for name, p in sorted(plan.priorities.items()))
        proof = "proven best" if plan.exhaustive else "the best the planner found"
        out.append(Paragraph(_esc(f"Best plan ({model}, {proof}): {levels}."), _SMALL))
    figure = _curves_figure(link)
    if figure is not None:
        caption = Paragraph(
            "One curve per priority level (its slices share the bound); dotted: the "
            "level's tightest per-hop target; dashed: the link's capacity.",
            _SMALL,
        )
        out.append(
            KeepTogether([Paragraph("Worst-case delay against capacity", _H2), figure, caption])
        )
    return out


def _slices_section(slices: Sequence[SliceReport]) -> list[Flowable]:
    out: list[Flowable] = [Paragraph("Slices: end to end and headroom", _H1)]
    if not slices:
        out.append(Paragraph("No slice in scope.", _BODY))
        return out
    rows, misses = [], []
    for index, s in enumerate(slices):
        h, n = _per_model(s.e2e, lambda e: _delay(e.total_s))
        rows.append(
            [
                s.name,
                ", ".join(s.links),
                h,
                n,
                _delay(s.e2e_enforced.total_s),
                _or_dash(s.e2e_delay_target_s, format_delay),
                s.e2e_enforced.worst_hop or "—",
                _or_dash(s.headroom.rate_bps, format_rate),
                _or_dash(s.headroom.burst_bytes, format_bytes),
                s.headroom.rate_limited_by or "—",
            ]
        )
        for column, e2e in ((2, s.e2e.harkous), (3, s.e2e.netcalc), (4, s.e2e_enforced)):
            if not e2e.meets_target:
                misses.append((index, column))
    out.append(
        _table(
            [
                "slice",
                "links",
                "e2e harkous",
                "e2e netcalc",
                "e2e enforced",
                "e2e target",
                "worst hop",
                "+rate",
                "+burst",
                "rate limited by",
            ],
            rows,
            (0.1, 0.12, 0.1, 0.1, 0.1, 0.07, 0.11, 0.09, 0.08, 0.13),
            misses=misses,
        )
    )
    out.append(
        Paragraph(
            "e2e: the sum of the per-hop bounds; enforced: each hop under its link's own model, "
            "as admission checks it. +rate, +burst: how much more the slice could send before "
            "some slice on its links misses a target.",
            _SMALL,
        )
    )
    measured = [s for s in slices if s.measured is not None]
    if measured:
        out.append(Paragraph("Measured against declared and bounded", _H2))
        rows = []
        for s in measured:
            m = s.measured
            assert m is not None
            rows.append(
                [
                    s.name,
                    format_rate(s.rate_bps),
                    f"{format_rate(m.peak_rate_bps)} ({m.peak_rate_vs_declared:.0%})",
                    format_rate(m.mean_rate_bps),
                    _or_dash(m.delay_p99_s, format_delay),
                    _or_dash(m.delay_max_s, lambda v: "≥ " + format_delay(v)),
                    _or_dash(m.delay_max_vs_bound, lambda v: f"{v:.0%}"),
                    _or_dash(m.loss_ratio, lambda v: f"{v:.2%}"),
                ]
            )
        out.append(
            _table(
                [
                    "slice",
                    "declared",
                    "peak (of declared)",
                    "mean",
                    "delay p99",
                    "delay max",
                    "max / bound",
                    "loss",
                ],
                rows,
                (0.15, 0.12, 0.17, 0.12, 0.11, 0.11, 0.11, 0.11),
            )
        )
    return out


def _page_decorations(title: str, generated: str) -> Callable[[Canvas, Any], None]:
    def draw(canvas: Canvas, document: Any) -> None:
        canvas.saveState()
        canvas.setFont(_FONT, 7)
        canvas.setFillColor(_MUTED)
        canvas.drawString(_PAGE_MARGIN, 9 * mm, f"sliceportal · {title} · {generated}")
        canvas.drawRightString(A4[0] - _PAGE_MARGIN, 9 * mm, f"page {document.page}")
        canvas.restoreState()

    return draw


def render_pdf(report: Report) -> bytes:
    """The report as a PDF document (A4)."""
    _register_fonts()
    story = _front(report) + _findings(report.findings)
    for link in report.links:
        story += _link_section(link)
    story += _slices_section(report.slices)
    buffer = io.BytesIO()
    document = SimpleDocTemplate(
        buffer,
        pagesize=A4,
        leftMargin=_PAGE_MARGIN,
        rightMargin=_PAGE_MARGIN,
        topMargin=_PAGE_MARGIN,
        bottomMargin=_PAGE_MARGIN + 4 * mm,
        title=f"sliceportal capacity planning report — {report.scope.name}",
        author="sliceportal",
    )
    decorate = _page_decorations(
        f"capacity planning report, {report.scope.name}",
        f"{report.generated_at:%Y-%m-%d %H:%M UTC}",
    )
    document.build(story, onFirstPage=decorate, onLaterPages=decorate)
    return buffer.getvalue()
