"""Frames captured from the real clients, the seeds the protocol fuzzer mutates.

``capture(port)`` runs the sync and async clients and the pymqi layer through a recording
TCP forwarder to a queue manager listening on 127.0.0.1, over every kind of request the
clients send (connect, open, put, put1, get, browse, batches, columns, read-ahead,
commit/backout, inquire/set, stat, heartbeats, sequence ranges, prepared units, PCF through
the command server, close, disconnect), and returns each conversation's frames in both
directions, split at the GPacket headers.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import ferrymq.client as fc
import ferrymq.pymqi as pymqi
from ferrymq.mq import constants as C
from ferrymq.protocol import codec, columnframes
from ferrymq.pymqi import CMQC, CMQCFC

HEADER = 36


@dataclass
class Conversation:
    """What one client connection carried: its frames each way."""

    sent: list[bytes] = field(default_factory=list)  # client -> server
    received: list[bytes] = field(default_factory=list)  # server -> client
    first_hobj: int = 0  # the queue manager's next object handle when the conversation began


def split_frames(stream: bytes) -> list[bytes]:
    """A well-formed stream's frames (by each header's size field); a torn tail is dropped."""
    out, pos = [], 0
    while len(stream) - pos >= HEADER:
        (size,) = struct.unpack_from(">i", stream, pos + 4)
        if size < HEADER or pos + size > len(stream):
            break
        out.append(stream[pos : pos + size])
        pos += size
    return out


class Recorder:
    """A TCP forwarder to ``target_port`` that keeps both directions of every connection."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._streams: list[tuple[bytearray, bytearray]] = []
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            up, down = bytearray(), bytearray()
            with self._lock:
                self._streams.append((up, down))
                for src, dst, keep in ((client, upstream, up), (upstream, client, down)):
                    t = threading.Thread(target=self._pump, args=(src, dst, keep), daemon=True)
                    t.start()
                    self._threads.append(t)

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket, keep: bytearray) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(1 << 20):
                keep += data
                dst.sendall(data)
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def take(self, first_hobj: int) -> list[Conversation]:
        """The frames of every connection made since the last take, once they have ended."""
        with self._lock:
            threads, self._threads = self._threads, []
            streams, self._streams = self._streams, []
        for t in threads:
            t.join(10)
        return [Conversation(split_frames(bytes(up)), split_frames(bytes(down)), first_hobj) for up, down in streams]


def _sync_client(addr: str) -> None:
    with fc.connect("QM1", addr, appl_name="fuzz-capture") as c:
        q = c.open("Q1")
        q.put(b"plain")
        q.put("text with a descriptor", persistent=True, priority=7, correl_id=b"C" * 24, reply_to_q="REPLY",
              expiry=60.0, report=C.MQRO_COA)
        q.put(b"with properties", properties={"colour": "blue", "n": 42, "ok": True, "f": 1.5})
        c.put1("Q2", b"put1 message", persistent=False)
        list(q.browse())
        q.get()
        q.get(msg_id=q.put(b"by MsgId").msg_id)
        with contextlib.suppress(fc.NoMessageAvailable):
            q.get(correl_id=b"C" * 24)
        q.get_batch(10)
        with contextlib.suppress(fc.NoMessageAvailable):
            q.get(wait=0.05)
        with c.transaction():
            q.put(b"in a unit of work", persistent=True)
        with contextlib.suppress(ZeroDivisionError), c.transaction():
            q.put(b"backed out")
            raise ZeroDivisionError
        c.backout()
        q.get(syncpoint=True)
        c.commit()
        qa = c.open("Q3", async_put=True)
        for i in range(20):
            qa.put(b"async %d" % i)
        payload = b"".join(b"col%d" % i for i in range(5))
        offsets = struct.pack(">6I", 0, 4, 8, 12, 16, 20)
        qa.put_columns(offsets, payload)
        c.stat()
        reader = c.open("Q3", read_ahead=8)
        for _ in range(10):
            reader.get(wait=1.0)
        reader.close()
        batch = c.open("Q3")
        with c.transaction():
            batch.get_batch(5, syncpoint=True)
        inq = c.open("Q1", options=C.MQOO_INQUIRE | C.MQOO_SET)
        inq.inquire(C.MQIA_CURRENT_Q_DEPTH, C.MQCA_Q_NAME, C.MQIA_MAX_MSG_LENGTH)
        inq.set({C.MQIA_INHIBIT_PUT: C.MQQA_PUT_ALLOWED})
        inq.close()
        with contextlib.suppress(fc.MQError):
            c.open("NO.SUCH.QUEUE")
        c.ping()
        rng = c.queue_range("Q3")
        c.browse_range("Q3", rng.first_seq, rng.last_seq + 1)
        c.browse_columns("Q3", rng.first_seq, rng.last_seq + 1, max_msgs=5)
        c.remove_upto("Q3", rng.first_seq, "fuzz-reader")
        c.reader_positions("Q3")
        q.put(b"prepared", syncpoint=True)
        c.prepare(b"fuzz-xid-1")
        c.in_doubt()
        c.resolve(b"fuzz-xid-1", commit=False)
        q.close()
        _sync_pubsub(c)


def _sync_pubsub(c: fc.Client) -> None:
    """Publish/subscribe: SUB, SUBRQ, topic opens and publications (the queue manager's
    answers, refusals included, are captured as they come)."""
    with contextlib.suppress(fc.MQError):
        sub = c.subscribe("fuzz/+/news", durable=True, name="fuzz-durable")
        with contextlib.suppress(fc.MQError):
            sub.request_publications()  # none retained yet: refused
        with contextlib.suppress(fc.MQError):
            c.publish("fuzz/a/news", b"publication", retain=True)
            c.publish("fuzz/b/news", "text publication", persistent=True)
            sub.get(wait=0.5)
            sub.request_publications()
        sub.close(remove=True)
    with contextlib.suppress(fc.MQError), c.subscribe("fuzz/#", selector="colour = 'red'", wildcards="topic") as s2:
        c.publish("fuzz/c", b"red", properties={"colour": "red"})
        s2.get(wait=0.5)


async def _async_client(addr: str) -> None:
    async with await fc.connect_async("QM1", addr, appl_name="fuzz-capture-async") as c:
        q = await c.open("Q2")
        await q.put(b"async client")
        await c.put1("Q2", b"async put1")
        await q.get()
        await q.get_batch(5)
        qa = await c.open("Q2", async_put=True)
        for i in range(10):
            await qa.put(b"async batch %d" % i)
        await c.stat()
        reader = await c.open("Q2", read_ahead=4)
        for _ in range(6):
            await reader.get(wait=1.0)
        await reader.close()
        await c.commit()
        with contextlib.suppress(fc.MQError):
            async with await c.subscribe("fuzz/async") as sub:
                await c.publish("fuzz/async", b"async publication")
                await sub.get(wait=0.5)


def _pymqi(addr: str) -> None:
    qm = pymqi.connect("QM1", "DEV.APP.SVRCONN", addr)
    try:
        queue = pymqi.Queue(qm, "Q1")
        md = pymqi.MD(Format=CMQC.MQFMT_STRING, Persistence=CMQC.MQPER_PERSISTENT, ReplyToQ=b"REPLY")
        queue.put(b"pymqi message", md)
        gmo = pymqi.GMO(Options=CMQC.MQGMO_WAIT | CMQC.MQGMO_FAIL_IF_QUIESCING, WaitInterval=100)
        queue.get(None, pymqi.MD(), gmo)
        queue.close()
        qm.put1("Q2", b"pymqi put1")
        qm.inquire(CMQC.MQCA_Q_MGR_NAME)
        pcf = pymqi.PCFExecute(qm)
        pcf.MQCMD_INQUIRE_Q({CMQC.MQCA_Q_NAME: b"Q*", CMQC.MQIA_Q_TYPE: CMQC.MQQT_LOCAL})
        with contextlib.suppress(pymqi.MQMIError):
            pcf.MQCMD_INQUIRE_Q_STATUS({CMQC.MQCA_Q_NAME: b"Q1", CMQCFC.MQIACF_Q_STATUS_TYPE: CMQCFC.MQIACF_Q_STATUS})
        pcf.disconnect()
        _pymqi_pubsub(qm)
    finally:
        qm.disconnect()


def _pymqi_pubsub(qm: pymqi.QueueManager) -> None:
    """pymqi's Topic and Subscription: MQOPEN of a topic, MQPUT1 to one, MQSUB, MQSUBRQ."""
    with contextlib.suppress(pymqi.MQMIError):
        sd = pymqi.SD(Options=CMQC.MQSO_CREATE | CMQC.MQSO_MANAGED)
        sd.set_vs("ObjectString", b"fuzz/pymqi")
        sub = pymqi.Subscription(qm)
        sub.sub(sub_desc=sd)
        topic = pymqi.Topic(qm, topic_string=b"fuzz/pymqi")
        topic.open(open_opts=CMQC.MQOO_OUTPUT)
        topic.pub(b"pymqi publication")
        topic.close()
        sub.get(None, pymqi.MD(), pymqi.GMO(Options=CMQC.MQGMO_WAIT, WaitInterval=500))
        sub.close(sub_close_options=0, close_sub_queue=True)


def capture(port: int, next_hobj: Callable[[], int]) -> list[Conversation]:
    """Run the clients against the queue manager on ``port`` (which must have Q1, Q2, Q3
    and REPLY) through a recorder, one after the other; their conversations, in both
    directions. ``next_hobj()``: the handle the queue manager's next MQOPEN will get, so
    that a replay can renumber the handles a conversation uses (``rebase``)."""
    rec = Recorder(port)
    addr = f"127.0.0.1({rec.port})"
    out: list[Conversation] = []
    for run in (_sync_client, lambda a: asyncio.run(_async_client(a)), _pymqi):
        first = next_hobj()
        run(addr)
        out += rec.take(first)
    rec.close()
    return [c for c in out if c.sent]


# Frames whose body begins with the u32 object handle they act on.
_HOBJ_FIRST = {codec.T_CLOSE, codec.T_PUT, codec.T_GET, codec.T_INQUIRE, codec.T_SET, codec.T_CONSUME,
               codec.T_CREDIT, codec.T_PUT_BATCH, codec.T_GET_BATCH, columnframes.T_PUT_COLUMNS}


def rebase(frames: list[bytes], captured_first: int, first: int) -> list[bytes]:
    """``frames`` with the object handles they carry moved from a conversation that began
    when the next handle was ``captured_first`` to one that begins at ``first``, so that a
    replay reaches the queues rather than failing on handles (2019) at once."""
    delta = first - captured_first
    out = []
    for f in frames:
        if len(f) >= HEADER + 4 and struct.unpack_from(">h", f, 2)[0] in _HOBJ_FIRST:
            (hobj,) = struct.unpack_from(">I", f, HEADER)
            if captured_first <= hobj < captured_first + 1000:
                f = f[:HEADER] + struct.pack(">I", hobj + delta) + f[HEADER + 4 :]
        out.append(f)
    return out
