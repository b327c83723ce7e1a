"""The blocking client: ``Client`` (a connection) and ``Queue`` (an open queue).

All protocol logic is in ``session``, the MQI verbs in ``mqi`` and the multi-step flows in
``flows``; this module only moves bytes over a blocking socket and carries out the flows'
steps (``Client.run``). ``aio`` is the same client for asyncio, and differs from this one
only in the spelling of ``async``/``await`` but for the I/O itself
(tests/unit/test_client_twins.py). A ``Client`` is for one thread at a time (like an MQ hconn without
MQCNO_HANDLE_SHARE_*): use one per thread, or ``AsyncClient`` for concurrency.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import socket
import ssl
import time
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import Any

from ferrymq.client import distlist as D
from ferrymq.client import flows as F
from ferrymq.client import local, mqi, pubsub
from ferrymq.client import reconnect as R
from ferrymq.client import session as S
from ferrymq.client.connname import parse_conn_name
from ferrymq.client.distlist import DistributionList
from ferrymq.client.errors import (
    ConnectionBroken,
    NoMessageAvailable,
    QueueManagerUnavailable,
    Quiescing,
    broken,
    local_unavailable,
)
from ferrymq.client.message import AsyncPutStatus, Message, PutResult
from ferrymq.client.sequence_calls import SequenceCalls
from ferrymq.client.sockwait import RecvBound
from ferrymq.client.steps import Call, Drop, Exchange, Flow, Lost, Pause, Reconnect, Redial, Send, Step, T, drive
from ferrymq.client.subscription import Subscription
from ferrymq.client.tls import ClientTLS, connect_lost
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E
from ferrymq.tcpopts import tune_tcp
from ferrymq.wire.mqmd import MQMD

# What one receive asks for. Python allocates a buffer of this size for every recv() and
# shrinks it to what came; at 128 KiB or more glibc's malloc takes it straight from mmap,
# so each receive would cost an mmap, an mremap, a munmap and a fresh page's fault (some
# 20 us, more than decoding the reply). Larger frames take a few receives more.
_RECV = 64 * 1024
# A frame at least this large (a browse page, a large message) is read into a buffer of its
# own size once its header is in: no bytes object per receive and no join of the reads
# (GPacketReader.packet_room); the frame's size was checked against the limit first.
_RECV_INTO_FROM = 4 * _RECV


class Client(SequenceCalls):
    """A connection to a queue manager (MQCONNX). Prefer ``ferrymq.client.connect()``."""

    def __init__(self, sock: socket.socket, *, qmgr: str = "", appl_name: str = "", user: str = "", password: str | None = None,
                 heartbeat: float = 30.0, max_msg_length: int = 4 * 1024 * 1024, timeout: float = 30.0,
                 reconnect: R.ReconnectPolicy | None = None, dial: Callable[[], socket.socket] | None = None,
                 on_reconnect: R.EventHandler | None = None, channel: str = "", connect_options: int = 0) -> None:
        """Handshake over an already connected socket (TCP, or a socketpair in bindings mode).

        With ``reconnect`` (and ``dial``, which makes a new connected socket) the client
        reconnects by itself after a lost connection (see ferrymq.client.reconnect);
        ``on_reconnect(reason, detail)`` hears MQRC_RECONNECTING/RECONNECTED/RECONNECT_FAILED.
        ``connect_options``: MQCNO options for the queue manager (MQCNO_ACCOUNTING_*, which
        ACCTCONO(ENABLED) lets override ACCTMQI and ACCTQ).

        Raises:
            MQError: the queue manager refused the connection (e.g. 2058 for a wrong name;
                2046 for both MQCNO_ACCOUNTING_MQI_ENABLED and _DISABLED, or Q likewise).
        """
        self._hello = S.hello(qmgr, appl_name, user, password, max_msg_length, heartbeat,
                              local=sock.family == socket.AF_UNIX, channel=channel, options=connect_options)
        self._timeout = timeout
        self._tx = F.Transaction()
        self.closed = False
        self._uow = R.UnitOfWorkGuard()
        self._handles = R.Handles()  # re-opened after a reconnect
        self._dial = dial
        self._redial = R.Redialer(reconnect, on_reconnect) if reconnect is not None and dial is not None else None
        self._generation = 0  # conversations so far (the asyncio client's tasks need to know)
        self._topics: pubsub.TopicHandles[Queue] = pubsub.TopicHandles()  # kept open by publish()
        self._handshake(sock)

    def _handshake(self, sock: socket.socket) -> None:
        self._sock = sock
        tune_tcp(sock)
        sock.setblocking(True)  # and it stays so: receives are bounded by SO_RCVTIMEO (see sockwait)
        self._bound = RecvBound(sock)
        self._s = S.Session()
        self._generation += 1
        try:
            reply = S.check(self._exchange(dataclasses.replace(self._hello, corr=self._s.next_corr())))
        except ConnectionBroken as exc:
            if isinstance(sock, ssl.SSLSocket):
                raise connect_lost(exc) from None
            raise
        self._s.connected(reply)

    @property
    def session(self) -> S.Session:
        """The current conversation's state (a new one after each reconnect)."""
        return self._s

    @property
    def handles(self) -> R.Handles:
        """What is open on the conversation (re-opened after a reconnect)."""
        return self._handles

    @property
    def reconnects(self) -> int:
        """How many times this client has reconnected."""
        return 0 if self._redial is None else self._redial.reconnects

    # -- carrying out flows (see ferrymq.client.steps) ----------------------------------------

    def run(self, flow: Flow[T]) -> T:
        """Carry out a flow's steps; its result, or its exception."""
        return drive(flow, self._step)

    def _step(self, step: Step) -> Any:
        if isinstance(step, Call):
            return self._call(step.ev)
        if isinstance(step, Exchange):
            return self._exchange(step.ev)
        if isinstance(step, Send):
            return self._send(step.ev)
        if isinstance(step, Reconnect):
            return self._reconnect(step.lost.cause, step.lost.generation)
        if isinstance(step, Pause):
            return time.sleep(step.seconds)
        if isinstance(step, Redial):
            assert self._dial is not None
            self._handshake(self._dial())
            return self._s
        if isinstance(step, Drop):
            with contextlib.suppress(OSError):
                self._sock.close()
            return None
        raise TypeError(step)

    # -- plumbing ----------------------------------------------------------------------------

    def _flush(self, hold: bool = False) -> None:
        if self._s.out_bytes:
            try:
                self._sock.sendall(self._s.take_out(hold))
            except OSError as exc:
                self._s.eof = True
                raise broken(f"send failed: {exc}") from None

    def _flush_async(self, ev: Any) -> None:
        """Write buffered asynchronous puts; after a lost connection, reconnect and send
        ``ev`` (the put that triggered the write) again. Asynchronous puts sent since the
        last stat() may or may not have reached the queue manager (see reconnect.py)."""
        try:
            self._flush(hold=True)
        except MQError as exc:
            if not self._lost_conversation(exc, self._generation):
                raise
            self._reconnect(exc, self._generation)
            self._uow.before(ev)
            remap = self._handles.remap
            self._s.send(dataclasses.replace(ev, hobj=remap.get(ev.hobj, ev.hobj)) if isinstance(ev.hobj, int)
                         else ev)
            self._flush()

    def _put_async(self, ev: E.Put | E.Put1) -> None:
        """Buffer an asynchronous put (``ev.reply`` False): the one path every asynchronous
        put takes, ``Queue.put``'s and the pymqi layer's. It leaves with the next write (at
        64 KiB, or ahead of the next request); its outcome comes from ``stat()``."""
        if ev.options & C.MQPMO_SYNCPOINT:  # UnitOfWorkGuard.before does nothing for other puts
            self._uow.before(ev)
        s = self._s
        s.send(ev)
        if s.out_bytes >= S.FLUSH_AT:
            self._flush_async(ev)

    def _poll(self) -> None:
        """Take whatever has arrived, without waiting (heartbeats, an Ending, the end).

        Raises:
            MQError: the conversation is over (2009, or the Ending's reason).
        """
        s = self._s
        try:
            data = self._sock.recv(_RECV, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return
        except OSError as exc:
            s.eof = True
            raise broken(f"receive failed: {exc}") from None
        if not data:
            s.eof = True
        s.feed(data)
        s.check_alive()

    def _read(self, deadline: float | None, now: float | None = None) -> bool:
        """Read once, waiting until ``deadline`` at most; False if it passed first.
        ``now``: the time, if the caller has just read it."""
        s = self._s
        limit = s.idle_after  # Session.idle_limit()'s value, without the call
        while True:
            if now is None:
                now = time.monotonic()
            wait = None if deadline is None else deadline - now
            if limit is not None:
                quiet = s.last_rx + limit - now
                if quiet <= 0:  # silent since before the request: counted from the request (SHARECNV(0))
                    quiet = s.last_tx + limit - now
                if wait is None or quiet < wait:
                    wait = quiet
            flags = 0
            if wait is not None:
                if wait > 0:
                    if not 0.0 < self._bound.seconds <= wait:  # RecvBound.at_most's test, inline
                        self._bound.at_most(wait)
                else:  # time is up: take only what is already there
                    flags = socket.MSG_DONTWAIT
            conn = s.conn
            room = conn.packet_room(_RECV_INTO_FROM) if conn.frame_begun else None
            try:
                if room is None:
                    data: bytes | memoryview = self._sock.recv(_RECV, flags)
                else:  # the rest of a large frame, read where the frame is kept
                    data = room[: self._sock.recv_into(room, len(room), flags)]
            except BlockingIOError:  # the bound (SO_RCVTIMEO) or MSG_DONTWAIT: nothing came
                if deadline is not None and time.monotonic() >= deadline:
                    return False
                if limit is not None and time.monotonic() - max(s.last_rx, s.last_tx) >= limit:
                    s.eof = True
                    raise broken(f"no heartbeat from the queue manager for {limit:.0f} s") from None
                now = None
                continue
            except OSError as exc:
                s.eof = True
                raise broken(f"receive failed: {exc}") from None
            if not data:
                s.eof = True
                s.feed(b"")
                s.check_alive()
            s.feed(data, room is not None)
            if s.out_bytes:  # heartbeat replies
                self._flush()
            return True

    def _call(self, ev: Any) -> Any:
        """Send a request and wait for its reply, reconnecting (when enabled) if the
        conversation ends on the way (flows.call_again).

        Raises:
            BackedOut: the call belongs to a unit of work a reconnect lost.
            MQError: the call's own failure; MQRC_CALL_INTERRUPTED (see reconnect.py).
        """
        # A get outside syncpoint is all a request/reply loop calls: the unit-of-work guard
        # has nothing to do for one (see UnitOfWorkGuard.before/ended), so it is not asked.
        guard = type(ev) is not E.Get or ev.options & R.GET_SYNCPOINT
        if guard:
            self._uow.before(ev)
        if self._redial is None:  # no reconnect: _send would only pass on what the exchange raises
            reply = self._exchange(ev)
        else:
            started = time.monotonic()
            try:
                reply = self._send(ev)
            except Lost as lost:
                reply = self.run(F.call_again(self, ev, lost, started))
        if guard:
            self._uow.ended(ev)
        return reply

    def _send(self, ev: Any) -> Any:
        """Send a request and wait for its reply; an end of the conversation that a
        reconnect can cure is raised as Lost."""
        s = self._s
        s.sent_request = False
        try:
            if self._redial is not None:
                self._poll()  # a connection that died while idle is noticed before sending
            return self._exchange(ev)
        except MQError as exc:
            if not self._lost_conversation(exc, self._generation):
                raise
            raise Lost(exc, s.sent_request, self._generation) from None

    def _lost_conversation(self, exc: MQError, generation: int) -> bool:
        """Conversation ``generation`` is over for a reason a reconnect can cure, and
        reconnect is on."""
        if self._redial is None or self.closed or not R.reconnectable(exc):
            return False
        return generation != self._generation or self._s.eof or self._s.ending is not None

    def _reconnect(self, cause: MQError, generation: int) -> None:
        """Re-make the conversation (flows.reconnect) that ended, conversation ``generation``.

        Raises:
            MQError: MQRC_RECONNECT_FAILED once the reconnect timeout has passed.
        """
        assert self._redial is not None
        self.run(F.reconnect(self, self._redial, self._uow, cause))

    def _exchange(self, ev: Any) -> Any:
        """Send a request and wait for its reply (other frames are sorted on the way); the
        timeout runs from the end of the write (which may take long: a large message on a
        slow link)."""
        s = self._s
        s.sent_request = False
        data = s.take_with(ev)  # buffered frames (held asynchronous puts) go first, in one write
        try:
            self._sock.sendall(data)
        except OSError as exc:
            s.eof = True
            raise broken(f"send failed: {exc}") from None
        s.sent_request = True
        corr = ev.corr
        # When the request left: a silent server (SHARECNV(0) between gets) is counted as
        # gone from the later of this and the last receive (take_with's one-write way of a
        # held put and its request does not set it, take_out's way does).
        now = s.last_tx = time.monotonic()
        if type(ev) is not E.Get:
            deadline: float | None = now + self._timeout
        elif ev.wait_interval >= 0:
            deadline = now + self._timeout + ev.wait_interval / 1000
        else:  # MQWI_UNLIMITED
            deadline = None
        replies = s.replies
        read_at: float | None = now  # the first receive follows at once: the same time
        while corr not in replies:
            if s.ending is not None or s.eof:
                s.check_alive()
            if not self._read(deadline, read_at):
                held = s.incomplete()
                raise broken(f"no reply from the queue manager within {self._timeout:.0f} s{'; ' if held else ''}{held}")
            read_at = None
        return replies.pop(corr)

    # -- MQI -------------------------------------------------------------------------------------

    @property
    def qmgr_name(self) -> str:
        return self._s.qmgr_name

    def open(self, name: str, *, options: int | None = None, read_ahead: int = 0, async_put: bool = False,
             object_q_mgr_name: str = "", dynamic_q_name: str = "AMQ.*", selector: str = "") -> Queue:
        """Open a queue (MQOPEN). By default for input, output, browse and inquire,
        falling back to output only for queues that cannot be read (remote, alias to one).

        ``selector`` is a selection string (MQOD SelectionString, see docs/selectors.md): the
        queue's gets and browses then see only the messages whose properties and MQMD
        fields it selects.
        ``read_ahead=N`` lets the server push up to N messages ahead of ``get()`` calls
        (outside syncpoint, no MsgId/CorrelId matching: those gets still go to the server;
        with a ``selector`` only selected messages are pushed).
        ``async_put=True`` makes ``put()`` not wait for the queue manager (MQPMO_ASYNC_RESPONSE);
        check outcomes with ``stat()``. This blocking client has no thread of its own: it sends
        asynchronous puts together, once 64 KiB have gathered or with the next call that
        talks to the queue manager (any get, put, commit, ``stat()``...). A program that puts
        asynchronously and then waits for something else should call ``stat()`` first.

        Raises:
            UnknownObjectName: no such queue; MQError for other reasons.
        """
        reply, record = self.run(F.open_queue(self, name, options, read_ahead, object_q_mgr_name, dynamic_q_name,
                                              selector))
        q = Queue(self, reply.hobj, reply.object_name, read_ahead, async_put, record)
        self._handles.add(q)
        return q

    def open_topic(self, topic: str, *, async_put: bool = False, options: int = pubsub.TOPIC_OPEN) -> Queue:
        """Open topic string ``topic`` for publishing (MQOPEN of an MQOT_TOPIC, output):
        ``put`` on the result publishes, with every keyword of ``Queue.put``
        (``options=MQPMO_RETAIN`` to retain). Its ``name`` is the full topic string.
        ``options``: the MQOO options (output, plus e.g. MQOO_SET_ALL_CONTEXT to publish
        with the context the caller sets).

        Raises:
            MQError: the queue manager refused (e.g. 2425 MQRC_TOPIC_STRING_ERROR, 2085
                MQRC_UNKNOWN_OBJECT_NAME).
        """
        reply, record = self.run(mqi.open_topic(self, topic, options))
        q = Queue(self, reply.hobj, reply.res_object_string or topic, 0, async_put, record)
        self._handles.add(q)
        return q

    def publish(self, topic: str, data: bytes | str, *, persistent: bool | None = None, retain: bool = False,
                properties: dict[str, Any] | None = None, syncpoint: bool | None = None,
                async_put: bool = False) -> PutResult:
        """Publish ``data`` on topic string ``topic`` (MQPUT to the topic, which the client
        keeps open). ``persistent=None``: as the topic defines (DEFPSIST); ``retain``: the
        queue manager keeps it for later subscribers (MQPMO_RETAIN); ``syncpoint`` defaults
        to True inside ``transaction()`` (subscribers see it at commit); ``async_put``:
        do not wait for the queue manager (outcomes from ``stat()``).

        Raises:
            MQError: the queue manager refused (e.g. 2425, 2502 MQRC_PUBLICATION_FAILURE,
                2051 MQRC_PUT_INHIBITED).
        """
        q = self._topics.get(topic)
        if q is None or q.closed:
            q = self.open_topic(topic)
            stale = self._topics.add(topic, q)
            if stale is not None:
                stale.close()
        return q.put(data, persistent=persistent, properties=properties, syncpoint=syncpoint, async_put=async_put,
                     options=C.MQPMO_RETAIN if retain else 0)

    def subscribe(self, topic: str, *, durable: bool = False, name: str | None = None, selector: str | None = None,
                  wildcards: str = "topic", new_only: bool = False, read_ahead: int = 0) -> Subscription:
        """Subscribe to topic string ``topic`` (MQSUB, managed: the queue manager makes the
        queue publications arrive on). ``durable``: the subscription outlives this
        connection and is resumed by ``name`` when it exists (MQSO_CREATE | MQSO_RESUME);
        ``selector``: a selection string on the publications' properties;
        ``wildcards``: "topic" (``#``, ``+`` over whole levels) or "char" (``*``, ``?``);
        ``new_only``: no retained publication at the start; ``read_ahead``: as for ``open``.

        Raises:
            ValueError: an unknown ``wildcards``.
            MQError: the queue manager refused (2432 MQRC_SUB_ALREADY_EXISTS, 2429
                MQRC_SUBSCRIPTION_IN_USE, 2440 MQRC_SUB_NAME_ERROR for a durable one with
                no name, 2425, 2503 MQRC_SUB_INHIBITED, 2436 MQRC_DURABILITY_NOT_ALLOWED...).
        """
        request = pubsub.subscription_request(topic, durable=durable, name=name, selector=selector,
                                              wildcards=wildcards, new_only=new_only)
        reply = self.run(mqi.subscribe(self, request))
        queue = Queue(self, reply.hobj, reply.queue_name, read_ahead, False, pubsub.managed_queue_record(reply.queue_name))
        sub = Subscription(self, reply, request, queue)
        self._handles.add(sub)
        self._handles.add(queue)  # after its subscription, which makes it again
        return sub

    def put1(self, queue: str, data: bytes | str, **kw: Any) -> PutResult:
        """Open, put one message, close (MQPUT1); same keywords as ``Queue.put``."""
        return Queue(self, 0, queue, 0, kw.pop("async_put", False), R.OpenRecord(queue, 0, "", "")).put(
            data, **kw, _put1=True)

    def open_list(self, queues: Sequence[str | tuple[str, str]], *,
                  options: int = C.MQOO_OUTPUT | C.MQOO_FAIL_IF_QUIESCING) -> DistributionList:
        """Open a distribution list (MQOPEN with object records): ``queues`` as names or
        (queue, queue manager) pairs. ``opened`` on the result holds each queue's open
        outcome (ferrymq.client.distlist); it is not re-opened after a reconnect.

        Raises:
            DistributionListError: no queue opened (its ``result`` says why each);
                MQError: refused as a whole (2045 options, 2154 no queues ...).
        """
        reply, pairs = self.run(D.open_list(self, queues, options))
        return DistributionList(self, reply, pairs)

    def put1_list(self, queues: Sequence[str | tuple[str, str]], data: bytes | str, *,
                  records: Sequence[D.PutRecord] | None = None, **kw: Any) -> D.ListResult:
        """MQPUT1 to a distribution list: open, put one copy to each queue, close; keywords
        as ``DistributionList.put``.

        Raises:
            DistributionListError, MQError: as ``open_list`` and ``DistributionList.put``.
        """
        return self.run(D.put_list(self, 0, D.destinations(queues), data, records, self._tx.active, kw))

    def reply(self, request: Message, data: bytes | str, *, feedback: int = C.MQFB_NONE,
              persistent: bool | None = None, priority: int | None = None,
              syncpoint: bool | None = None) -> PutResult:
        """Send a reply to ``request``, as its Report options ask (see ferrymq.client.replies):
        to its ReplyToQ, CorrelId from its MsgId (or CorrelId), its priority and persistence.

        Raises:
            MQError: MQRC_MISSING_REPLY_TO_Q when the request names no ReplyToQ; a put failure.
        """
        sp = self._tx.active if syncpoint is None else syncpoint
        return self.run(F.reply(self, request, data, feedback, persistent, priority, sp))

    def send_report(self, original: Message, feedback: int, data: bytes | None = None,
                    syncpoint: bool | None = None) -> PutResult | None:
        """Send a PAN (MQFB_PAN), NAN (MQFB_NAN) or exception report (any other feedback,
        MQFB_* or MQRC_*) on ``original`` — only if it asked for that kind; None otherwise.
        An exception report carries the data its option asks for unless ``data`` is given.

        Raises:
            MQError: MQRC_MISSING_REPLY_TO_Q when the original names no ReplyToQ; a put failure.
        """
        return self.run(F.report(self, original, feedback, data, self._tx.active if syncpoint is None else syncpoint))

    def commit(self) -> None:
        """MQCMIT. Raises BackedOut if the queue manager had to back the unit of work out."""
        self.run(mqi.commit(self))

    def backout(self) -> None:
        """MQBACK."""
        self.run(mqi.backout(self))

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """A unit of work: puts and gets inside default to syncpoint; commits on normal
        exit, backs out when the block raises."""
        self._tx.begin()
        try:
            yield
        except BaseException:
            self._tx.end()
            with contextlib.suppress(MQError):
                self.backout()
            raise
        self._tx.end()
        self.commit()

    def stat(self) -> AsyncPutStatus:
        """MQSTAT: outcomes of asynchronous puts since the last call (sends buffered puts first)."""
        return self.run(mqi.stat(self))

    def column_limit(self) -> int:
        """Data bytes one ``Queue.put_columns`` call may carry on this connection."""
        return self._s.column_limit()

    def ping(self) -> float:
        """Round-trip time to the queue manager, in seconds."""
        t0 = time.perf_counter()
        self._call(E.Heartbeat(self._s.next_corr(), reply=True))
        return time.perf_counter() - t0

    def disconnect(self) -> None:
        """MQDISC: commits an open unit of work (as MQ does), ends the conversation."""
        if self.closed:
            return
        self.closed = True  # also stops any reconnecting
        try:
            with contextlib.suppress(ConnectionBroken, Quiescing):
                self._exchange(E.Disconnect(self._s.next_corr()))
        finally:
            self._sock.close()

    close = disconnect

    def __enter__(self) -> Client:
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        if not self.closed and et is not None and self._tx.active:
            with contextlib.suppress(MQError):
                self.backout()
        self.disconnect()


class Queue:
    """An open queue (an MQ object handle)."""

    def __init__(self, client: Client, hobj: int, name: str, read_ahead: int, async_put: bool,
                 record: R.OpenRecord) -> None:
        self.client = client
        self.hobj = hobj
        self.name = name
        self.read_ahead = read_ahead
        self.async_put = async_put
        self.closed = False
        self.record = record  # what re-opens it after a reconnect
        self._waited_since: float | None = None  # when a read-ahead get began to wait (_get_ahead)

    def put(self, data: bytes | str, *, priority: int | None = None, persistent: bool | None = None,
            expiry: float | None = None, correl_id: bytes | None = None, msg_id: bytes | None = None,
            reply_to_q: str = "", reply_to_q_mgr: str = "", format: str | None = None, msg_type: int | None = None,
            report: int = 0, feedback: int = 0, properties: dict[str, Any] | None = None,
            syncpoint: bool | None = None, async_put: bool | None = None, md: MQMD | None = None,
            options: int = 0, _put1: bool = False) -> PutResult:
        """Put a message (MQPUT). ``expiry`` is in seconds; ``persistent=None`` means as the
        queue defines; ``syncpoint`` defaults to True inside ``client.transaction()``.

        Returns the message's identifiers (MsgId, CorrelId) and descriptor.

        Raises:
            QueueFull, MessageTooBig, Inhibited, NotAuthorized, MQError.
        """
        c = self.client
        s = c._s
        asy = self.async_put if async_put is None else async_put
        ev, res = S.put_event(s, s.next_corr(), self.name if _put1 else self.hobj, data,
                              (priority, persistent, expiry, reply_to_q, reply_to_q_mgr, format, msg_type, report, feedback),
                              correl_id, msg_id, properties, c._tx.active if syncpoint is None else syncpoint, asy, md, options)
        if res is not None:
            c._put_async(ev)
            return res
        return S.put_result(c._call(ev))

    def put_columns(self, offsets: bytes, data: bytes | memoryview, *, md: MQMD | None = None,
                    msg_ids: bytes | None = None, correl_ids: bytes | None = None, syncpoint: bool | None = None,
                    options: int = 0) -> int:
        """Put n messages at once, as columns (one PUT_COLUMNS frame): message i's data is
        ``data[offsets[i]:offsets[i + 1]]`` with ``offsets`` n + 1 big-endian u32 from 0 to
        len(data); its descriptor is ``md`` (None: the defaults) with MsgId and CorrelId
        from the 24-byte columns when given (a MsgId of zeros: a new one). The puts are
        asynchronous: ``client.stat()`` reports their outcomes. Returns n.

        Raises:
            ValueError: columns that disagree, or more data than ``client.column_limit()``.
            MessageTooBig: a message over the connection's maximum length (nothing sent).
        """
        c = self.client
        s = c._s
        ev = S.send_columns(s, c._uow, self.hobj, offsets, data, md=md, msg_ids=msg_ids, correl_ids=correl_ids,
                            syncpoint=c._tx.active if syncpoint is None else syncpoint, options=options)
        if s.out_bytes >= S.FLUSH_AT:
            c._flush_async(ev)
        return ev.count

    def get(self, wait: float | None = 0.0, *, msg_id: bytes | None = None, correl_id: bytes | None = None,
            syncpoint: bool | None = None, max_length: int | None = None, accept_truncated: bool = False,
            options: int = 0, ccsid: int | None = None, encoding: int = C.MQENC_NATIVE) -> Message:
        """Take a message (MQGET). ``wait`` in seconds (None: forever; 0: do not wait).
        ``ccsid`` (MQCCSI_Q_MGR, 0: the queue manager's) and ``encoding``: the message
        converted to them (MQGMO_CONVERT, docs/conversion.md); a conversion that fails
        leaves it as it was, with the warning in ``Message.reason``.

        Raises:
            NoMessageAvailable: nothing (matching) arrived in time.
            Truncated: larger than ``max_length`` (it stays on the queue; see ``.message``).
        """
        c = self.client
        sp = c._tx.active if syncpoint is None else syncpoint
        if self.read_ahead and not options and ccsid is None and S.can_read_ahead(msg_id, correl_id, sp):
            generation = c._generation
            self._waited_since = None  # the clock is read only once the get must wait (_get_ahead)
            try:
                msg = self._get_ahead(wait)
            except MQError as exc:
                if not c._lost_conversation(exc, generation):
                    raise
                c._reconnect(exc, generation)  # pushed messages not yet taken are gone, as in MQ
                return self.get(self._wait_left(wait), syncpoint=syncpoint, max_length=max_length,
                                accept_truncated=accept_truncated)
            if msg is not None:
                return msg
            # The next message is persistent and was not sent ahead: an ordinary get, in
            # what is left of the wait.
            wait = self._wait_left(wait)
        s = c._s
        # S.buffer_length is called only for a max_length given: the connection's maximum
        # is what a get asks for otherwise (a request/reply loop's gets), without a call.
        ev = S.get_event(s.next_corr(), self.hobj, wait, msg_id, correl_id, sp,
                         S.buffer_length(s, max_length) if max_length else s.max_msg_length,
                         accept_truncated, 0, options)  # positional: cheaper to bind
        if ccsid is not None:
            ev = S.converting(ev, ccsid, encoding)
        return S.message_from(c._call(ev))

    def get_batch(self, max_messages: int = 100, *, wait: float | None = 0.0, syncpoint: bool | None = None,
                  max_bytes: int = 1024 * 1024) -> list[Message]:
        """Take up to ``max_messages`` messages (about ``max_bytes`` of data) in one round trip,
        each exactly as ``get()`` would take it, in delivery order. ``wait`` applies to the
        first message; the rest are those already there. Under syncpoint (the default inside
        ``transaction()``) they all belong to the unit of work.

        Returns an empty list when nothing arrived within ``wait``.

        Raises:
            Truncated: the next message is larger than the negotiated maximum.
            MQError: the get was refused (e.g. GET(DISABLED), 2016).
        """
        c = self.client
        sp = c._tx.active if syncpoint is None else syncpoint
        ev = S.get_batch_event(c._s, self.hobj, max_messages=max_messages, max_bytes=max_bytes, wait=wait,
                               syncpoint=sp, read_ahead=self.read_ahead)
        if ev is not None:
            return S.messages_from(c._call(ev))
        out: list[Message] = []
        with contextlib.suppress(NoMessageAvailable):
            out.append(self.get(wait, syncpoint=sp))
            while len(out) < max_messages:
                out.append(self.get(0.0, syncpoint=sp))
        return out

    def _get_ahead(self, wait: float | None) -> Message | None:
        """A pushed message; None when the next one is persistent (get it synchronously).

        A message already pushed is taken before the clock is read: most gets of a consumer
        that keeps up find one, and the deadline (``_waited_since``) matters only to a get
        that waits."""
        c = self.client
        s = c._s
        hobj = self.hobj
        if hobj not in s.consumers:
            s.start_consume(hobj, self.read_ahead, C.MQGMO_FAIL_IF_QUIESCING)
        deadline: float | None = None
        while True:
            msg = s.take_pushed(hobj)
            if msg is not None:
                if s.credit_due or s.out_bytes >= S.FLUSH_AT:
                    c._flush()  # credit goes out while half the window is still here
                return msg
            if s.take_pause(hobj):
                return None
            if self._waited_since is None:
                self._waited_since = time.monotonic()
                if wait is not None:
                    deadline = self._waited_since + wait
            s.check_alive()
            c._flush()
            if not c._read(deadline):
                raise NoMessageAvailable(C.MQCC_FAILED, C.MQRC_NO_MSG_AVAILABLE, "no message arrived within the wait")

    def _wait_left(self, wait: float | None) -> float | None:
        """What is left of a read-ahead get's ``wait`` (all of it if it did not wait)."""
        since = self._waited_since
        if wait is None or since is None:
            return wait
        return max(0.0, wait - (time.monotonic() - since))

    def messages(self, wait: float | None = 0.0, **kw: Any) -> Iterator[Message]:
        """Get messages until none arrives within ``wait`` seconds."""
        while True:
            try:
                yield self.get(wait, **kw)
            except NoMessageAvailable:
                return

    __iter__ = messages

    def browse(self, *, msg_id: bytes | None = None, correl_id: bytes | None = None, wait: float = 0.0,
               max_length: int | None = None) -> Iterator[Message]:
        """Browse the queue in delivery order, without removing anything."""
        c = self.client
        flag = C.MQGMO_BROWSE_FIRST
        seen = S.BrowsePosition()
        while True:
            reconnects = c.reconnects
            ev = S.get_event(c._s.next_corr(), self.hobj, wait=wait, msg_id=msg_id, correl_id=correl_id,
                             syncpoint=False, max_length=S.buffer_length(c._s, max_length), accept_truncated=True,
                             browse=flag)
            try:
                msg = S.message_from(c._call(ev))
            except NoMessageAvailable:
                return
            flag = C.MQGMO_BROWSE_NEXT
            if c.reconnects != reconnects:
                # A new conversation's cursor starts again at the front: skip what was seen.
                seen.restarted = True
            if seen.first_time(msg):
                yield msg

    def inquire(self, *selectors: int) -> dict[int, int | str]:
        """MQINQ: attribute values by selector (MQIA_* ints, MQCA_* strings)."""
        return self.client.run(mqi.attributes(self.client, self.hobj, selectors))

    def depth(self) -> int:
        return int(self.inquire(C.MQIA_CURRENT_Q_DEPTH)[C.MQIA_CURRENT_Q_DEPTH])

    def set(self, attrs: dict[int, int | str]) -> None:
        """MQSET: change attributes (e.g. MQIA_INHIBIT_PUT)."""
        self.client.run(mqi.set_attributes(self.client, self.hobj, attrs))

    def close(self, options: int = C.MQCO_NONE) -> None:
        """MQCLOSE (read-ahead messages not yet taken are dropped, as in MQ)."""
        if self.closed or self.client.closed:
            return
        self.closed = True
        self.client.run(mqi.close(self.client, self, options))

    def __enter__(self) -> Queue:
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        with contextlib.suppress(ConnectionBroken):
            self.close()


def connect(qmgr: str = "", conn_name: str | None = None, *, appl_name: str = "", user: str = "", password: str | None = None,
            heartbeat: float = 30.0, max_msg_length: int = 4 * 1024 * 1024, timeout: float = 30.0,
            connect_timeout: float = 10.0, reconnect: bool | float = False,
            on_reconnect: R.EventHandler | None = None, channel: str = "", tls: ClientTLS | None = None,
            connect_options: int = 0) -> Client:
    """Connect to queue manager ``qmgr`` at the first answering address of ``conn_name``
    (``"host(port)"``, comma-separated list tried in order). With no ``conn_name``, a
    queue manager of that name started from this home is reached through its local socket
    (``client.local``, IBM's bindings), else ``localhost(1414)``.

    ``reconnect=True`` (or a timeout in seconds) reconnects automatically after a lost
    connection, as MQCNO_RECONNECT does: to any address of ``conn_name``, for up to 1800 s
    by default. ``on_reconnect(reason, detail)`` is told of MQRC_RECONNECTING, RECONNECTED
    and RECONNECT_FAILED.

    ``channel`` names the server-connection channel, whose TLS attributes and channel
    authentication records apply (blank: SYSTEM.DEF.SVRCONN); ``tls`` makes the connection over TLS (``ferrymq.client.tls.ClientTLS``: the key repository, the
    CipherSpec, which must agree with the channel's SSLCIPH, and the rest). Neither applies
    to a local (bindings) connection. ``connect_options``: as for ``Client``.

    Raises:
        QueueManagerUnavailable: nothing answered (MQRC_HOST_NOT_AVAILABLE 2538).
        MQError: the queue manager refused (e.g. MQRC_Q_MGR_NAME_ERROR 2058); TLS failures
            (2059, 2381, 2393, 2398, 2399: see ferrymq.client.tls).
    """
    S.check_qmgr_name(qmgr)
    bindings = conn_name is None and local.available(qmgr)
    addresses = [] if bindings else parse_conn_name("localhost(1414)" if conn_name is None else conn_name)

    def dial() -> socket.socket:
        if bindings:
            try:
                return local.dial(qmgr.strip(), connect_timeout)
            except OSError as exc:
                raise local_unavailable(qmgr, exc) from None
        errors: list[str] = []
        for host, port in addresses:
            try:
                sock = socket.create_connection((host, port), timeout=connect_timeout)
            except OSError as exc:
                errors.append(f"{host}({port}): {exc}")
                continue
            return sock if tls is None else tls.wrap(sock, host, user or os.environ.get(S.USER_ENV, ""))
        raise QueueManagerUnavailable(C.MQCC_FAILED, C.MQRC_HOST_NOT_AVAILABLE, "; ".join(errors))

    policy = None
    if reconnect is not False:
        policy = R.ReconnectPolicy() if reconnect is True else R.ReconnectPolicy(timeout=float(reconnect))
    sock = dial()
    try:
        return Client(sock, qmgr=qmgr, appl_name=appl_name, user=user, password=password, heartbeat=heartbeat,
                      max_msg_length=max_msg_length, timeout=timeout, reconnect=policy, dial=dial,
                      on_reconnect=on_reconnect, channel=channel, connect_options=connect_options)
    except BaseException:
        sock.close()
        raise
