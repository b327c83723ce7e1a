"""Publish/subscribe fan-out runs: what one asks for (``FanOut``), how each subscriber
counts what it received (``Deliveries``), and the verdict on a run (``account``).

One publisher sends ``count`` publications; each of ``subscribers`` subscriptions must
receive every one of them. The publisher numbers its publications in their first 8 bytes
(big-endian), so that a subscriber counts each publication once: a publication missing,
delivered twice or never published fails the run with a note naming the subscriber and
the numbers, never a lower rate. The figure is deliveries per second: publications
received, summed over the subscribers, from the first publish to the last delivery.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from ferrymq.bench.link import IDLE_AFTER_PRODUCERS, Link

NUMBER = 8  # bytes of the publication number at the start of every body
MAX_SUBSCRIBERS = 16  # processes, like producers and consumers (model.MAX_PROCESSES)


@dataclass(frozen=True)
class FanOut:
    """One publisher, ``subscribers`` subscriptions to one topic, ``count`` publications of
    ``size`` bytes; persistent publications go to durable subscriptions."""

    count: int
    size: int
    subscribers: int = 1
    persistent: bool = False
    time_limit: float = 120.0

    @property
    def deliveries(self) -> int:
        return self.count * self.subscribers

    def refusal(self, max_bytes: int) -> str | None:
        """Why this run is beyond what one bounded run allows, or None."""
        if self.size < NUMBER:
            return (f"size {self.size} refused for pub/sub: each publication carries its number "
                    f"in its first {NUMBER} bytes")
        if not 1 <= self.subscribers <= MAX_SUBSCRIBERS:
            return f"subscribers {self.subscribers} refused: the limit is 1 to {MAX_SUBSCRIBERS}"
        total = self.deliveries * (self.size + 4)
        if total > max_bytes:
            return (f"publications x subscribers x size = {self.count:,} x {self.subscribers} x {self.size:,} B "
                    f"= {total:,} B refused: the limit is {max_bytes:,} B per run")
        return None


class Numbered:
    """The publisher's bodies: random bytes, the publication number in front."""

    def __init__(self, size: int) -> None:
        self._body = bytearray(os.urandom(size))

    def body(self, number: int) -> bytes:
        self._body[:NUMBER] = number.to_bytes(NUMBER, "big")
        return bytes(self._body)


class Deliveries:
    """One subscriber's count: which publications arrived (each once), which twice, and
    which carried a number never published."""

    def __init__(self, link: Link, expected: int, index: int) -> None:
        self.link = link
        self.expected = expected
        self.index = index
        self._seen = bytearray(expected)
        self.count = 0
        self.duplicates = 0
        self.strays = 0
        self.first = 0.0
        self.last = 0.0
        self._done_seen = 0.0

    def add(self, body: Any) -> bool:
        """Count one delivery (``body``: bytes or a memoryview); True once every
        publication has arrived."""
        self.last = time.time()
        n = int.from_bytes(body[:NUMBER], "big") if len(body) >= NUMBER else -1
        if not 0 <= n < self.expected:
            self.strays += 1
        elif self._seen[n]:
            self.duplicates += 1
        else:
            self._seen[n] = 1
            if not self.count:
                self.first = self.last
            self.count += 1
        return self.count >= self.expected

    def done(self) -> bool:
        return self.count >= self.expected

    def idle(self) -> bool:
        """Nothing arrived for a while: True when this subscriber should stop (all arrived,
        the publisher done and nothing came for IDLE_AFTER_PRODUCERS seconds, or the time
        limit passed)."""
        if self.done() or self.link.late():
            return True
        if not self.link.producers_done.is_set():
            return False
        now = time.time()
        self._done_seen = self._done_seen or now
        return now - max(self.last, self._done_seen) > IDLE_AFTER_PRODUCERS

    def missing(self, limit: int = 3) -> list[int]:
        """The first ``limit`` publication numbers that did not arrive."""
        out: list[int] = []
        start = 0
        while len(out) < limit:
            i = self._seen.find(0, start)
            if i < 0:
                break
            out.append(i)
            start = i + 1
        return out

    def report(self, cpu: float) -> dict[str, Any]:
        return {"role": "subscriber", "index": self.index, "count": self.count, "duplicates": self.duplicates,
                "strays": self.strays, "missing": self.missing(), "first": self.first, "last": self.last,
                "cpu": cpu}


@dataclass
class Verdict:
    """A run's deliveries per second, or the note saying why there is no figure."""

    rate: float | None = None
    note: str = ""
    delivered: int = 0
    extra: dict[str, float] = field(default_factory=dict)


def account(fan: FanOut, reports: list[dict[str, Any]]) -> Verdict:
    """The verdict on one run from its publisher's and subscribers' reports: a rate only
    when every subscriber received every publication exactly once."""
    pubs = [r for r in reports if r["role"] == "publisher"]
    subs = sorted((r for r in reports if r["role"] == "subscriber"), key=lambda r: r["index"])
    sent = sum(r["count"] for r in pubs)
    delivered = sum(r["count"] for r in subs)
    verdict = Verdict(delivered=delivered)
    problems: list[str] = []
    if len(pubs) != 1 or len(subs) != fan.subscribers:
        problems.append(f"{len(pubs)} publisher and {len(subs)} of {fan.subscribers} subscriber reports")
    if sent < fan.count:
        problems.append(f"time limit: {sent:,} of {fan.count:,} published in {fan.time_limit:g} s")
    short = [r for r in subs if r["count"] < fan.count]
    if short:
        lost = sum(fan.count - r["count"] for r in short)
        who = ", ".join(f"subscriber {r['index']} got {r['count']:,} of {fan.count:,}"
                        f" (first missing: {', '.join(map(str, r.get('missing', [])))})" for r in short[:4])
        more = f" and {len(short) - 4} more" if len(short) > 4 else ""
        problems.append(f"lost deliveries: {lost:,} of {fan.deliveries:,} missing; {who}{more}")
    twice = [r for r in subs if r["duplicates"]]
    if twice:
        problems.append("duplicate deliveries: " + ", ".join(f"subscriber {r['index']} got {r['duplicates']:,}"
                                                             for r in twice))
    strays = [r for r in subs if r["strays"]]
    if strays:
        problems.append("deliveries never published: " + ", ".join(f"subscriber {r['index']} got {r['strays']:,}"
                                                                   for r in strays))
    if problems:
        verdict.note = "; ".join(problems)
        return verdict
    start = min(r["first"] for r in pubs)
    end = max(r["last"] for r in subs)
    verdict.rate = delivered / max(end - start, 1e-9)
    verdict.extra["publications_per_s"] = sent / max(max(r["last"] for r in pubs) - start, 1e-9)
    return verdict
