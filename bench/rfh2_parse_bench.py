"""The cost of a put whose MQRFH2 holds many properties: how long the queue manager's loop is
busy taking the property folders out of one message.

Not a test. In one process (no sockets): one MQPUT of an MQRFH2 of ``--folders`` folders
(``content='properties'``) of ``--elements`` elements each, on a fresh queue manager, timed
``--repeat`` times (best and median of the wall clock, and the best CPU time of the process,
which moves less when other work shares the machine); the outcome (stored, or the reason code that refused
it) is printed beside the time. Also times ``rfh2map.absorb`` alone on the same bytes.

    python bench/rfh2_parse_bench.py --folders 1000 --elements 1000 --repeat 3
    python bench/rfh2_parse_bench.py --folders 1 --elements 10000 --typed
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time

from ferrymq.engine.api import ObjectDescriptor, PutOptions, SystemClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.properties.rfh2map import absorb
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.rfh2 import MQRFH2


def message(folders: int, elements: int, typed: bool) -> bytes:
    """``typed``: ``<eN dt='i4'>N</eN>`` elements in ``content='properties'`` folders; else
    the report's shape: ``<a/>`` elements (4 bytes each) in ``usr`` folders."""
    if typed:
        body = "".join(f"<e{i} dt='i4'>{i}</e{i}>" for i in range(elements))
        texts = tuple(f"<f{n} content='properties'>{body}</f{n}>" for n in range(folders))
    else:
        texts = ("<usr>" + "<a/>" * elements + "</usr>",) * folders
    return MQRFH2(texts, C.MQENC_NATIVE, 1208, C.MQFMT_STRING).pack() + b"payload"


def put_once(data: bytes) -> tuple[float, float, str]:
    qm = QueueManager.start("BENCH", MemoryJournal(), SystemClock())
    qm.objects.define("QLOCAL", "Q", {})
    hconn = qm.connect()
    hobj = qm.open(hconn, ObjectDescriptor("Q"), C.MQOO_OUTPUT).hobj
    md = MQMD(format=C.MQFMT_RF_HEADER_2)
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        qm.put(hconn, hobj, md, PutOptions(), data)
        outcome = "stored"
    except MQError as exc:
        outcome = f"refused {exc.reason}"
    return time.perf_counter() - t0, time.process_time() - c0, outcome


def absorb_once(data: bytes) -> tuple[float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    with contextlib.suppress(MQError):
        absorb(data, C.MQFMT_RF_HEADER_2, C.MQENC_NATIVE, 1208)
    return time.perf_counter() - t0, time.process_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folders", type=int, default=1000)
    ap.add_argument("--elements", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--typed", action="store_true", help="typed elements with distinct names (see message)")
    args = ap.parse_args()
    data = message(args.folders, args.elements, args.typed)
    puts = [put_once(data) for _ in range(args.repeat)]
    absorbs = [absorb_once(data) for _ in range(args.repeat)]
    print(f"MQRFH2 of {args.folders} folders x {args.elements} elements: {len(data):,} bytes")
    for what, runs in (("MQPUT", [(w, c) for w, c, _ in puts]), ("absorb alone", absorbs)):
        walls = [w for w, _ in runs]
        print(f"{what}: wall best {min(walls) * 1e3:.1f} ms, median {statistics.median(walls) * 1e3:.1f} ms; "
              f"CPU best {min(c for _, c in runs) * 1e3:.1f} ms")
    print(f"outcome: {puts[0][2]}")


if __name__ == "__main__":
    main()
