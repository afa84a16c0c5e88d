"""A chaos run's report: ``report.json`` and one self-contained ``report.html``.

The HTML needs nothing from the network (inline CSS, server-drawn SVG charts from
:mod:`workbench.charts`, no script): the hypothesis, per run the faults'
timeline, throughput, lag and latency over time, the recovery time, the ledger (when the
run has one) with every lost or doubled window listed, the verdict, and the playbook of
each fault used.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from workbench.chaos.faults import FAULTS
from workbench.charts import Series, Span, line_chart, timeline

_CSS = """body{font:14px system-ui,sans-serif;margin:2em auto;max-width:820px;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-top:1px solid #ddd;padding-top:1em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;
text-align:right}th{background:#f4f4f4}.pass{color:#1a7f37;font-weight:600}
.fail{color:#c62828;font-weight:600}.bad{background:#fdecea}blockquote{color:#555}"""


def verdict(run: dict[str, Any]) -> tuple[bool, str]:
    """Whether a run passed, and why: it recovered, its load was delivered, and its
    ledger (when it has one) balances."""
    if run.get("load_error"):
        return False, f"fail: the load failed ({run['load_error']})"
    if not run.get("recovered"):
        return False, "fail: did not recover within the recovery timeout"
    ledger = run.get("ledger")
    if ledger is not None:
        return bool(ledger["passed"]), ledger["verdict"]
    return True, f"pass: recovered in {run.get('recovery_s') or 0:.1f}s"


def write_report(result: dict[str, Any], folder: Path) -> Path:
    """Write ``report.json`` and ``report.html`` into ``folder``; returns the HTML's path."""
    folder.mkdir(parents=True, exist_ok=True)
    for run in result["runs"]:
        run["passed"], run["verdict"] = verdict(run)
    ledgers = result.get("ledgers") or []
    result["passed"] = all(run["passed"] for run in result["runs"]) and all(
        ledger["passed"] for ledger in ledgers
    )
    (folder / "report.json").write_text(json.dumps(result, indent=2, default=str))
    page = folder / "report.html"
    page.write_text(render(result))
    return page


def render(result: dict[str, Any]) -> str:
    scenario = result["scenario"]
    ledgers = result.get("ledgers") or []
    passed = result.get("passed", all(verdict(r)[0] for r in result["runs"]))
    passed = passed and all(ledger["passed"] for ledger in ledgers)
    head = (
        f"<h1>Chaos: {_e(scenario['name'])}</h1><p>{_e(scenario.get('description', ''))}</p>"
        f"<p><strong>Hypothesis:</strong> {_e(scenario.get('hypothesis') or '(none given)')}</p>"
        f'<p>Verdict: <span class="{_cls(passed)}">{"PASS" if passed else "FAIL"}</span></p>'
    )
    replayed = result.get("replayed") or []
    if replayed:
        names = ", ".join(_e(e["fault"]) for e in replayed)
        head += f"<p>Reverted first, left by an earlier run: {names}</p>"
    body = "".join(_run(run) for run in result["runs"])
    for ledger in ledgers:
        body += f"<h2>The scenario's ledger: {_e(ledger.get('sink', ''))}</h2>"
        body += f'<p class="{_cls(ledger["passed"])}">{_e(ledger["verdict"])}</p>{_ledger(ledger)}'

    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>Chaos report: {_e(scenario['name'])}</title><style>{_CSS}</style></head>"
        f"<body>{head}{body}{_playbook(result)}</body></html>"
    )


def _run(run: dict[str, Any]) -> str:
    ok, why = run.get("passed"), run.get("verdict")
    if ok is None:
        ok, why = verdict(run)
    title = "control (no fault)" if run["control"] else f"{run['fault']} {run['params'] or ''}"
    load = run.get("load") or {}
    recovery = run.get("recovery_s")
    facts = (
        f"<p>Load: {load.get('sent', 0):,} {_e(load.get('kind', ''))} to "
        f"{_e(load.get('topic', ''))} at {load.get('achieved_rate', 0):,.1f}/s "
        f"(target {load.get('target_rate', 0):g}/s). Recovery time: "
        + (f"{recovery:.1f} s" if recovery is not None else "not recovered")
        + f'. <span class="{_cls(ok)}">{_e(why)}</span></p>'
    )
    blast = run.get("blast_radius")
    if blast and blast.get("jobs"):
        facts += f"<p>Blast radius: {_e(blast['kind'])}: job(s) {_e(', '.join(blast['jobs']))}</p>"
    return (
        f"<h2>{_e(run['case'])}: {_e(title.strip())}</h2>{facts}"
        + _charts(run)
        + _timeline_table(run)
        + _ledger(run.get("ledger"))
    )


def _charts(run: dict[str, Any]) -> str:
    t0, samples = run.get("started_epoch", 0.0), run.get("samples") or []
    # a scenario without a job under test has no job values: say so, not "no data yet"
    none = "no data yet" if any("records" in s for s in samples) else "no job under test"

    def points(key: str, scale: float = 1.0) -> list[tuple[float, float | None]]:
        return [(t0 + s["t"], _num(s.get(key), scale)) for s in samples]

    produced = _rate(samples, t0)
    charts = [
        _fault_bands(run, t0),
        line_chart(
            "Throughput",
            [
                Series("produced", produced),
                Series("job processed", points("processed_rate"), "#2ca02c"),
            ],
            unit="records/s",
        ),
        line_chart("Lag", [Series("offsets behind latest", points("lag"), "#d62728")], none=none),
        line_chart(
            "Latency",
            [
                Series("broker metadata round trip", points("broker_ms")),
                Series("job batch duration", points("batch_ms"), "#9467bd"),
            ],
            unit="ms",
        ),
        line_chart(
            "End-to-end latency (now − the job's watermark)",
            [Series("watermark lag", points("watermark_lag_s"), "#8c564b")],
            unit="s",
            none=none,
        ),
    ]
    return "".join(charts)


def _rate(samples: list[dict[str, Any]], t0: float) -> list[tuple[float, float | None]]:
    """Records produced per second between consecutive samples (from the topic's offsets)."""
    out: list[tuple[float, float | None]] = []
    last = None
    for sample in samples:
        if sample.get("produced") is None:
            out.append((t0 + sample["t"], None))
            continue
        if last is not None and sample["t"] > last["t"]:
            rate = (sample["produced"] - last["produced"]) / (sample["t"] - last["t"])
            out.append((t0 + sample["t"], max(rate, 0.0)))
        last = sample
    return out


def _fault_bands(run: dict[str, Any], t0: float) -> str:
    times = {e["event"]: e["t"] for e in run["timeline"]}
    end = max((e["t"] for e in run["timeline"]), default=0.0)
    spans = [Span(t0, t0 + times.get("load finished", end), "load", "#cfe3f7")]
    if "fault applied" in times:
        stop = times.get("fault reverting", end)
        spans.append(Span(t0 + times["fault applied"], t0 + stop, "fault", "#f4b6b6"))
    if "fault reverting" in times:
        back = times.get("fault reverted", end)
        spans.append(Span(t0 + times["fault reverting"], t0 + back, "reverting", "#f9dc9c"))
    if "recovered" in times:
        spans.append(Span(t0 + times["recovered"], t0 + end + 0.5, "recovered", "#b7e4c7"))
    return timeline("Faults' timeline", spans)


def _timeline_table(run: dict[str, Any]) -> str:
    rows = "".join(
        f"<tr><td>{e['t']:.1f}</td><td style='text-align:left'>{_e(e['event'])}</td></tr>"
        for e in run["timeline"]
    )
    return f"<table><tr><th>s</th><th>event</th></tr>{rows}</table>"


def _ledger(ledger: dict[str, Any] | None) -> str:
    if ledger is None:
        return ""
    keys = ("window", "produced", "landed", "dead_letters", "missing", "duplicates", "malformed")
    head = "".join(f"<th>{k.replace('_', ' ')}</th>" for k in keys)
    rows = "".join(
        f"<tr class='{'bad' if r['missing'] or r['duplicates'] else ''}'>"
        + "".join(f"<td>{_e(str(r.get(k, 0)))}</td>" for k in keys)
        + "</tr>"
        for r in ledger["rows"]
    )
    totals = ledger["totals"]
    foot = "<tr><th>total</th>" + "".join(f"<th>{totals.get(k, 0)}</th>" for k in keys[1:])
    foot += "</tr>"
    lost = ", ".join(ledger["lost"]) or "none"
    doubled = ", ".join(ledger["doubled"]) or "none"
    still = ""
    if ledger.get("open"):
        under = f" ({_e(ledger['watermark'])})" if ledger.get("watermark") else ""
        landed = ", ".join(
            f"{r['window']}: {r['landed']} of {r['produced']}" for r in ledger["open_rows"]
        )
        still = (
            f"<p>Open windows, not counted: the job's watermark{under} has not passed their "
            f"end, so they are not final yet (landed so far: {_e(landed)}). They are written "
            "once later events move the watermark past them; do not replay them.</p>"
        )
    keyed = "".join(
        f"<li>{_e(window)}: {_e(', '.join(found))}</li>"
        for window, found in (ledger.get("duplicate_keys") or {}).items()
    )
    return (
        f"<h3>Ledger (windows of {ledger['window_s']:g} s)</h3>"
        "<p>produced = landed + dead letters − duplicates + missing; malformed: the "
        "undecodable records the load planted (the dead letters due)</p>"
        f"<table>{'<tr>' + head + '</tr>'}{rows}{foot}</table>"
        f"<p>Lost windows: {_e(lost)}. Doubled windows: {_e(doubled)}.</p>{still}"
        + (f"<p>Keys landed more than once:</p><ul>{keyed}</ul>" if keyed else "")
    )


def _playbook(result: dict[str, Any]) -> str:

    used = sorted({r["fault"] for r in result["runs"] if r.get("fault")})
    items = "".join(
        f"<li><strong>{_e(name)}</strong>: {_e(FAULTS.get(name).playbook)}</li>" for name in used
    )
    return f"<h2>Playbook</h2><ul>{items or '<li>no faults in this scenario</li>'}</ul>"


def _num(value: Any, scale: float) -> float | None:
    return None if value is None else float(value) * scale


def _cls(ok: bool | None) -> str:
    return "pass" if ok else "fail"


def _e(text: Any) -> str:
    return html.escape(str(text))
