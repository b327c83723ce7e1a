"""A queue-manager process under load, for the SIGKILL crash test.

Several connections interleave puts and gets under units of work on queue WORK. After
every commit or backout the journal is synced, and only then is the outcome printed:

  T <id>            put inside an open unit of work (not yet acknowledged)
  G <id>            got inside an open unit of work (not yet acknowledged)
  P <id>            put acknowledged (its commit is on disk)
  X <id>            put backed out (must never be seen again)
  C <id>            get committed (must never be delivered again)
  B <id> <count>    get backed out; the message is back with BackoutCount >= count

Usage: python crash_worker.py DATA_DIR SEED
"""

from __future__ import annotations

import random
import sys

from ferrymq.engine.api import GetOptions, GetResult, ObjectDescriptor, PutOptions, SystemClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.store.file import FileJournal
from ferrymq.wire.mqmd import MQMD


def main(directory: str, seed: int) -> None:
    rng = random.Random(seed)
    qm = QueueManager.start("CRASHQM", FileJournal(directory), SystemClock())
    if qm.objects.find("WORK") is None:
        qm.objects.define("QLOCAL", "WORK", {"MAXDEPTH": 1_000_000, "DEFPSIST": "YES"})
        qm.journal.sync()
    out = sys.stdout
    conns = []
    for _ in range(5):
        hconn = qm.connect(appl_name="crash")
        hobj = qm.open(hconn, ObjectDescriptor("WORK"), C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED).hobj
        conns.append({"hconn": hconn, "hobj": hobj, "puts": [], "gets": []})
    print("READY", flush=True)
    counter = 0
    while True:
        c = rng.choice(conns)
        action = rng.random()
        if action < 0.45:
            counter += 1
            ident = f"{seed}-{counter}"
            qm.put(c["hconn"], c["hobj"], MQMD(persistence=C.MQPER_PERSISTENT), PutOptions(C.MQPMO_SYNCPOINT), ident.encode())
            c["puts"].append(ident)
            out.write(f"T {ident}\n")
            out.flush()  # seen by the test before any commit can make it durable
        elif action < 0.8:
            try:
                res = qm.get(c["hconn"], c["hobj"], MQMD(), GetOptions(C.MQGMO_SYNCPOINT), 1024)
            except MQError as exc:
                assert exc.reason == C.MQRC_NO_MSG_AVAILABLE
                continue
            assert isinstance(res, GetResult)
            c["gets"].append((res.data.decode(), res.md.backout_count))
            out.write(f"G {res.data.decode()}\n")
            out.flush()
        else:
            commit = rng.random() < 0.75
            (qm.commit if commit else qm.backout)(c["hconn"])
            qm.journal.sync()
            for ident in c["puts"]:
                out.write(f"{'P' if commit else 'X'} {ident}\n")
            for ident, count in c["gets"]:
                out.write(f"C {ident}\n" if commit else f"B {ident} {count + 1}\n")
            out.flush()
            c["puts"], c["gets"] = [], []


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
