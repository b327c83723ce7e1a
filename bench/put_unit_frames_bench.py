"""The server's decode and engine work for a producer's units of work, by the frames that
carry them (run on demand; never a timed test):

    .venv/bin/python bench/put_unit_frames_bench.py --shape SHAPE [--units 500]
    valgrind --tool=callgrind .venv/bin/python bench/put_unit_frames_bench.py --shape SHAPE --units N

Each unit is 100 persistent asynchronous puts of 1 KiB under syncpoint (MQMD version 1,
as a pymqi program's) and an MQCMIT, framed as the blocking client wrote them:

- ``lone``: PutBatch(62), Put(1), PutBatch(37), Commit: the write forced at 64 KiB took
  the put that had just found the batch full as a plain Put;
- ``held``: PutBatch(63), PutBatch(37), Commit: that put stays held for the next batch.

The frames are encoded first; then the server's connection decodes them and the engine
puts and commits, as ferrymq.server.ops does (no sockets, a memory journal). Prints CPU µs
per message; under callgrind compare two values of ``--units`` (the difference of the
instructions over the difference of messages).
"""

from __future__ import annotations

import argparse
import os
import time

from ferrymq.engine.api import ObjectDescriptor, PutOptions, SystemClock
from ferrymq.engine.putting import PutRequest
from ferrymq.engine.qmgr import QueueManager
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E
from ferrymq.protocol.connection import NEED_DATA, ClientConnection, ServerConnection
from ferrymq.protocol.mdcodec import pack_md
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.mqmd import MQMD

SHAPES = {"lone": (62, 1, 37), "held": (63, 37)}


def run(shape: str, units: int) -> float:
    client, server = ClientConnection(), ServerConnection()
    server.receive_data(client.send(E.Connect(1, "QM1")))
    server.next_event()
    client.receive_data(server.send(E.ConnectReply(1, max_msg_length=4 << 20)))
    client.next_event()
    qm = QueueManager.start("QM1", MemoryJournal(), SystemClock())
    qm.objects.define("QLOCAL", "BENCH", {"MAXDEPTH": 999_999_999})
    hconn = qm.connect(appl_name="bench")
    hobj = qm.open(hconn, ObjectDescriptor("BENCH"), C.MQOO_OUTPUT).hobj
    md = pack_md(MQMD(version=C.MQMD_VERSION_1, persistence=C.MQPER_PERSISTENT))
    options = C.MQPMO_SYNCPOINT | C.MQPMO_ASYNC_RESPONSE | C.MQPMO_FAIL_IF_QUIESCING
    body = os.urandom(1024)
    corr = seq = 10
    streams = []
    for _ in range(units):
        parts = []
        for k in SHAPES[shape]:
            ids = [(seq + j).to_bytes(24, "big") for j in range(k)]
            seq += k
            corr += 1
            if k == 1:
                parts.append(client.send(E.Put(corr, hobj, md[:48] + ids[0] + md[72:], body, options, reply=False)))
            else:
                parts.append(client.send(E.PutBatch(hobj, md, [(i, body) for i in ids], options)))
        corr += 1
        parts.append(client.send(E.Commit(corr)))
        streams.append(b"".join(parts))
    pmo = PutOptions(options & ~C.MQPMO_ASYNC_RESPONSE)
    t0 = time.process_time()
    for stream in streams:
        server.receive_data(stream)
        while (ev := server.next_event()) is not NEED_DATA:
            if isinstance(ev, E.PutBatch):
                assert isinstance(ev.md, MQMD)
                qm.put_many(hconn, ev.hobj, ev.md, pmo, ev.items)
            elif isinstance(ev, E.Put):
                assert isinstance(ev.md, MQMD)
                qm.put_request(PutRequest(hconn, ev.hobj, ev.md, pmo.options, pmo.context, ev.data))
            elif isinstance(ev, E.Commit):
                qm.commit(hconn)
                qm.take_sync_lsn()
                server.send(E.Reply(ev.corr))
    return (time.process_time() - t0) / (units * 100) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", choices=sorted(SHAPES), required=True)
    ap.add_argument("--units", type=int, default=500)
    a = ap.parse_args()
    print(f"{a.shape}: {run(a.shape, a.units):,.2f} CPU µs per message (decode, put, commit)")


if __name__ == "__main__":
    main()
