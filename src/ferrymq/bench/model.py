"""What a benchmark run is asked to do, its limits, and the statistics made of its samples.

Everything here is plain data and arithmetic, shared by the runner (main process), the
drivers (child processes) and the report.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

# Every run is bounded: these are the largest values the command accepts. A refusal names
# the limit and the value asked for (see ``check_limits``).
MAX_COUNT = 2_000_000
MAX_SIZE = 4 * 1024 * 1024
MAX_BYTES_PER_RUN = 2 * 1024 * 1024 * 1024
MAX_PROCESSES = 16
MAX_UOW = 10_000
MAX_REPEAT = 20
MAX_ROUND_TRIPS = 1_000_000
MAX_TIME_LIMIT = 600.0
MAX_STORE_UNITS = 32


class LimitRefused(ValueError):
    """A setting beyond what one bounded run allows; the message names limit and value."""


@dataclass(frozen=True)
class Flow:
    """Point-to-point: ``producers`` processes send ``count`` messages of ``size`` bytes in
    all; ``consumers`` processes take them from one queue. ``uow`` > 0 puts (and gets) in
    units of work of that many messages; ``async_put`` lets puts go without waiting."""

    count: int
    size: int
    producers: int = 1
    consumers: int = 1
    persistent: bool = False
    uow: int = 0
    async_put: bool = True
    time_limit: float = 120.0

    def share(self, index: int) -> int:
        """How many of ``count`` producer ``index`` sends (the first ones take the remainder)."""
        base, extra = divmod(self.count, self.producers)
        return base + (1 if index < extra else 0)


@dataclass(frozen=True)
class RoundTrips:
    """Request/reply: one requester sends ``count`` requests of ``size`` bytes, one at a
    time, each answered by a responder process; the first ``warmup`` are not recorded."""

    count: int
    size: int
    time_limit: float = 120.0

    @property
    def warmup(self) -> int:
        return min(100, self.count // 10)


@dataclass(frozen=True)
class StoreRuns:
    """Persistent puts from 1, 2, 4 ... ``max_units`` processes at once, each committing a
    unit of work of ``uow`` messages and waiting for it, for at most ``seconds`` each."""

    max_units: int
    uow: int
    size: int
    seconds: float = 3.0

    def unit_counts(self) -> list[int]:
        counts, n = [], 1
        while n < self.max_units:
            counts.append(n)
            n *= 2
        return [*counts, self.max_units]


def check_limits(flow: Flow | None = None, trips: RoundTrips | None = None, repeat: int = 1) -> None:
    """Refuse a run beyond the limits above (the command's option ranges check each value;
    this checks what only their combination decides)."""
    if not 1 <= repeat <= MAX_REPEAT:
        raise LimitRefused(f"repeat {repeat} refused: the limit is {MAX_REPEAT} runs per scenario")
    if flow is not None:
        total = flow.count * (flow.size + 4)
        if total > MAX_BYTES_PER_RUN:
            raise LimitRefused(f"count x size = {flow.count:,} x {flow.size:,} B = {total:,} B refused: "
                               f"the limit is {MAX_BYTES_PER_RUN:,} B per run")
        if flow.count < flow.producers:
            raise LimitRefused(f"count {flow.count} refused: fewer messages than the {flow.producers} producers")
        if flow.uow > flow.count:
            raise LimitRefused(f"uow {flow.uow} refused: larger than count {flow.count}")
    if trips is not None and trips.count * (trips.size + 4) * 2 > MAX_BYTES_PER_RUN:
        raise LimitRefused(f"round trips x size = {trips.count:,} x {trips.size:,} B refused: "
                           f"the limit is {MAX_BYTES_PER_RUN:,} B per run")


# -- statistics ----------------------------------------------------------------------------------


@dataclass
class Spread:
    """The median of repeated runs and their range."""

    median: float
    low: float
    high: float
    runs: int

    @classmethod
    def of(cls, values: list[float]) -> Spread | None:
        if not values:
            return None
        return cls(statistics.median(values), min(values), max(values), len(values))

    def as_dict(self) -> dict[str, float]:
        return {"median": self.median, "min": self.low, "max": self.high, "runs": self.runs}


PERCENTILES = (("p50", 0.50), ("p90", 0.90), ("p99", 0.99), ("p99_9", 0.999))


def percentiles(samples: list[float]) -> dict[str, float]:
    """Nearest-rank percentiles and the maximum of ``samples`` (seconds), in microseconds."""
    s = sorted(samples)
    out = {name: s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))] * 1e6 for name, q in PERCENTILES}
    out["max"] = s[-1] * 1e6
    out["mean"] = statistics.fmean(s) * 1e6
    return out


@dataclass
class Histogram:
    """Latency counts in logarithmic buckets: four per doubling, from 1 µs."""

    edges_us: list[float] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)

    @classmethod
    def of(cls, samples: list[float]) -> Histogram:
        if not samples:
            return cls()
        step = 2 ** 0.25
        top = max(samples) * 1e6
        edges = [1.0]
        while edges[-1] <= top:
            edges.append(edges[-1] * step)
        counts = [0] * (len(edges) - 1)
        for s in samples:
            i = int(math.log(max(s * 1e6, 1.0), step))
            counts[min(i, len(counts) - 1)] += 1
        first = next(i for i, c in enumerate(counts) if c)
        return cls([round(e, 1) for e in edges[first:]], counts[first:])
