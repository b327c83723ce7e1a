"""What a benchmark produced, summarised: medians and ranges over repeated runs, latency
percentiles and histograms, ferrymq's ratio to every other contender in the same scenario;
as a table, JSON, CSV and a PNG chart.
"""

from __future__ import annotations

import csv
import io
import statistics
from typing import Any

from rich.table import Table

from ferrymq.bench.model import Histogram, Spread, percentiles
from ferrymq.bench.runner import Entry

OURS = "ferrymq"


def summarise(entry: Entry) -> dict[str, Any]:
    """One contender in one scenario, as plain data (the JSON form)."""
    out: dict[str, Any] = {"scenario": entry.scenario, "contender": entry.contender, "system": entry.system,
                           "client": entry.client, "guarantee": entry.guarantee, **entry.settings}
    if entry.skipped:
        out["skipped"] = entry.skipped
        return out
    good = [r for r in entry.runs if r.rate is not None]
    out["runs"] = len(entry.runs)
    out["notes"] = [f"run {i + 1}: {r.note}" for i, r in enumerate(entry.runs) if r.note]
    spread = Spread.of([r.rate for r in good if r.rate is not None])
    out["rate"] = spread.as_dict() if spread else None
    roles = sorted({role for r in good for role in r.cpu_us})
    if roles:
        out["cpu_us_per_msg"] = {role: statistics.median(r.cpu_us[role] for r in good if role in r.cpu_us)
                                 for role in roles}
    extras = sorted({k for r in good for k in r.extra})
    for k in extras:
        out[k] = statistics.median(r.extra[k] for r in good if k in r.extra)
    if any(r.latencies for r in good):
        per_run = [percentiles(r.latencies) for r in good]
        out["latency_us"] = {k: statistics.median(p[k] for p in per_run) for k in per_run[0]}
        out["p99_us_range"] = [min(p["p99"] for p in per_run), max(p["p99"] for p in per_run)]
        merged = [s for r in good for s in r.latencies]
        hist = Histogram.of(merged)
        out["histogram"] = {"edges_us": hist.edges_us, "counts": hist.counts}
    return out


def add_ratios(rows: list[dict[str, Any]]) -> None:
    """ferrymq's figure divided by each other contender's in the same scenario: for rates
    above 1 means ferrymq is faster; for request/reply p99 below 1 means it is quicker."""
    ours = {r["scenario"]: r for r in rows if r["contender"] == OURS and r.get("rate")}
    for r in rows:
        mine = ours.get(r["scenario"])
        if mine is None or r is mine or not r.get("rate"):
            continue
        r["ferrymq_ratio"] = mine["rate"]["median"] / r["rate"]["median"]
        if "latency_us" in r and "latency_us" in mine:
            r["ferrymq_p99_ratio"] = mine["latency_us"]["p99"] / r["latency_us"]["p99"]


def _n(x: float | None, unit: str = "") -> str:
    if x is None:
        return ""
    return f"{x:,.0f}{unit}" if x >= 100 else f"{x:,.1f}{unit}"


COLUMNS = (("scenario", "left"), ("contender", "left"), ("median /s", "right"), ("min-max", "right"),
           ("ferrymq ÷", "right"), ("p50 / p99 / p99.9 / max µs", "right"), ("CPU µs/msg", "right"),
           ("guarantee / note", "left"))


def cells(rows: list[dict[str, Any]]) -> list[list[str]]:
    """The table's rows as text, one list of cells per contender and scenario."""
    out = []
    for r in rows:
        if r.get("skipped"):
            out.append([r["scenario"], r["contender"], "skipped", "", "", "", "", r["skipped"]])
            continue
        rate = r.get("rate")
        lat = r.get("latency_us")
        ratio = ""
        if "ferrymq_ratio" in r:
            ratio = f"{r['ferrymq_ratio']:.2f}x"
            if "ferrymq_p99_ratio" in r:
                ratio += f" (p99 {r['ferrymq_p99_ratio']:.2f}x)"
        cpu = " / ".join(f"{k[:4]} {_n(v)}" for k, v in r.get("cpu_us_per_msg", {}).items())
        note = r["guarantee"]
        if "fdatasyncs_per_s" in r:
            note = (f"{_n(r['commits_per_s'])} commits/s, {_n(r['fdatasyncs_per_s'])} fdatasyncs/s, "
                    f"{r['commits_per_fdatasync']:.1f} commits per fdatasync")
        if "publications_per_s" in r:
            note = f"{_n(r['publications_per_s'])} publications/s to {r['subscribers']} subscriber(s); {note}"
        if r.get("notes"):
            note = "; ".join([*r["notes"], note])
        out.append([r["scenario"], r["contender"], _n(rate["median"]) if rate else "no figure",
                    f"{_n(rate['min'])}-{_n(rate['max'])}" if rate else "", ratio,
                    " / ".join(_n(lat[k]) for k in ("p50", "p99", "p99_9", "max")) if lat else "", cpu, note])
    return out


def table(rows: list[dict[str, Any]], title: str) -> Table:
    t = Table(title=title, title_justify="left")
    for col, just in COLUMNS:
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for row in cells(rows):
        t.add_row(*row)
    return t


def markdown(rows: list[dict[str, Any]]) -> str:
    """The same table in Markdown, for bench/RESULTS.md."""
    lines = ["| " + " | ".join(c for c, _ in COLUMNS) + " |",
             "|" + "|".join("---:" if j == "right" else "---" for _, j in COLUMNS) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells(rows)]
    return "\n".join(lines) + "\n"


CSV_FIELDS = ("scenario", "contender", "system", "client", "guarantee", "skipped", "runs", "median", "min", "max",
              "ferrymq_ratio", "p50_us", "p90_us", "p99_us", "p99_9_us", "max_us", "ferrymq_p99_ratio", "notes")


def to_csv(rows: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, extrasaction="ignore")
    w.writeheader()
    for r in rows:
        flat = dict(r)
        flat["notes"] = "; ".join(r.get("notes", []))
        if r.get("rate"):
            flat.update(median=r["rate"]["median"], min=r["rate"]["min"], max=r["rate"]["max"])
        for k, v in r.get("latency_us", {}).items():
            flat[f"{k}_us"] = v
        w.writerow(flat)
    return buf.getvalue()


def plot(rows: list[dict[str, Any]], path: str) -> None:
    """Throughput by scenario (log scale, min-max as error bars) and the request/reply
    latency distributions, side by side, in one PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rated = [r for r in rows if r.get("rate") and "latency_us" not in r]
    lat = [r for r in rows if r.get("histogram")]
    fig, (left, right) = plt.subplots(1, 2, figsize=(14, max(4.0, 0.3 * len(rated) + 1.5)))
    labels = [f"{r['scenario']}: {r['contender']}" for r in rated]
    med = [r["rate"]["median"] for r in rated]
    err = [[m - r["rate"]["min"] for m, r in zip(med, rated, strict=True)],
           [r["rate"]["max"] - m for m, r in zip(med, rated, strict=True)]]
    colors = ["tab:red" if r["contender"].startswith(OURS) else "tab:blue" for r in rated]
    left.barh(range(len(rated)), med, xerr=err, color=colors)
    left.set_yticks(range(len(rated)), labels, fontsize=8)
    left.invert_yaxis()
    left.set_xscale("log")
    left.set_xlabel("per second, median and min-max (messages; round trips; fdatasyncs for the disk)")
    left.set_title("throughput by scenario")
    for r in lat:
        h = r["histogram"]
        total = sum(h["counts"]) or 1
        right.step(h["edges_us"][:-1], [c / total for c in h["counts"]], where="post", label=r["contender"])
    right.set_xscale("log")
    right.set_xlabel("round trip (µs)")
    right.set_ylabel("share of round trips")
    right.set_title("request/reply latency distribution")
    if lat:
        right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# -- publish/subscribe targets (issue 18) ---------------------------------------------------------

PUBSUB_TARGETS = (  # (scenario is persistent, peer family prefix, peer's label, the ratio needed)
    (False, "nats-core", "NATS core", 1.0),
    (False, "rabbitmq-", "RabbitMQ", 5.0),
    (True, "rabbitmq-", "RabbitMQ with confirms", 5.0),
)


def pubsub_targets(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ferrymq's fan-out deliveries per second against the issue's targets, one line per
    pub/sub scenario and target. Against RabbitMQ the fastest of its clients in the run
    counts (the stricter comparison); a side without a figure leaves the target open."""
    out: list[dict[str, Any]] = []
    for scenario in dict.fromkeys(r["scenario"] for r in rows if "pub/sub" in r["scenario"]):
        persistent = scenario.startswith("persistent")
        here = [r for r in rows if r["scenario"] == scenario]
        ours = next((r for r in here if r["contender"] == OURS), None)
        for wants_persistent, prefix, label, needed in PUBSUB_TARGETS:
            if wants_persistent != persistent:
                continue
            peers = [r for r in here if r["contender"].startswith(prefix) and not r.get("skipped")]
            rated = [r for r in peers if r.get("rate")]
            line: dict[str, Any] = {"scenario": scenario, "target": f">= {needed:g}x {label}", "needed": needed,
                                    "met": None}
            if ours is None or not ours.get("rate"):
                why = "not run" if ours is None else (ours.get("skipped") or "; ".join(ours.get("notes", [])))
                line["why_open"] = f"ferrymq has no figure: {why}"
            elif not rated:
                line["why_open"] = f"{label} has no figure in this run" + (
                    f": {'; '.join(n for r in peers for n in r.get('notes', []))}" if peers else " (not run)")
            else:
                best = max(rated, key=lambda r: r["rate"]["median"])
                ratio = ours["rate"]["median"] / best["rate"]["median"]
                line.update(ferrymq=ours["rate"]["median"], peer=best["contender"], peer_rate=best["rate"]["median"],
                            ratio=ratio, met=ratio >= needed)
            out.append(line)
    return out


def target_lines(targets: list[dict[str, Any]]) -> list[str]:
    """The targets as sentences, for the table and Markdown outputs."""
    lines = []
    for t in targets:
        head = f"{t['scenario']}: ferrymq {t['target']}"
        if t["met"] is None:
            lines.append(f"{head}: open ({t['why_open']})")
        else:
            lines.append(f"{head}: {_n(t['ferrymq'])} vs {_n(t['peer_rate'])} deliveries/s ({t['peer']}) = "
                         f"{t['ratio']:.2f}x, {'met' if t['met'] else 'MISSED'}")
    return lines
