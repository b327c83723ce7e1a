"""Runs the scenarios: for each contender, each run in fresh processes (spawned, so no
process inherits another's state), on a fresh destination, bounded by the run's time limit.

A run that fails or does not deliver every message gives no rate: its note says what
happened (an error, how many of the messages arrived). A contender that cannot run here
is skipped with the reason.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ferrymq.bench.contender import PERSISTENT, PUBSUB, PUBSUB_PERSISTENT, REQUEST_REPLY, TRANSIENT, Contender
from ferrymq.bench.link import Link
from ferrymq.bench.model import Flow, RoundTrips, StoreRuns
from ferrymq.bench.pubsub import FanOut, account
from ferrymq.bench.registry import run_child

START_TIMEOUT = 60.0  # seconds for every process of a run to connect and say it is ready
GRACE = 15.0  # seconds past a run's time limit before its processes are killed

Progress = Callable[[str], None]


class RunFailed(Exception):
    """A run that gave no figure; the message says why."""


@dataclass
class Run:
    """One run of one contender: a rate or the note saying why there is none."""

    rate: float | None = None
    note: str = ""
    cpu_us: dict[str, float] = field(default_factory=dict)  # role -> CPU µs per message
    latencies: list[float] = field(default_factory=list)  # request/reply, seconds
    extra: dict[str, float] = field(default_factory=dict)


@dataclass
class Entry:
    """One contender in one scenario: its runs, or why it was skipped."""

    scenario: str
    contender: str
    system: str
    client: str
    guarantee: str
    skipped: str = ""
    runs: list[Run] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)


class Runner:
    def __init__(self, contenders: list[Contender], progress: Progress | None = None) -> None:
        self.ctx = mp.get_context("spawn")
        self.contenders = contenders
        self.say = progress or (lambda what: None)
        self._serial = 0
        self._why_not: dict[str, str | None] = {}

    def close(self) -> None:
        for c in self.contenders:
            c.stop()

    def _tag(self, c: Contender) -> str:
        self._serial += 1
        return f"ferry-bench-{int(time.time())}-{self._serial}"

    def _offering(self, kind: str) -> list[Contender]:
        """Contenders that have this kind of scenario at all (JetStream is the persistent
        form of NATS, QoS 1 Mosquitto's): the others are left out, not reported skipped."""
        return [c for c in self.contenders if kind in c.kinds]

    def _entry(self, c: Contender, kind: str, scenario: str, flow: Flow | None) -> Entry:
        entry = Entry(scenario, c.name, c.system, c.client, c.guarantee(kind))
        if c.name not in self._why_not:
            self._why_not[c.name] = c.unavailable()
        entry.skipped = self._why_not[c.name] or c.unsupported(kind, flow) or ""
        if not entry.skipped:
            try:
                c.start(self.ctx)
            except Exception as exc:
                entry.skipped = self._why_not[c.name] = f"did not start: {exc}"
        return entry

    # -- point to point ------------------------------------------------------------------------

    def flow(self, flow: Flow, repeat: int, scenario: str) -> list[Entry]:
        kind = PERSISTENT if flow.persistent else TRANSIENT
        return self._each(kind, scenario, repeat, flow, lambda c: self._flow_once(c, flow))

    def _each(self, kind: str, scenario: str, repeat: int, flow: Flow | None,
              once: Callable[[Contender], Run]) -> list[Entry]:
        """``repeat`` runs of every contender offering ``kind``; a failed run keeps its note.

        The contenders take turns (run 1 of each, then run 2 of each ...), so that a change
        in the machine's load during the scenario falls on all of them alike rather than on
        whichever ran its runs at that time."""
        pairs = [(c, self._entry(c, kind, scenario, flow)) for c in self._offering(kind)]
        for i in range(repeat):
            for c, entry in pairs:
                if not entry.skipped:
                    self.say(f"{scenario}: {c.name} run {i + 1}/{repeat}")
                    entry.runs.append(self._guarded(lambda c=c: once(c)))  # type: ignore[misc]
        return [entry for _, entry in pairs]

    def _guarded(self, once: Callable[[], Run]) -> Run:
        try:
            return once()
        except RunFailed as exc:
            return Run(note=str(exc))

    def _flow_once(self, c: Contender, flow: Flow) -> Run:
        target = c.prepare(self._tag(c), flow.persistent)
        link = Link.make(self.ctx, flow.time_limit)
        server0 = _stats(c)
        procs = [self._spawn(c, "consume", link, target, flow) for _ in range(flow.consumers)]
        ok = False
        try:
            _await_ready(link, flow.consumers)
            procs += [self._spawn(c, "produce", link, target, flow, i) for i in range(flow.producers)]
            _await_ready(link, flow.producers)
            link.go.set()
            reports = _collect(link, flow.producers, "producer")
            link.producers_done.set()
            reports += _collect(link, flow.consumers, "consumer")
            ok = True
        finally:
            _reap(procs, ok)
            c.discard(target)
        server1 = _stats(c)
        producers = [r for r in reports if r["role"] == "producer"]
        consumers = [r for r in reports if r["role"] == "consumer"]
        sent, arrived = sum(r["count"] for r in producers), sum(r["count"] for r in consumers)
        run = Run(cpu_us=_cpu_per_message(reports, server0, server1, arrived or sent))
        if sent < flow.count:
            run.note = f"time limit: {sent:,} of {flow.count:,} sent in {flow.time_limit:g} s"
        elif arrived < flow.count:
            run.note = f"lost messages: {arrived:,} of {flow.count:,} arrived"
        else:
            start = min(r["first"] for r in producers)
            end = max(r["last"] for r in consumers)
            run.rate = arrived / max(end - start, 1e-9)
            run.extra["producer_msgs_per_s"] = sent / max(max(r["last"] for r in producers) - start, 1e-9)
            if server0 and server1 and "fdatasyncs" in server1:  # how the disk's work was shared out
                run.extra["server_fdatasyncs"] = server1["fdatasyncs"] - server0["fdatasyncs"]
        return run

    def _spawn(self, c: Contender, role: str, link: Link, *args: Any) -> Any:
        p = self.ctx.Process(target=run_child, args=(c.name, role, link, *args), daemon=True)
        p.start()
        return p

    # -- publish / subscribe -------------------------------------------------------------------

    def fan_out(self, fan: FanOut, repeat: int, scenario: str) -> list[Entry]:
        """One publisher, ``fan.subscribers`` subscriptions: deliveries per second."""
        kind = PUBSUB_PERSISTENT if fan.persistent else PUBSUB
        entries = self._each(kind, scenario, repeat, None, lambda c: self._fan_once(c, fan))
        for entry in entries:
            entry.settings = {"subscribers": fan.subscribers, "publications": fan.count}
        return entries

    def _fan_once(self, c: Contender, fan: FanOut) -> Run:
        target = c.prepare_fan(self._tag(c), fan)
        link = Link.make(self.ctx, fan.time_limit)
        server0 = _stats(c)
        procs = [self._spawn(c, "subscribe", link, target, fan, i) for i in range(fan.subscribers)]
        ok = False
        try:
            _await_ready(link, fan.subscribers)
            procs.append(self._spawn(c, "publish", link, target, fan))
            _await_ready(link, 1)
            link.go.set()
            reports = _collect(link, 1, "publisher")
            link.producers_done.set()
            reports += _collect(link, fan.subscribers, "subscriber")
            ok = True
        finally:
            _reap(procs, ok)
            c.discard_fan(target, fan)
        server1 = _stats(c)
        verdict = account(fan, reports)
        if verdict.rate is not None and server0 and server1:  # shows a persistent fan-out was synced
            verdict.extra["server_fdatasyncs"] = server1["fdatasyncs"] - server0["fdatasyncs"]
        return Run(rate=verdict.rate, note=verdict.note, extra=verdict.extra,
                   cpu_us=_cpu_per_message(reports, server0, server1, verdict.delivered))

    # -- request / reply -----------------------------------------------------------------------

    def round_trips(self, trips: RoundTrips, repeat: int, scenario: str) -> list[Entry]:
        return self._each(REQUEST_REPLY, scenario, repeat, None, lambda c: self._trips_once(c, trips))

    def _trips_once(self, c: Contender, trips: RoundTrips) -> Run:
        target = c.prepare(self._tag(c), False)
        link = Link.make(self.ctx, trips.time_limit)
        procs = [self._spawn(c, "respond", link, target, trips)]
        ok = False
        try:
            _await_ready(link, 1)
            procs.append(self._spawn(c, "request", link, target, trips))
            _await_ready(link, 1)
            link.go.set()
            (report,) = _collect(link, 1, "request")
            ok = True
        finally:
            _reap(procs, ok)
            c.discard(target)
        lat: list[float] = report["latencies"]
        if len(lat) < trips.count:
            return Run(note=f"time limit: {len(lat):,} of {trips.count:,} round trips in {trips.time_limit:g} s",
                       latencies=lat)
        return Run(rate=len(lat) / sum(lat), latencies=lat,
                   cpu_us={"requester": report["cpu"] / len(lat) * 1e6})

    # -- the store -----------------------------------------------------------------------------

    def store(self, c: Contender, runs: StoreRuns, scenario: str) -> list[Entry]:
        """Persistent units of work from 1..N processes at once: msgs/s, commits/s and the
        journal's fdatasyncs/s, one entry per number of processes."""
        entries = []
        for units in runs.unit_counts():
            entry = self._entry(c, PERSISTENT, scenario, None)
            entry.contender = f"{c.name} x{units}"
            entry.settings = {"units": units}
            entries.append(entry)
            if not entry.skipped:
                self.say(f"{scenario}: {units} concurrent units of work")
                entry.runs.append(self._guarded(lambda units=units: self._store_once(c, runs, units)))  # type: ignore[misc]
        return entries

    def _store_once(self, c: Contender, runs: StoreRuns, units: int) -> Run:
        target = c.prepare(self._tag(c), True)
        link = Link.make(self.ctx, runs.seconds + 30)
        server0 = _stats(c)
        procs = [self._spawn(c, "store_unit", link, target, runs) for _ in range(units)]
        ok = False
        try:
            _await_ready(link, units)
            link.go.set()
            reports = _collect(link, units, "unit")
            ok = True
        finally:
            _reap(procs, ok)
        server1 = _stats(c)
        c.discard(target)
        start = min(r["first"] for r in reports)
        span = max(r["last"] for r in reports) - start
        sent, commits = sum(r["count"] for r in reports), sum(r["commits"] for r in reports)
        run = Run(rate=sent / span, cpu_us=_cpu_per_message(reports, server0, server1, sent))
        run.extra["commits_per_s"] = commits / span
        if server0 and server1:
            syncs = server1["fdatasyncs"] - server0["fdatasyncs"]
            run.extra["fdatasyncs_per_s"] = syncs / span
            run.extra["commits_per_fdatasync"] = commits / max(syncs, 1)
        return run


def _stats(c: Contender) -> dict[str, float] | None:
    stats = getattr(c, "stats", None)
    return stats() if stats is not None else None


def _cpu_per_message(reports: list[dict[str, Any]], server0: dict[str, float] | None,
                     server1: dict[str, float] | None, count: int) -> dict[str, float]:
    if not count:
        return {}
    out: dict[str, float] = {}
    for r in reports:
        out[r["role"]] = out.get(r["role"], 0.0) + r["cpu"] / count * 1e6
    if server0 and server1:
        out["server"] = (server1["cpu"] - server0["cpu"]) / count * 1e6
    return out


def _await_ready(link: Link, n: int) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    for _ in range(n):
        msg = _next(link, deadline, "getting ready")
        if "ready" not in msg:
            raise RunFailed(f"before the start: {msg.get('error', msg)}")


def _collect(link: Link, n: int, role: str) -> list[dict[str, Any]]:
    deadline = time.monotonic() + max(0.0, link.deadline - time.time()) + GRACE
    out: list[dict[str, Any]] = []
    while len(out) < n:
        msg = _next(link, deadline, f"waiting for {role}s")
        if "error" in msg:
            raise RunFailed(f"{msg['role']} failed: {msg['error']}")
        out.append(msg)
    return out


def _next(link: Link, deadline: float, doing: str) -> dict[str, Any]:
    try:
        msg: dict[str, Any] = link.reports.get(timeout=max(0.1, deadline - time.monotonic()))
    except queue.Empty:
        raise RunFailed(f"no answer {doing} within the time limit") from None
    return msg


def _reap(procs: list[Any], ok: bool) -> None:
    """Every process of the run ends: after a finished run they are closing (a responder
    may still be answering); after a failed one they are killed at once."""
    for p in procs:
        p.join(GRACE if ok else 0.5)
        if p.is_alive():
            p.kill()
            p.join(5)


def machine(ctx: Any, size: int, repeat: int, scenario: str, say: Progress) -> list[Entry]:
    """Loopback bandwidth (as messages of ``size`` bytes per second, each with a 4-byte
    length) and the disk's sequential write + fdatasync rate, ``repeat`` times each."""
    from ferrymq.bench.machine import fdatasync_rate, loopback

    wire = Entry(scenario, "loopback TCP", "this machine", "1 MiB writes, process to process",
                 f"bytes only, counted as {size} B messages + 4 B length")
    disk = Entry(scenario, "disk fdatasync", "this machine", f"{size} B append + fdatasync, one at a time",
                 "the rate one synchronous writer gets; group commit shares each sync")
    for i in range(repeat):
        say(f"{scenario}: loopback and fdatasync {i + 1}/{repeat}")
        bps = loopback(ctx, 1.0)
        wire.runs.append(Run(rate=bps / (size + 4), extra={"bytes_per_s": bps}))
        disk.runs.append(Run(rate=fdatasync_rate(size, 1.0)))
    return [wire, disk]
