"""The server-side SVG charts: well-formed SVG, one path per unbroken stretch, a circle per
point, bands for spans, and a note instead of an empty chart."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from workbench.charts import Series, Span, line_chart, nice_top, timeline

pytestmark = pytest.mark.unit

SVG = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)  # well-formed XML, or this raises


def test_lines_break_at_none_and_every_point_is_drawn():
    rate = Series("input", [(0, 1.0), (10, 3.0), (20, None), (30, 2.0), (40, 5.5)], "#111")
    done = Series("processed", [(0, 2.0), (10, 4.0)], "#222")
    root = parse(line_chart("Rates <&>", [rate, done], unit="rows/s", area=True))
    groups = root.findall(f"{SVG}g")
    assert [g.get("data-name") for g in groups] == ["input", "processed"]
    lines = groups[0].findall(f"{SVG}path[@class='line']")
    assert [p.get("d").count("L") for p in lines] == [1, 1]  # two stretches of two points
    assert len(groups[0].findall(f"{SVG}path[@class='area']")) == 2  # area: first series only
    assert groups[1].findall(f"{SVG}path[@class='area']") == []
    assert (
        len(groups[0].findall(f"{SVG}circle")) == 4 and len(groups[1].findall(f"{SVG}circle")) == 2
    )
    titles = [c.find(f"{SVG}title").text for c in groups[0].findall(f"{SVG}circle")]
    assert titles[-1] == "input at 00:00:40 UTC: 5.5"
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "Rates <&> (rows/s)" in texts and "10" in texts  # the y axis ends at a round number
    assert root.get("aria-label") == "Rates <&>"
    assert "00:00:00" in texts and "00:00:40" in texts


def test_points_stay_inside_the_plot():
    root = parse(line_chart("x", [Series("v", [(100, -5.0), (200, 7.0), (300, 0.0)])]))
    width, height = (float(v) for v in root.get("viewBox").split()[2:])
    for circle in root.iter(f"{SVG}circle"):
        assert 0 < float(circle.get("cx")) < width and 0 < float(circle.get("cy")) < height


def test_no_values_is_a_note_not_a_chart():
    assert "no data yet" in line_chart("Lag", [Series("behind", [(1, None)])])
    assert "<svg" not in line_chart("Lag", [])


def test_timeline_bands_with_a_legend():
    spans = [Span(0, 60, "STARTING", "#00f"), Span(60, 600, "RUNNING", "#0f0")]
    root = parse(timeline("Status", spans))
    rects = root.findall(f"{SVG}rect[@class='span']")
    assert len(rects) == 2 and float(rects[1].get("width")) > float(rects[0].get("width"))
    assert rects[1].find(f"{SVG}title").text == "RUNNING from 00:01:00 to 00:10:00 UTC"
    assert {"STARTING", "RUNNING"} <= {t.text for t in root.iter(f"{SVG}text")}
    assert "no status changes" in timeline("Status", [])


def test_nice_top():
    assert [nice_top(v) for v in (0, 0.7, 3, 18, 180, 2400)] == [1, 1, 5, 20, 200, 2500]
