"""Engine-only: persistent MQPUT then MQGET of N messages on a queue that fits in memory,
for counting instructions with callgrind (the cost paging adds to queues that need none).

    valgrind --tool=callgrind --callgrind-out-file=cg.N python bench/persistent_engine_bench.py --n N --size S

Run it at two counts and divide the difference by the difference of the counts: what is
left is the cost per message (put + get), start-up excluded. The journal is a
MemoryJournal made durable every 64 messages, as a group commit would.
"""

from __future__ import annotations

import argparse

from ferrymq.engine.api import GetOptions, ObjectDescriptor, PutOptions, SystemClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.mq import constants as C
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.mqmd import MQMD


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--size", type=int, default=65536)
    args = ap.parse_args()
    journal = MemoryJournal()
    qm = QueueManager.start("BENCH", journal, SystemClock())
    qm.objects.define("QLOCAL", "Q", {"MAXDEPTH": args.n + 1})
    hconn = qm.connect()
    hobj = qm.open(hconn, ObjectDescriptor("Q"), C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED).hobj
    md, pmo, gmo = MQMD(persistence=C.MQPER_PERSISTENT), PutOptions(), GetOptions()
    data = bytes(range(256)) * (args.size // 256) + bytes(args.size % 256)
    for i in range(args.n):
        qm.put(hconn, hobj, md, pmo, data)
        if i % 64 == 63:
            journal.sync()
    journal.sync()
    for i in range(args.n):
        qm.get(hconn, hobj, MQMD(), gmo, args.size)
        if i % 64 == 63:
            journal.sync()


if __name__ == "__main__":
    main()
