"""The protocol codec's cost for one request/reply hop, in one process (run on demand;
never a timed test).

    .venv/bin/python bench/codec_bench.py [--n 20000] [--size 1024]

A ClientConnection and a ServerConnection talk through memory, as the sans-IO machines
they are: the client encodes an asynchronous Put (descriptor already packed) and a Get
waiting on a CorrelId, the server decodes them and encodes the GetReply, the client
decodes it. Prints process CPU time per operation in microseconds: the codec's share of
the figures in bench/request_reply_hops.py, without sockets, scheduling or the engine.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

from ferrymq.mq import constants as C
from ferrymq.protocol import events as E
from ferrymq.protocol.connection import ClientConnection, ServerConnection
from ferrymq.protocol.mdcodec import pack_md
from ferrymq.wire.mqmd import MQMD


def connected() -> tuple[ClientConnection, ServerConnection]:
    client, server = ClientConnection(), ServerConnection()
    server.receive_data(client.send(E.Connect(1, "QM1", max_msg_length=4 << 20)))
    assert isinstance(server.next_event(), E.Connect)
    client.receive_data(server.send(E.ConnectReply(1, max_msg_length=4 << 20, version=E.BATCH_VERSION)))
    assert isinstance(client.next_event(), E.ConnectReply)
    return client, server


def per_call(fn: Callable[[], Any], n: int) -> float:
    fn()
    t = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - t) / n * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--size", type=int, default=1024)
    a = ap.parse_args()
    client, server = connected()
    body = os.urandom(a.size)
    request = MQMD(version=2, persistence=C.MQPER_NOT_PERSISTENT, reply_to_q="REPLY", msg_id=os.urandom(24),
                   format=C.MQFMT_STRING)
    request_md = pack_md(request)
    get_md = pack_md(MQMD(version=2, correl_id=request.msg_id))
    stored = request.replace(put_date="20261123", put_time="17000000", user_identifier="app").pack(version=2)
    put_options = C.MQPMO_NO_SYNCPOINT | C.MQPMO_ASYNC_RESPONSE
    corr = iter(range(2, 1 << 62))

    def put() -> bytes:
        return client.send(E.Put(0, 5, request_md, body, put_options, 0, None, False))

    def get() -> bytes:
        return client.send(E.Get(next(corr), 6, get_md, C.MQGMO_WAIT, 30000, C.MQMO_MATCH_CORREL_ID))

    put_frame = put()

    def decode_put() -> Any:
        server.receive_data(put_frame)
        return server.next_event()

    def decode_get() -> Any:
        server.receive_data(get())
        return server.next_event()

    def reply() -> Any:
        ev = decode_get()
        client.receive_data(server.send(E.GetReply(ev.corr, stored, body, len(body), bytes(16), "REPLY")))
        return client.next_event()

    rows = [
        ("client: encode Put", per_call(put, a.n)),
        ("client: encode Get", per_call(get, a.n)),
        ("server: decode Put", per_call(decode_put, a.n)),
        ("client: encode Get + server: decode it", per_call(decode_get, a.n)),
        ("... + server: encode GetReply + client: decode it", per_call(reply, a.n)),
    ]
    for label, us in rows:
        print(f"{label:52s} {us:7.2f} µs")


if __name__ == "__main__":
    main()
