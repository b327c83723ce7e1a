"""The server's own work per persistent message got under syncpoint, without sockets (run on
demand; never a timed test):

    .venv/bin/python bench/syncpoint_get_bench.py [--n 10000] [--size 1024] [--uow 100] --mode MODE
    valgrind --tool=callgrind .venv/bin/python bench/syncpoint_get_bench.py --n N --mode MODE

N persistent messages are put first (not measured when two values of N are compared under
callgrind: the puts cost the same per message in every mode, so the difference of two
runs' instructions over the difference of N counts puts and gets; compare modes by it).
Then a consumer takes them in units of ``--uow`` and commits each, as each client asks:

- ``get``: one GET frame per message (a pymqi program before gets read ahead under syncpoint);
- ``ahead``: one GET_AHEAD frame per unit (a pymqi program on a handle that reads ahead);
- ``batch``: one GET_BATCH frame per unit (the Pythonic client's ``get_batch``);
- ``puts``: none: the puts alone, the baseline to subtract from the others' instructions.

Each request is decoded by the server's machine, served by the engine as ferrymq.server.ops
serves it, and its reply encoded; each unit ends with a COMMIT. Prints CPU µs per message
(time.process_time) of the get phase.
"""

from __future__ import annotations

import argparse
import os
import time

from ferrymq.engine.api import GetOptions, ObjectDescriptor, PutOptions, SystemClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E
from ferrymq.protocol.connection import NEED_DATA, ClientConnection, ServerConnection
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.mqmd import MQMD

_BATCH_ITEM_FRAMING = 512  # as ferrymq.server.ops.BATCH_ITEM_FRAMING
_MAX = 4 * 1024 * 1024


def _pair() -> tuple[ClientConnection, ServerConnection]:
    client, server = ClientConnection(), ServerConnection()
    server.receive_data(client.send(E.Connect(1, "QM1")))
    assert isinstance(server.next_event(), E.Connect)
    client.receive_data(server.send(E.ConnectReply(1, max_msg_length=_MAX)))
    assert isinstance(client.next_event(), E.ConnectReply)
    return client, server


def run(n: int, size: int, uow: int, mode: str) -> float:
    client, server = _pair()
    qm = QueueManager.start("QM1", MemoryJournal(), SystemClock())
    qm.objects.define("QLOCAL", "BENCH", {"MAXDEPTH": 999_999_999})
    hconn = qm.connect(appl_name="bench")
    put_h = qm.open(hconn, ObjectDescriptor("BENCH"), C.MQOO_OUTPUT).hobj
    get_h = qm.open(hconn, ObjectDescriptor("BENCH"), C.MQOO_INPUT_SHARED).hobj
    md = MQMD(version=C.MQMD_VERSION_2, persistence=C.MQPER_PERSISTENT)
    body = os.urandom(size)
    pmo = PutOptions(C.MQPMO_NO_SYNCPOINT)
    for i in range(0, n, 100):
        qm.put_many(hconn, put_h, md, pmo, [(j.to_bytes(24, "big"), body) for j in range(i, min(n, i + 100))])
    qm.take_sync_lsn()
    opts = C.MQGMO_SYNCPOINT | C.MQGMO_FAIL_IF_QUIESCING
    match_md = MQMD(version=C.MQMD_VERSION_1)
    corr = 10
    got = n if mode == "puts" else 0
    t0 = time.process_time()
    while got < n:
        k = min(uow, n - got)
        if mode == "get":
            for _ in range(k):
                corr += 1
                server.receive_data(client.send(E.Get(corr, get_h, match_md, opts, 0, C.MQMO_MATCH_MSG_ID
                                                      | C.MQMO_MATCH_CORREL_ID, _MAX)))
                ev = server.next_event()
                assert isinstance(ev, E.Get) and isinstance(ev.md, MQMD)
                r = qm.get(hconn, ev.hobj, ev.md, GetOptions(ev.options, 0, ev.match_options), _MAX)
                qm.take_sync_lsn()
                client.receive_data(server.send(E.GetReply(ev.corr, r.md_bytes or r.md.pack(), r.data,  # type: ignore[union-attr]
                                                           r.data_length, r.msg_token, r.resolved_q_name)))  # type: ignore[union-attr]
                assert client.next_event() is not NEED_DATA
        else:
            corr += 1
            frame: E.GetAhead | E.GetBatch = (E.GetAhead if mode == "ahead" else E.GetBatch)(
                corr, get_h, opts, 0, k, 1024 * 1024, _MAX)
            server.receive_data(client.send(frame))
            ev2 = server.next_event()
            assert isinstance(ev2, (E.GetAhead, E.GetBatch))
            gmo = GetOptions(ev2.options, 0, C.MQMO_NONE, msg_handle=True)
            results, _ = qm.get_many(hconn, ev2.hobj, MQMD(version=C.MQMD_VERSION_2), gmo, _MAX, ev2.max_messages,
                                     ev2.max_bytes, frame_bytes=_MAX, framing=_BATCH_ITEM_FRAMING,
                                     ahead=mode == "ahead")
            qm.take_sync_lsn()
            items = [(r.md_bytes or r.md.pack(), r.data, r.data_length, r.msg_token, r.properties) for r in results]
            client.receive_data(server.send(E.GetBatchReply(ev2.corr, items)))
            assert client.next_event() is not NEED_DATA
            k = len(results)
        corr += 1
        server.receive_data(client.send(E.Commit(corr)))
        ev3 = server.next_event()
        assert isinstance(ev3, E.Commit)
        qm.commit(hconn)
        qm.take_sync_lsn()
        client.receive_data(server.send(E.Reply(ev3.corr)))
        assert client.next_event() is not NEED_DATA
        got += k
    return (time.process_time() - t0) / n * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--uow", type=int, default=100)
    ap.add_argument("--mode", choices=("get", "ahead", "batch", "puts"), required=True)
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    best = min(run(a.n, a.size, a.uow, a.mode) for _ in range(a.repeat))
    print(f"{a.mode}: {best:,.2f} CPU µs per message got under syncpoint (units of {a.uow})")


if __name__ == "__main__":
    main()
