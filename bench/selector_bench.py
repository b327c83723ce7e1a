"""Selective get on a deep queue: a handle's selection view against a naive scan.

Not a test. In one process (no sockets): a queue of ``--depth`` messages of which one in
``--every`` matches the selector ``k = 7`` (property k = i mod every). Three runs:

- view: MQOPEN with the SelectionString, then MQGET until every match is taken;
- naive: what selection costs without a view — before each get, evaluate the selector on
  the queue from the front until the first match, then take that message by MsgToken.
  The whole run is quadratic, so ``--naive-gets`` gets are timed twice: the first ones
  (naive_early) and the last ones, after the others were taken untimed (naive_late);
- steady: behind the same deep backlog of non-matching messages, rounds of ``every``
  puts (one matching) and one selective get, as a consumer keeping up would see it
  (only the gets are timed).

    python bench/selector_bench.py --depth 100000 --every 100 --output table|json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time

from ferrymq.engine.api import GetOptions, ObjectDescriptor, PutOptions, SystemClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.engine.selector import compile_selector, message_lookup
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.mqmd import MQMD

SELECTOR = "k = 7"
_GMO = GetOptions(C.MQGMO_NO_WAIT, 0, 0, msg_handle=True)


def _filled(depth: int, every: int, size: int) -> tuple[QueueManager, int, int]:
    qm = QueueManager.start("BENCH", MemoryJournal(), SystemClock())
    qm.objects.define("QLOCAL", "Q", {"MAXDEPTH": 10 * depth + 1000})
    hconn = qm.connect()
    out = qm.open(hconn, ObjectDescriptor("Q"), C.MQOO_OUTPUT).hobj
    md, pmo, data = MQMD(), PutOptions(), b"x" * size
    for i in range(depth):
        qm.put(hconn, out, md, pmo, data, {"k": i % every})
    return qm, hconn, out


def view_run(depth: int, every: int, size: int) -> dict[str, float]:
    qm, hconn, _ = _filled(depth, every, size)
    t0 = time.perf_counter()
    h = qm.open(hconn, ObjectDescriptor("Q", selection_string=SELECTOR), C.MQOO_INPUT_SHARED).hobj
    first = 0.0
    got = 0
    while True:
        try:
            qm.get(hconn, h, MQMD(), _GMO, size)
        except MQError:
            break
        got += 1
        if got == 1:
            first = time.perf_counter() - t0
    elapsed = time.perf_counter() - t0
    view = qm.handles[h].selection
    assert view is not None and got == depth // every
    return {"gets": got, "total_s": elapsed, "us_per_get": elapsed / got * 1e6, "first_get_ms": first * 1e3,
            "evaluations_per_get": view.evaluations / got}


def naive_run(depth: int, every: int, size: int, gets: int, late: bool) -> dict[str, float]:
    qm, hconn, _ = _filled(depth, every, size)
    h = qm.open(hconn, ObjectDescriptor("Q"), C.MQOO_INPUT_SHARED).hobj
    q = qm.objects.require("Q")
    selector = compile_selector(SELECTOR)
    by_token = GetOptions(C.MQGMO_NO_WAIT, 0, C.MQMO_MATCH_MSG_TOKEN, msg_handle=True)
    if late:  # take all but the last ``gets`` matches first, untimed: the late gets scan furthest
        matching = [m for m in q.messages.by_seq.values() if selector.matches(message_lookup(m))]
        matching.sort(key=lambda m: m.key)
        for msg in matching[:-gets]:
            by_token.msg_token = msg.token
            qm.get(hconn, h, MQMD(), by_token, size)
    evaluations = 0
    t0 = time.perf_counter()
    for _ in range(gets):
        for key in q.messages.keys_after(None):
            msg = q.messages.get(key)
            assert msg is not None
            evaluations += 1
            if selector.matches(message_lookup(msg)):
                by_token.msg_token = msg.token
                qm.get(hconn, h, MQMD(), by_token, size)
                break
    elapsed = time.perf_counter() - t0
    return {"gets": gets, "us_per_get": elapsed / gets * 1e6, "evaluations_per_get": evaluations / gets}


def steady_run(depth: int, every: int, size: int, rounds: int) -> dict[str, float]:
    qm, hconn, out = _filled(depth, every, size)
    for msg in list(qm.objects.require("Q").messages.by_seq.values()):  # a backlog that never matches
        if msg.properties is not None and msg.properties["k"] == 7:
            msg.properties["k"] = -1
    h = qm.open(hconn, ObjectDescriptor("Q", selection_string=SELECTOR), C.MQOO_INPUT_SHARED).hobj
    md, pmo, data = MQMD(), PutOptions(), b"x" * size
    with contextlib.suppress(MQError):  # the first get walks the backlog once and finds nothing
        qm.get(hconn, h, MQMD(), _GMO, size)
    view = qm.handles[h].selection
    assert view is not None
    before = view.evaluations
    get_time = 0.0
    for _ in range(rounds):
        for i in range(every):
            qm.put(hconn, out, md, pmo, data, {"k": i})
        t0 = time.perf_counter()
        qm.get(hconn, h, MQMD(), _GMO, size)
        get_time += time.perf_counter() - t0
    return {"rounds": rounds, "us_per_get": get_time / rounds * 1e6,
            "evaluations_per_get": (view.evaluations - before) / rounds}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--depth", type=int, default=100_000, help="messages on the queue (default 100000)")
    ap.add_argument("--every", type=int, default=100, help="one message in EVERY matches (default 100: 1%%)")
    ap.add_argument("--size", type=int, default=256, help="message size in bytes (default 256)")
    ap.add_argument("--naive-gets", type=int, default=20, help="gets timed in each naive run (default 20)")
    ap.add_argument("--rounds", type=int, default=1000, help="rounds in the steady run (default 1000)")
    ap.add_argument("--output", choices=["table", "json"], default="table")
    args = ap.parse_args()
    results = {
        "view": view_run(args.depth, args.every, args.size),
        "naive_early": naive_run(args.depth, args.every, args.size, args.naive_gets, late=False),
        "naive_late": naive_run(args.depth, args.every, args.size, args.naive_gets, late=True),
        "steady": steady_run(args.depth, args.every, args.size, args.rounds),
    }
    if args.output == "json":
        print(json.dumps(results, indent=2))
        return
    print(f"depth {args.depth}, 1 in {args.every} matches '{SELECTOR}', {args.size}-byte messages")
    for name, figures in results.items():
        print(f"{name:7} " + "  ".join(f"{k}={v:,.1f}" if isinstance(v, float) else f"{k}={v:,}"
                                        for k, v in figures.items()))


if __name__ == "__main__":
    main()
