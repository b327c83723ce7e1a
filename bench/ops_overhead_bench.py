"""What triggering, depth events, the metrics counters and statistics and accounting cost a
put and a get (issue 22).

Engine only, in process (no socket): N non-persistent MQPUT + MQGET pairs on one local
queue, process CPU time per pair, for a queue with nothing switched on and with TRIGGER
(TRIGTYPE EVERY, no trigger monitor), performance events (PERFMEV, QDPHIEV), statistics
(STATMQI and STATQ ON) or accounting (ACCTMQI and ACCTQ ON) switched on.

    PYTHONPATH=src python bench/ops_overhead_bench.py [--pairs 100000] [--rounds 3]

Run it against two trees (a branch and main) in one sitting, alternating, and say the load.
"""

from __future__ import annotations

import argparse
import time

from ferrymq.engine.api import FakeClock, GetOptions, ObjectDescriptor, PutOptions
from ferrymq.engine.qmgr import QueueManager
from ferrymq.mq import constants as C
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.mqmd import MQMD

CASES: dict[str, dict[str, object]] = {
    "plain": {},
    "trigger": {"TRIGGER": "TRIGGER", "TRIGTYPE": "EVERY", "INITQ": "SYSTEM.DEFAULT.INITIATION.QUEUE",
                "PROCESS": "SYSTEM.DEFAULT.PROCESS"},
    "perf-events": {"QDPHIEV": "ENABLED"},
    "statistics": {},
    "accounting": {},
}
QMGR: dict[str, dict[str, object]] = {  # switched on at the queue manager before the connection
    "perf-events": {"PERFMEV": "ENABLED"},
    "statistics": {"STATMQI": "ON", "STATQ": "ON"},
    "accounting": {"ACCTMQI": "ON", "ACCTQ": "ON"},
}


def one(case: str, pairs: int) -> float:
    qm = QueueManager.start("QM1", MemoryJournal(), FakeClock())
    attrs = dict(CASES[case], MAXDEPTH=999_999_999)
    if case in QMGR:
        qm.objects.alter_qmgr(QMGR[case])
    qm.objects.define("QLOCAL", "BENCH.Q", attrs)
    hconn = qm.connect(appl_name="bench")
    hobj = qm.open(hconn, ObjectDescriptor(object_name="BENCH.Q"), C.MQOO_INPUT_AS_Q_DEF | C.MQOO_OUTPUT).hobj
    md, pmo, gmo = MQMD(), PutOptions(0), GetOptions(C.MQGMO_NO_WAIT, 0, 0)
    started = time.process_time()
    for _ in range(pairs):
        qm.put(hconn, hobj, md, pmo, b"x")
        qm.get(hconn, hobj, MQMD(), gmo, 100)
    return (time.process_time() - started) / pairs * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--case", action="append", choices=list(CASES), help="only these (default: all)")
    args = parser.parse_args()
    for case in args.case or CASES:
        figures = [one(case, args.pairs) for _ in range(args.rounds)]
        print(f"{case:12s} " + " ".join(f"{f:.2f}" for f in figures) + " us per put+get")


if __name__ == "__main__":
    main()
