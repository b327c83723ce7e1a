"""A queue-manager process publishing to durable subscribers, for the pub/sub SIGKILL test.

One publisher puts persistent publications on topic ``fault/news`` under units of work;
three durable managed subscriptions (SUB0..SUB2) are read by their own connections under
units of work. After every commit or backout the journal is synced, and only then is the
outcome printed:

  T <id>            published inside an open unit of work (not yet acknowledged)
  P <id>            publication acknowledged (its commit is on disk)
  X <id>            publication backed out (no subscriber may ever see it)
  G <sub> <id>      got from <sub> inside an open unit of work
  C <sub> <id>      get from <sub> committed (must never be delivered to <sub> again)

Usage: python pubsub_crash_worker.py DATA_DIR SEED
"""

from __future__ import annotations

import random
import sys

from ferrymq.engine.api import GetOptions, GetResult, ObjectDescriptor, PutOptions, SubDescriptor, SystemClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.store.file import FileJournal
from ferrymq.wire.mqmd import MQMD

TOPIC = "fault/news"
SUBS = ("SUB0", "SUB1", "SUB2")
DURABLE = C.MQSO_DURABLE | C.MQSO_MANAGED


def main(directory: str, seed: int) -> None:
    rng = random.Random(seed)
    qm = QueueManager.start("PUBSUBQM", FileJournal(directory), SystemClock())
    setup = qm.connect(appl_name="setup")
    # Deep managed queues: a full one would send copies to the dead-letter queue (USEDLQ).
    qm.objects.alter("SYSTEM.DURABLE.MODEL.QUEUE", {"MAXDEPTH": 1_000_000})
    for name in SUBS:
        if qm.subscriptions.find(name) is None:
            res = qm.subscribe(setup, SubDescriptor(C.MQSO_CREATE | DURABLE, object_string=TOPIC, sub_name=name))
            qm.close(setup, res.hobj)
            qm.close(setup, res.hsub)
    qm.journal.sync()
    publisher = qm.connect(appl_name="publisher")
    topic = qm.open(publisher, ObjectDescriptor(object_type=C.MQOT_TOPIC, object_string=TOPIC), C.MQOO_OUTPUT).hobj
    readers = []
    for name in SUBS:
        hconn = qm.connect(appl_name=f"reader-{name}")
        res = qm.subscribe(hconn, SubDescriptor(C.MQSO_RESUME | DURABLE, sub_name=name))
        readers.append({"name": name, "hconn": hconn, "hobj": res.hobj, "gets": []})
    print("READY", flush=True)
    out = sys.stdout
    puts: list[str] = []
    counter = 0
    while True:
        action = rng.random()
        if action < 0.35:
            counter += 1
            ident = f"{seed}-{counter}"
            qm.put(publisher, topic, MQMD(persistence=C.MQPER_PERSISTENT), PutOptions(C.MQPMO_SYNCPOINT), ident.encode())
            puts.append(ident)
            out.write(f"T {ident}\n")
            out.flush()  # seen by the test before any commit can make it durable
        elif action < 0.45:
            commit = rng.random() < 0.75
            (qm.commit if commit else qm.backout)(publisher)
            qm.journal.sync()
            for ident in puts:
                out.write(f"{'P' if commit else 'X'} {ident}\n")
            out.flush()
            puts = []
        elif action < 0.85:
            r = rng.choice(readers)
            try:
                res = qm.get(r["hconn"], r["hobj"], MQMD(), GetOptions(C.MQGMO_SYNCPOINT), 1024)
            except MQError as exc:
                assert exc.reason == C.MQRC_NO_MSG_AVAILABLE
                continue
            assert isinstance(res, GetResult)
            r["gets"].append(res.data.decode())
            out.write(f"G {r['name']} {res.data.decode()}\n")
            out.flush()
        else:
            r = rng.choice(readers)
            commit = rng.random() < 0.75
            (qm.commit if commit else qm.backout)(r["hconn"])
            qm.journal.sync()
            if commit:
                for ident in r["gets"]:
                    out.write(f"C {r['name']} {ident}\n")
            out.flush()
            r["gets"] = []


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
