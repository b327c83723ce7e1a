"""The server's own cost per message, without sockets (run on demand; never a timed test).

    .venv/bin/python bench/server_path_bench.py [--n 50000] [--size 1024] [--single] [--output table|json]

Client frames for N asynchronous puts are encoded beforehand (PutBatch frames as the
client sends them, or one Put frame per message with ``--single``); the timed part is what
the server process does for each message of a producer → consumer transfer: decode the
Put frame (ServerConnection), MQPUT into the engine, MQGET for the read-ahead consumer,
and encode the Pushed frame. CPU time (time.process_time), so other load on the machine
changes the figures far less than wall time would. This is the harness for tuning the
server's hot path: the end-to-end figures are in client_bench.py and ``ferrymq bench``.
"""

from __future__ import annotations

import argparse
import json
import os
import time

from ferrymq.engine.api import GetOptions, ObjectDescriptor, PutOptions, SystemClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E
from ferrymq.protocol.connection import NEED_DATA, ClientConnection, ServerConnection
from ferrymq.protocol.mdcodec import pack_md
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.mqmd import MQMD

_CHUNK = 256 * 1024  # what one socket read hands the server at most


def handshake() -> tuple[ClientConnection, ServerConnection]:
    client, server = ClientConnection(), ServerConnection()
    server.receive_data(client.send(E.Connect(1, "QM1")))
    ev = server.next_event()
    assert isinstance(ev, E.Connect)
    client.receive_data(server.send(E.ConnectReply(1, max_msg_length=4 * 1024 * 1024)))
    assert isinstance(client.next_event(), E.ConnectReply)
    server.receive_data(client.send(E.Consume(2, 2, 1_000_000_000)))
    assert isinstance(server.next_event(), E.Consume)
    return client, server


def run(n: int, size: int, batched: bool) -> dict[str, float]:
    client, server = handshake()
    md = pack_md(MQMD(version=C.MQMD_VERSION_2, persistence=C.MQPER_NOT_PERSISTENT))
    body = os.urandom(size)
    if batched:  # as the client sends them on a version-2 connection: ~64 KiB PutBatch frames
        per = max(1, 64 * 1024 // (size + 28))
        ids = [i.to_bytes(24, "big") for i in range(n)]
        stream = b"".join(client.send(E.PutBatch(1, md, [(m, body) for m in ids[i : i + per]], C.MQPMO_NO_SYNCPOINT))
                          for i in range(0, n, per))
    else:
        stream = b"".join(client.send(E.Put(3 + i, 1, md, body, C.MQPMO_NO_SYNCPOINT, reply=False)) for i in range(n))

    qm = QueueManager.start("QM1", MemoryJournal(), SystemClock())
    qm.objects.define("QLOCAL", "BENCH", {"MAXDEPTH": 999_999_999})
    hconn = qm.connect(appl_name="bench")
    put_h = qm.open(hconn, ObjectDescriptor("BENCH"), C.MQOO_OUTPUT).hobj
    get_h = qm.open(hconn, ObjectDescriptor("BENCH"), C.MQOO_INPUT_SHARED).hobj
    pmo = PutOptions(C.MQPMO_NO_SYNCPOINT)
    gmo = GetOptions(C.MQGMO_NO_SYNCPOINT)
    read_md = MQMD(version=C.MQMD_VERSION_2)

    t0 = time.process_time()
    events: list[E.Put | E.PutBatch] = []
    for i in range(0, len(stream), _CHUNK):
        server.receive_data(stream[i : i + _CHUNK])
        while (ev := server.next_event()) is not NEED_DATA:
            assert isinstance(ev, (E.Put, E.PutBatch))
            events.append(ev)
    t1 = time.process_time()
    for ev in events:
        assert isinstance(ev.md, MQMD)
        if isinstance(ev, E.PutBatch):
            qm.put_many(hconn, put_h, ev.md, pmo, ev.items)
        else:
            qm.put(hconn, put_h, ev.md, pmo, ev.data)
        qm.take_sync_lsn()
    t2 = time.process_time()
    if batched:  # as the read-ahead pump takes them: one get's checks, then a run of takes
        results: list[object] = []
        while len(results) < n:
            taken, _ = qm.get_many(hconn, get_h, read_md, gmo, 4 * 1024 * 1024, 256, 256 * 1024)
            results += taken
    else:
        results = [qm.get(hconn, get_h, read_md, gmo, 4 * 1024 * 1024) for _ in range(n)]
    t3 = time.process_time()
    out = 0
    if batched:  # what the server's pump gathers: up to 256 KiB per PushedBatch
        per = max(1, 256 * 1024 // (size + 420))
        for i in range(0, n, per):
            items = [(r.md_bytes or pack_md(r.md), r.data, r.data_length, r.msg_token, r.properties)  # type: ignore[union-attr]
                     for r in results[i : i + per]]
            out += len(server.send(E.PushedBatch(2, items)))
    else:
        for r in results:
            assert not isinstance(r, E.Event) and hasattr(r, "md")
            out += len(server.send(E.Pushed(2, r.md_bytes or pack_md(r.md), r.data, r.data_length, r.msg_token)))  # type: ignore[union-attr]
    t4 = time.process_time()
    per = {
        "decode_put_frame_us": (t1 - t0) / n * 1e6,
        "engine_put_us": (t2 - t1) / n * 1e6,
        "engine_get_us": (t3 - t2) / n * 1e6,
        "encode_pushed_us": (t4 - t3) / n * 1e6,
    }
    return per


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=7, help="runs; each phase's fastest is reported")
    ap.add_argument("--output", choices=("table", "json"), default="table")
    ap.add_argument("--single", action="store_true", help="one frame per message (protocol version 1 peers)")
    a = ap.parse_args()
    runs = [run(a.n, a.size, not a.single) for _ in range(a.repeat)]
    # The minimum of each phase over the runs: other load on the machine only ever adds.
    best = {k: min(r[k] for r in runs) for k in runs[0] if k.endswith("_us") and k != "total_us"}
    best["total_us"] = sum(best.values())
    best["server_bound_msgs_per_s"] = 1e6 / best["total_us"]
    if a.output == "json":
        print(json.dumps(best, indent=2))
        return
    for k, v in best.items():
        print(f"{k:28} {v:12,.2f}")


if __name__ == "__main__":
    main()
