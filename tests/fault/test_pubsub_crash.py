"""Kill a queue-manager process publishing to durable subscribers with SIGKILL, restart it
from its journal, and check that every acknowledged persistent publication reaches every
durable subscriber exactly once: it waits on each subscription's queue until that
subscriber's get of it commits, never twice, and a backed-out publication reaches nobody.

CI runs a few kills; the issue's full run is 20:

    FERRYMQ_PUBSUB_CRASH_CYCLES=20 .venv/bin/python -m pytest -q tests/fault/test_pubsub_crash.py
"""

from __future__ import annotations

import os
import random
from collections import Counter
from pathlib import Path

from test_engine_crash import run_and_kill

from ferrymq.engine.api import SystemClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.store.file import FileJournal

WORKER = Path(__file__).with_name("pubsub_crash_worker.py")
CYCLES = int(os.environ.get("FERRYMQ_PUBSUB_CRASH_CYCLES", "5"))
SUBS = ("SUB0", "SUB1", "SUB2")


def test_sigkill_publishing_to_durable_subscribers(tmp_path: Path) -> None:
    rng = random.Random(20261126)
    acked: set[str] = set()
    tentative: set[str] = set()
    backed_out: set[str] = set()
    consumed: dict[str, set[str]] = {s: set() for s in SUBS}
    for cycle in range(CYCLES):
        in_flight: dict[str, set[str]] = {s: set() for s in SUBS}
        for line in run_and_kill(tmp_path, cycle + 1, rng, WORKER):
            kind, *rest = line.split()
            if kind == "T":
                tentative.add(rest[0])
            elif kind == "P":
                acked.add(rest[0])
            elif kind == "X":
                backed_out.add(rest[0])
            elif kind == "G":
                in_flight[rest[0]].add(rest[1])
            elif kind == "C":
                assert rest[1] not in consumed[rest[0]], f"{rest[0]} got {rest[1]} in two committed units"
                consumed[rest[0]].add(rest[1])
        journal = FileJournal(tmp_path)
        qm = QueueManager.start("PUBSUBQM", journal, SystemClock())
        present: dict[str, Counter[str]] = {}
        for name in SUBS:
            sub = qm.subscriptions.find(name)
            assert sub is not None, f"cycle {cycle}: durable subscription {name} lost"
            q = qm.objects.require(sub.destination)
            present[name] = Counter(m.data.decode() for m in q.messages.by_seq.values())
        dead = qm.objects.require("SYSTEM.DEAD.LETTER.QUEUE").messages.depth
        journal.close()
        assert not dead, "a copy went to the dead-letter queue"
        # A publication whose commit reached the disk but whose acknowledgement did not is
        # real: every subscriber must have it (or have consumed it in flight).
        seen = set().union(*present.values())
        assert not (seen & backed_out), "a backed-out publication reached a subscriber"
        assert seen <= acked | tentative, "a publication nobody made appeared"
        acked |= seen
        for name in SUBS:
            on_queue = present[name]
            assert all(n == 1 for n in on_queue.values()), f"{name} holds a publication twice"
            missing = (acked - consumed[name]) - set(on_queue)
            # A get whose commit reached the disk just before the kill printed no C: gone,
            # but only if it was got in a unit of work this cycle.
            lost = missing - in_flight[name]
            assert not lost, f"cycle {cycle}: acknowledged publications lost for {name}: {sorted(lost)[:5]}"
            consumed[name] |= missing
            again = consumed[name] & set(on_queue)
            assert not again, f"cycle {cycle}: {name} would get a committed publication again: {sorted(again)[:5]}"
    assert acked and all(consumed.values()), "the load did not exercise publications and committed gets"
