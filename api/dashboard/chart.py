"""The daily usage chart as SVG geometry: stacked bars, computed here, drawn by the template."""

from __future__ import annotations

from dataclasses import dataclass

from shared.credits.usage import DayUsage

CHART_WIDTH = 600
CHART_HEIGHT = 160
BAR_GAP = 2
# Bottom to top; each name is also the CSS class that colours the segment.
SEGMENT_KINDS = ("found", "not_found", "failed", "rate_limited", "cancelled")


@dataclass(frozen=True, slots=True)
class Segment:
    kind: str
    y: float
    height: float


@dataclass(frozen=True, slots=True)
class Bar:
    x: float
    width: float
    label: str
    segments: list[Segment]


def usage_bars(days: list[DayUsage]) -> list[Bar]:
    """One bar per day, scaled so that the busiest day fills the height."""
    busiest = max((day.total for day in days), default=0) or 1
    slot = CHART_WIDTH / max(len(days), 1)
    return [_bar(day, index * slot, slot, busiest) for index, day in enumerate(days)]


def _bar(day: DayUsage, x: float, slot: float, busiest: int) -> Bar:
    segments, top = [], float(CHART_HEIGHT)
    for kind in SEGMENT_KINDS:
        height = getattr(day, kind) / busiest * CHART_HEIGHT
        if height:
            top -= height
            segments.append(Segment(kind, round(top, 2), round(height, 2)))
    label = (
        f"{day.day.isoformat()}: {day.found} found, {day.not_found} not found, {day.failed} failed, "
        f"{day.rate_limited} rate-limited, {day.cancelled} cancelled"
    )
    return Bar(round(x + BAR_GAP / 2, 2), round(slot - BAR_GAP, 2), label, segments)
