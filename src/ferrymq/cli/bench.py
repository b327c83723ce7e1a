"""``ferrymq bench``: ferrymq beside RabbitMQ, NATS, Mosquitto and the machine's own limits,
measured in one run on this machine.

The scenarios and contenders are in ``ferrymq.bench``; this module is the command: its
options and limits, the live progress display, and the output (table, JSON or CSV, and
optionally a PNG chart).
"""

from __future__ import annotations

import datetime
import json
import os
import shlex
import sys
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from ferrymq.bench import channel, report
from ferrymq.bench import model as M
from ferrymq.bench.pubsub import MAX_SUBSCRIBERS, FanOut
from ferrymq.bench.registry import CONTENDERS
from ferrymq.bench.runner import Entry, Runner, machine

SCENARIOS = ("transient", "persistent", "request-reply", "store", "pubsub", "channel", "machine")


FAMILIES = sorted({c.family for c in CONTENDERS.values() if c.family})


def _ports(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict[str, int]:
    out = {}
    for v in values:
        name, _, port = v.partition("=")
        if name not in FAMILIES or not port.isdigit() or not 1 <= int(port) <= 65535:
            raise click.BadParameter(f"{v!r}: expected BROKER=PORT with BROKER one of {', '.join(FAMILIES)} "
                                     "and PORT from 1 to 65535")
        out[name] = int(port)
    return out


def _plan_size(scenarios: tuple[str, ...], contenders: int, repeat: int, store_units: int, fan_outs: int) -> int:
    steps = 0
    for s in scenarios:
        if s in ("transient", "persistent", "request-reply"):
            steps += contenders * repeat
        elif s == "pubsub":
            steps += contenders * repeat * fan_outs
        elif s == "store":
            steps += len(M.StoreRuns(store_units, 1, 0).unit_counts())
        elif s == "machine":
            steps += repeat
        elif s == "channel":
            steps += 5 * repeat
    return max(steps, 1)


def _load() -> str:
    try:
        one, five, _ = os.getloadavg()
    except OSError:
        return "unknown"
    return f"{one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs"


def register(group: click.Group) -> None:
    """Add ``bench`` to the ``ferrymq`` command group."""

    @group.command(name="bench")
    @click.option("--scenario", "scenarios", multiple=True, type=click.Choice(SCENARIOS),
                  help="Run only these scenarios (repeatable); default: all.")
    @click.option("--only", "only", multiple=True, type=click.Choice(list(CONTENDERS)),
                  help="Run only these contenders (repeatable); default: all. ferrymq is always run.")
    @click.option("--count", "--n", "count", type=click.IntRange(10, M.MAX_COUNT), default=20_000,
                  show_default=True, help="Messages per non-persistent run (all producers together).")
    @click.option("--persistent-count", type=click.IntRange(10, M.MAX_COUNT), default=10_000, show_default=True,
                  help="Messages per persistent run.")
    @click.option("--size", type=click.IntRange(0, M.MAX_SIZE), default=1024, show_default=True,
                  help="Message size in bytes.")
    @click.option("--producers", type=click.IntRange(1, M.MAX_PROCESSES), default=1, show_default=True,
                  help="Producer processes.")
    @click.option("--consumers", type=click.IntRange(1, M.MAX_PROCESSES), default=1, show_default=True,
                  help="Consumer processes.")
    @click.option("--uow", type=click.IntRange(0, M.MAX_UOW), default=0, show_default=True,
                  help="Messages per unit of work (0: none); contenders without units of work are skipped.")
    @click.option("--sync-put", is_flag=True, help="ferrymq producers wait for each put (no asynchronous puts).")
    @click.option("--round-trips", "--rr", "round_trips", type=click.IntRange(1, M.MAX_ROUND_TRIPS), default=2_000,
                  show_default=True, help="Request/reply round trips per run.")
    @click.option("--repeat", type=click.IntRange(1, M.MAX_REPEAT), default=3, show_default=True,
                  help="Runs per contender and scenario, the contenders taking turns (the median and min-max are reported).")
    @click.option("--time-limit", type=click.FloatRange(1.0, M.MAX_TIME_LIMIT), default=120.0, show_default=True,
                  help="Seconds one run may take before it stops and reports no figure.")
    @click.option("--store-units", type=click.IntRange(1, M.MAX_STORE_UNITS), default=8, show_default=True,
                  help="Store scenario: up to this many concurrent units of work (1, 2, 4 ... N).")
    @click.option("--store-seconds", type=click.FloatRange(0.5, 60.0), default=3.0, show_default=True,
                  help="Store scenario: seconds per number of units.")
    @click.option("--subscribers", "subscribers", multiple=True, type=click.IntRange(1, MAX_SUBSCRIBERS),
                  default=(1, 10), show_default=True,
                  help="Pub/sub: non-persistent subscriber processes, one fan-out per value (repeatable).")
    @click.option("--durable-subscribers", type=click.IntRange(1, MAX_SUBSCRIBERS), default=5, show_default=True,
                  help="Pub/sub: durable subscriber processes of the persistent fan-out.")
    @click.option("--publications", type=click.IntRange(10, M.MAX_COUNT), default=10_000, show_default=True,
                  help="Pub/sub: non-persistent publications per run (each delivered to every subscriber).")
    @click.option("--persistent-publications", type=click.IntRange(10, M.MAX_COUNT), default=2_000,
                  show_default=True, help="Pub/sub: persistent publications per run.")
    @click.option("--channel-count", type=click.IntRange(10, M.MAX_COUNT), default=5_000, show_default=True,
                  help="Channel scenario: messages QM1 -> QM2 per run (and puts of the one-qmgr baseline), on "
                       "the source first; the channel and the shovel each timed from its go to the last "
                       "message at the destination, no process start inside (ferrymq.bench.channel).")
    @click.option("--channel-batch", type=click.IntRange(1, 9999), default=50, show_default=True,
                  help="Channel scenario: the sender channel's BATCHSZ.")
    @click.option("--port", "ports", multiple=True, metavar="BROKER=PORT", callback=_ports,
                  help="Where a peer broker listens on 127.0.0.1, if not its usual port "
                       f"(BROKER: {', '.join(FAMILIES)}; repeatable).")
    @click.option("--output", "-o", "output", type=click.Choice(["table", "json", "csv", "markdown"]),
                  default="table", show_default=True, help="A table, JSON / CSV for scripts, or Markdown.")
    @click.option("--json-file", type=click.Path(dir_okay=False, writable=True), default=None,
                  help="Also write the JSON here, whatever --output is.")
    @click.option("--plot", type=click.Path(dir_okay=False, writable=True), default=None,
                  help="Also write a PNG chart here (throughput by scenario, latency distribution).")
    def bench(scenarios: tuple[str, ...], only: tuple[str, ...], count: int, persistent_count: int, size: int,
              producers: int, consumers: int, uow: int, sync_put: bool, round_trips: int, repeat: int,
              time_limit: float, store_units: int, store_seconds: float, subscribers: tuple[int, ...],
              durable_subscribers: int, publications: int, persistent_publications: int, channel_count: int,
              channel_batch: int, ports: dict[str, int],
              output: str, json_file: str | None, plot: str | None) -> None:
        """Measure ferrymq beside RabbitMQ, NATS, Mosquitto and the machine's ceiling, in one run.

        Producers, consumers, requesters and responders each run in their own process, on
        127.0.0.1 only. A peer broker is expected on its usual port (RabbitMQ 5672 as
        guest, NATS with JetStream 4222, Mosquitto 1883); one that is not running is
        skipped with a note. Every run is bounded by its count and --time-limit. Pub/sub
        counts deliveries per second (publications received, summed over the
        subscribers); a run in which any subscriber missed a publication gives no figure.
        Record results in bench/RESULTS.md with the command and the date.
        """
        scenarios = scenarios or SCENARIOS
        flow = M.Flow(count, size, producers, consumers, False, uow, not sync_put, time_limit)
        pflow = M.Flow(persistent_count, size, producers, consumers, True, uow, not sync_put, time_limit)
        trips = M.RoundTrips(round_trips, size, time_limit)
        fans = [FanOut(publications, size, n, False, time_limit) for n in dict.fromkeys(subscribers)]
        fans.append(FanOut(persistent_publications, size, durable_subscribers, True, time_limit))
        try:
            M.check_limits(flow, trips, repeat)
            M.check_limits(pflow)
        except M.LimitRefused as exc:
            raise click.UsageError(str(exc)) from None
        refusal = next((r for fan in fans if (r := fan.refusal(M.MAX_BYTES_PER_RUN))), None)
        if "pubsub" in scenarios and refusal:
            raise click.UsageError(refusal)
        names = ["ferrymq", *(n for n in CONTENDERS if n in only and n != "ferrymq")] if only else list(CONTENDERS)
        contenders = [CONTENDERS[n] for n in names]
        for c in contenders:
            c.port = ports.get(c.family, c.port)
        started = datetime.datetime.now(datetime.UTC)
        load_before = _load()
        entries: list[Entry] = []
        console = Console(stderr=True)
        with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                      TimeElapsedColumn(), console=console, transient=True) as progress:
            task = progress.add_task("starting", total=_plan_size(scenarios, len(contenders), repeat, store_units,
                                                                  len(fans)))

            def say(what: str) -> None:
                if not progress.tasks[task].description.startswith("starting"):
                    progress.advance(task)
                progress.update(task, description=what)

            runner = Runner(contenders, say)
            try:
                for s in scenarios:
                    if s == "transient":
                        entries += runner.flow(flow, repeat, "non-persistent")
                    elif s == "persistent":
                        entries += runner.flow(pflow, repeat, "persistent")
                    elif s == "request-reply":
                        entries += runner.round_trips(trips, repeat, "request/reply")
                    elif s == "store":
                        entries += runner.store(CONTENDERS["ferrymq"], M.StoreRuns(store_units, max(uow, 1), size,
                                                                                   store_seconds), "store")
                    elif s == "machine":
                        entries += machine(runner.ctx, size, repeat, "machine", say)
                    elif s == "channel":
                        shovel = "rabbitmq" in {c.family for c in contenders}
                        entries += channel.channel_scenario(
                            channel.ChannelRuns(channel_count, size, channel_batch, repeat, time_limit), say, shovel)
                    else:
                        for fan in fans:
                            entries += runner.fan_out(fan, repeat, fan_out_scenario(fan))
            finally:
                runner.close()
        rows = [report.summarise(e) for e in entries]
        report.add_ratios(rows)
        targets = report.pubsub_targets(rows)
        channel_targets = channel.targets(rows)
        meta: dict[str, Any] = {
            "command": " ".join(["ferrymq", *map(shlex.quote, sys.argv[1:])]) if sys.argv else "ferrymq bench",
            "started": started.isoformat(timespec="seconds"), "load_before": load_before, "load_after": _load(),
            "cpus": os.cpu_count(), "size": size, "count": count, "persistent_count": persistent_count,
            "producers": producers, "consumers": consumers, "uow": uow, "async_put": not sync_put,
            "round_trips": round_trips, "repeat": repeat, "time_limit": time_limit,
            "subscribers": list(dict.fromkeys(subscribers)), "durable_subscribers": durable_subscribers,
            "publications": publications, "persistent_publications": persistent_publications,
            "channel_count": channel_count, "channel_batch": channel_batch,
        }
        if plot:
            report.plot(rows, plot)
        document = json.dumps({"ok": True, **meta, "results": rows, "targets": targets,
                               "channel_targets": channel_targets}, indent=2)
        if json_file:
            with open(json_file, "w") as f:
                f.write(document + "\n")
        title = (f"{size} B messages, {producers} producer / {consumers} consumer process(es)"
                 f"{f', units of work of {uow}' if uow else ''}; {repeat} run(s) each; "
                 f"load {meta['load_before']} before, {meta['load_after']} after")
        if output == "json":
            click.echo(document)
        elif output == "csv":
            click.echo(report.to_csv(rows), nl=False)
        elif output == "markdown":
            click.echo(f"{meta['command']}  ({meta['started']}; {title})\n\n{report.markdown(rows)}", nl=False)
            for line in [*report.target_lines(targets), *channel_targets]:
                click.echo(f"- {line}")
        else:
            Console(highlight=False, width=250).print(report.table(rows, title))
            for line in [*report.target_lines(targets), *channel_targets]:
                click.echo(line)


def fan_out_scenario(fan: FanOut) -> str:
    """The scenario's name in the report: ratios compare contenders within one scenario."""
    if fan.persistent:
        return f"persistent pub/sub x{fan.subscribers} durable"
    return f"pub/sub x{fan.subscribers}"
