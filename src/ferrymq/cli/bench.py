"""``ferrymq bench``: ferrymq beside RabbitMQ, NATS and Mosquitto, in one run.

The broker runs and drivers are in ``ferrymq.bench.peers``; this module is the command:
a live progress line while it runs, then a table (or JSON / CSV) of medians, min-max, the
request/reply percentiles and ferrymq's ratio to each peer, and optionally a PNG chart.
Everything targets 127.0.0.1 and is bounded by the counts given.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from ferrymq.bench.peers import DRIVERS, run_suite

BROKERS = tuple(DRIVERS)


def _rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for name, r in results.items():
        rr = r.get("request_reply", {})
        rows.append({"broker": name, "skipped": r.get("skipped", ""),
                     "throughput_msgs_per_s": r.get("throughput_msgs_per_s"), "throughput_min": r.get("throughput_min"),
                     "throughput_max": r.get("throughput_max"), "dropped_runs": r.get("dropped_runs", 0),
                     "rr_p50_us": rr.get("p50_us"), "rr_p90_us": rr.get("p90_us"), "rr_p99_us": rr.get("p99_us"),
                     "rr_max_us": rr.get("max_us"), "ferrymq_ratio": r.get("ferrymq_ratio"),
                     "guarantee": r.get("guarantee", "")})
    return rows


def _table(rows: list[dict[str, Any]], n: int) -> Table:
    t = Table(title="1 producer + 1 consumer process; request/reply round trips", title_justify="left")
    for col in ("broker", "msgs/s (median)", "min-max", "r/r p50 µs", "r/r p99 µs", "ferrymq / peer", "guarantee"):
        t.add_column(col, justify="left" if col in ("broker", "guarantee") else "right")
    for r in rows:
        if r["skipped"]:
            t.add_row(r["broker"], "skipped", "", "", "", "", r["skipped"])
            continue
        tp = r["throughput_msgs_per_s"]
        span = f"{r['throughput_min']:,.0f}-{r['throughput_max']:,.0f}" if tp else f"lost messages (of {n})"
        ratio = f"{r['ferrymq_ratio']:.2f}x" if r["ferrymq_ratio"] else ""
        t.add_row(r["broker"], f"{tp:,.0f}" if tp else "—", span, f"{r['rr_p50_us']:,.0f}", f"{r['rr_p99_us']:,.0f}",
                  ratio, r["guarantee"])
    return t


def _plot(rows: list[dict[str, Any]], path: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise click.UsageError("--plot needs matplotlib (pip install 'ferrymq[bench]')") from None
    done = [r for r in rows if not r["skipped"]]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.bar([r["broker"] for r in done], [r["throughput_msgs_per_s"] or 0 for r in done])
    left.set_title("throughput (msgs/s, median)")
    for key, label in (("rr_p50_us", "p50"), ("rr_p90_us", "p90"), ("rr_p99_us", "p99")):
        right.plot([r["broker"] for r in done], [r[key] for r in done], marker="o", label=label)
    right.set_title("request/reply latency (µs)")
    right.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def register(group: click.Group) -> None:
    """Add ``bench`` to the ``ferrymq`` command group."""

    @group.command(name="bench")
    @click.option("--n", "n", type=click.IntRange(10, 10_000_000), default=20_000, show_default=True,
                  help="Messages per throughput run.")
    @click.option("--rr", type=click.IntRange(1, 1_000_000), default=2_000, show_default=True,
                  help="Request/reply round trips.")
    @click.option("--size", type=click.IntRange(0, 4 * 1024 * 1024), default=1024, show_default=True,
                  help="Message size in bytes.")
    @click.option("--repeat", type=click.IntRange(1, 20), default=3, show_default=True,
                  help="Throughput runs per broker (the median is reported).")
    @click.option("--only", "only", multiple=True, type=click.Choice(BROKERS),
                  help="Run only these brokers (repeatable); default: all.")
    @click.option("--output", "-o", "output", type=click.Choice(["table", "json", "csv"]), default="table",
                  show_default=True, help="table, or json / csv for scripts.")
    @click.option("--plot", type=click.Path(dir_okay=False), default=None, help="Write a PNG chart here.")
    def bench(n: int, rr: int, size: int, repeat: int, only: tuple[str, ...], output: str, plot: str | None) -> None:
        """Measure ferrymq beside RabbitMQ, NATS and Mosquitto on this machine, in one run.

        Each side runs in its own process; peers that are not listening on their usual
        loopback port are skipped with a note. Results go in bench/RESULTS.md by hand, with
        the command and the date.
        """
        brokers = list(only) or list(BROKERS)
        console = Console(stderr=True)
        with console.status("starting") as status:
            results = run_suite(brokers, n, rr, size, repeat,
                                lambda broker, what: status.update(f"{broker}: {what}"))
        rows = _rows(results)
        if plot:
            _plot(rows, plot)
        if output == "json":
            click.echo(json.dumps({"ok": True, "n": n, "rr": rr, "size": size, "repeat": repeat, "results": results},
                                  indent=2))
        elif output == "csv":
            buf = io.StringIO()
            writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
            click.echo(buf.getvalue(), nl=False)
        else:
            Console(highlight=False).print(_table(rows, n))
