"""A ferrymq.pymqi client's own CPU per request/reply round trip, replayed without sockets.

    .venv/bin/python bench/pymqi_trip_bench.py [--n 3000] [--size 1024] [--replays 7]
                                               [--recording FILE] [--side request|respond|both]

``client_trip_bench.py`` for the pymqi layer (issue 25): a live run of the shape of
``ferrymq bench --scenario request-reply --only ferrymq-pymqi`` (a queue manager process,
a pymqi responder process, this process as the pymqi requester; the loops are those of
src/ferrymq/bench/pymqi_api.py) records what each client received and sent; then each
side's loop is replayed into a ``ferrymq.pymqi.QueueManager`` whose client reads the
recorded chunks. The replayed client must send the live one's bytes exactly (the MsgIds
come from a fixed salt and counter), so a faster layer that changed the wire fails here.

Prints each side's process CPU per round trip (median and minimum of the replays). Under
``valgrind --tool=callgrind`` (``--replays 1`` and ``--replays 3``) the difference, halved
and divided by the round trips of a replay, is a side's instructions per round trip.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import socket
import statistics
import sys
import time
from typing import Any

from client_trip_bench import RecordingSocket, ReplaySocket, _fixed_ids, recorded, recording_options, same_bytes
from request_reply_hops import REPLIES, REQUESTS, WARMUP, serve


def _qmgr(sock: Any) -> Any:
    """A pymqi QueueManager whose client talks over ``sock`` (recording or replaying)."""
    import itertools

    import ferrymq.pymqi as pymqi
    from ferrymq.client import Client

    client = Client(sock, qmgr="QM1", appl_name="pymqi")
    _fixed_ids(client)
    qm = pymqi.QueueManager(None)
    qm._client, qm._name, qm._hconn = client, client.qmgr_name, next(itertools.count(1))
    return qm


def _requester(qm: Any, body: bytes) -> Any:
    import ferrymq.pymqi as pymqi
    from ferrymq.pymqi import CMQC

    requests = pymqi.Queue(qm, REQUESTS, CMQC.MQOO_OUTPUT)
    replies = pymqi.Queue(qm, REPLIES, CMQC.MQOO_INPUT_SHARED)
    reply_to = REPLIES.encode()
    pmo = pymqi.PMO(Options=CMQC.MQPMO_ASYNC_RESPONSE | CMQC.MQPMO_NO_SYNCPOINT | CMQC.MQPMO_NEW_MSG_ID)
    gmo = pymqi.GMO(Options=CMQC.MQGMO_WAIT | CMQC.MQGMO_NO_SYNCPOINT, WaitInterval=30_000,
                    MatchOptions=CMQC.MQMO_MATCH_CORREL_ID)

    def trip() -> None:  # as FerrymqPymqi.request's loop
        md = pymqi.MD(MsgType=CMQC.MQMT_REQUEST, ReplyToQ=reply_to)
        requests.put(body, md, pmo)
        replies.get(None, pymqi.MD(CorrelId=md.MsgId), gmo)
    return trip


def _responder(qm: Any) -> Any:
    import ferrymq.pymqi as pymqi
    from ferrymq.pymqi import CMQC

    requests = pymqi.Queue(qm, REQUESTS, CMQC.MQOO_INPUT_SHARED)
    replies = pymqi.Queue(qm, REPLIES, CMQC.MQOO_OUTPUT)
    gmo = pymqi.GMO(Options=CMQC.MQGMO_WAIT | CMQC.MQGMO_NO_SYNCPOINT, WaitInterval=30_000)
    pmo = pymqi.PMO(Options=CMQC.MQPMO_ASYNC_RESPONSE | CMQC.MQPMO_NO_SYNCPOINT | CMQC.MQPMO_NEW_MSG_ID)

    def trip() -> None:  # as FerrymqPymqi.respond's loop
        md = pymqi.MD()
        data = requests.get(None, md, gmo)
        replies.put(data, pymqi.MD(MsgType=CMQC.MQMT_REPLY, CorrelId=md.MsgId), pmo)
    return trip


def _run(trip: Any, count: int) -> float:
    t0 = 0.0
    for i in range(count):
        if i == WARMUP:
            t0 = time.process_time()
        trip()
    return (time.process_time() - t0) / (count - WARMUP)


def responder(port: int, count: int, out: Any) -> None:
    rec = RecordingSocket(socket.create_connection(("127.0.0.1", port)))
    qm = _qmgr(rec)
    cpu = _run(_responder(qm), count)
    qm.stat(0)
    qm.disconnect()
    out.put((rec.chunks, rec.sent, cpu))


def live(n: int, size: int) -> dict[str, Any]:
    """Record both pymqi clients of one live run."""
    ctx = mp.get_context("spawn")
    ports, stop, out = ctx.Queue(), ctx.Event(), ctx.Queue()
    server = ctx.Process(target=serve, args=(ports, stop, "auto"))
    server.start()
    port = ports.get(timeout=60)
    ports.get(timeout=60)
    total = n + WARMUP
    body = os.urandom(size)
    rec = RecordingSocket(socket.create_connection(("127.0.0.1", port)))
    qm = _qmgr(rec)
    resp = ctx.Process(target=responder, args=(port, total, out))
    resp.start()
    cpu = _run(_requester(qm, body), total)
    qm.disconnect()
    resp_chunks, resp_sent, resp_cpu = out.get(timeout=60)
    resp.join()
    stop.set()
    ports.get(timeout=60)
    ports.get(timeout=60)
    server.join()
    print(f"live run: process CPU per round trip (recording included): requester {cpu * 1e6:.1f} µs, "
          f"responder {resp_cpu * 1e6:.1f} µs")
    return {"n": total, "body": body, "request": (rec.chunks, rec.sent), "respond": (resp_chunks, resp_sent)}


def replay(side: str, recording: dict[str, Any]) -> float:
    """One replay of ``side``; its process CPU per timed round trip."""
    chunks, sent = recording[side]
    sock = ReplaySocket(chunks)
    qm = _qmgr(sock)
    trip = _requester(qm, recording["body"]) if side == "request" else _responder(qm)
    total = recording["n"]
    for _ in range(WARMUP):
        trip()
    t0 = time.process_time()
    for _ in range(total - WARMUP):
        trip()
    cpu = time.process_time() - t0
    del trip  # its queues close, as the live loop's did when it ended
    if side == "respond":
        qm.stat(0)
    qm.disconnect()
    same_bytes(side, sock, sent)
    return cpu / (total - WARMUP)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    recording_options(ap)
    a = ap.parse_args()
    recording = recorded(a, live)
    print(f"{recording['n'] - WARMUP} round trips of {len(recording['body'])} B timed per replay, {a.replays} replays")
    for side in ("request", "respond") if a.side == "both" else (a.side,):
        runs = [replay(side, recording) for _ in range(a.replays)]
        print(f"  {side + 'er' if side == 'request' else 'responder':10s} median {statistics.median(runs) * 1e6:6.1f} µs"
              f"  min {min(runs) * 1e6:6.1f} µs")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
