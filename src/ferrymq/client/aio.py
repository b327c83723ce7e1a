"""The asyncio client: ``AsyncClient`` and ``AsyncQueue``, the same methods as the sync ones.

The protocol logic is ``session``'s, the MQI verbs ``mqi``'s and the multi-step flows
``flows``'; here an asyncio Protocol feeds the session and wakes the futures of the
requests whose replies arrived, and ``AsyncClient.run`` carries out the flows' steps. Many tasks may share one AsyncClient:
their requests are pipelined on the one connection (correlation ids keep them apart).
Writes are coalesced: frames queued in one loop iteration leave in one write.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from types import TracebackType
from typing import Any

from ferrymq.client import distlist as D
from ferrymq.client import flows as F
from ferrymq.client import local, mqi, pubsub
from ferrymq.client import reconnect as R
from ferrymq.client import session as S
from ferrymq.client.aio_subscription import AsyncSubscription
from ferrymq.client.connname import parse_conn_name
from ferrymq.client.distlist import AsyncDistributionList
from ferrymq.client.errors import (
    ConnectionBroken,
    NoMessageAvailable,
    QueueManagerUnavailable,
    Quiescing,
    broken,
    local_unavailable,
)
from ferrymq.client.message import AsyncPutStatus, Message, PutResult
from ferrymq.client.sequence_calls import AsyncSequenceCalls
from ferrymq.client.steps import Call, Drop, Exchange, Flow, Lost, Pause, Reconnect, Redial, Send, Step, T
from ferrymq.client.tls import ClientTLS, connect_lost, handshake_failed
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E
from ferrymq.tcpopts import tune_tcp
from ferrymq.wire.mqmd import MQMD


class _Protocol(asyncio.Protocol):
    def __init__(self, client: AsyncClient) -> None:
        self.client = client
        # After a reconnect the old transport's last callbacks must not touch the new
        # conversation.
        self.generation = client._generation

    def _current(self) -> bool:
        return self.generation == self.client._generation

    def data_received(self, data: bytes) -> None:
        if self._current():
            self.client._received(data)

    def eof_received(self) -> bool:
        if self._current():
            self.client._received(b"")
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if self._current():
            self.client._lost(exc)

    def pause_writing(self) -> None:
        self.client._can_write.clear()

    def resume_writing(self) -> None:
        self.client._can_write.set()


class AsyncClient(AsyncSequenceCalls):
    """A connection to a queue manager for asyncio code. Prefer ``connect_async()``."""

    def __init__(self) -> None:
        self._s = S.Session()
        self._transport: asyncio.Transport | None = None
        # The connection's loop, kept from the handshake: asyncio.get_running_loop() makes a
        # getpid() system call each time, and every request would pay two.
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._arrived = asyncio.Event()
        self._can_write = asyncio.Event()
        self._can_write.set()
        self._flush_scheduled = False
        self._last_corr = 0
        self._tx = F.Transaction()
        self._watchdog: asyncio.Task[None] | None = None
        self.closed = False
        self.timeout = 30.0
        self._hello = E.Connect(0)
        self._tls: ClientTLS | None = None
        self._uow = R.UnitOfWorkGuard()
        self._handles = R.Handles()  # re-opened after a reconnect
        self._dial: Callable[[], Awaitable[socket.socket]] | None = None
        self._redial: R.Redialer | None = None
        self._reconnecting: asyncio.Task[None] | None = None
        self._generation = 0  # conversations so far: tells a stale failure from a fresh one
        self._flushed_corr = 0  # requests up to this correlation id were written
        self._topics: pubsub.TopicHandles[AsyncQueue] = pubsub.TopicHandles()  # kept open by publish()

    @classmethod
    async def from_socket(cls, sock: socket.socket, *, qmgr: str = "", appl_name: str = "", user: str = "", password: str | None = None,
                          heartbeat: float = 30.0, max_msg_length: int = 4 * 1024 * 1024,
                          timeout: float = 30.0, reconnect: R.ReconnectPolicy | None = None,
                          dial: Callable[[], Awaitable[socket.socket]] | None = None,
                          on_reconnect: R.EventHandler | None = None, channel: str = "",
                          tls: ClientTLS | None = None, connect_options: int = 0) -> AsyncClient:
        """Handshake over a connected socket (TCP, or a socketpair in bindings mode).

        ``reconnect``, ``dial``, ``on_reconnect``, ``channel``, ``tls`` and ``connect_options``:
        as for the blocking ``Client`` and ``connect`` (``tls``: the TLS handshake comes first).

        Raises:
            MQError: the queue manager refused the connection; TLS failures (ferrymq.client.tls).
        """
        self = cls()
        self.timeout = timeout
        self._hello = S.hello(qmgr, appl_name, user, password, max_msg_length, heartbeat,
                              local=sock.family == socket.AF_UNIX, channel=channel, options=connect_options)
        self._tls = tls
        self._dial = dial
        if reconnect is not None and dial is not None:
            self._redial = R.Redialer(reconnect, on_reconnect)
        await self._handshake(sock)
        return self

    async def _tls_handshake(self, loop: asyncio.AbstractEventLoop, sock: socket.socket) -> asyncio.Transport:
        assert self._tls is not None
        tls = self._tls
        try:
            ctx = tls.context(self._hello.user or os.environ.get(S.USER_ENV, ""))
        except MQError:
            sock.close()
            raise
        try:
            peer = sock.getpeername()[0]
            transport, _ = await loop.create_connection(lambda: _Protocol(self), sock=sock, ssl=ctx,
                                                        server_hostname=peer, ssl_handshake_timeout=self.timeout)
        except (OSError, ValueError) as exc:
            sock.close()
            raise handshake_failed(exc) from None
        try:
            agreed = transport.get_extra_info("ssl_object")
            tls.check(agreed)
            if tls.wants_revocation_check(agreed):  # an OCSP look-up blocks: off the event loop
                await asyncio.to_thread(tls.revocation, agreed)
        except MQError:
            transport.close()
            raise
        return transport

    async def _handshake(self, sock: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        tune_tcp(sock)
        sock.setblocking(False)
        self._s = S.Session()
        self._generation += 1
        self._flushed_corr = 0
        self._waiting = {}
        if self._tls is None:
            transport, _ = await loop.create_connection(lambda: _Protocol(self), sock=sock)  # uvloop's is no subclass
        else:
            transport = await self._tls_handshake(loop, sock)
        self._transport, self._loop = transport, loop
        try:
            reply = S.check(await self._exchange(dataclasses.replace(self._hello, corr=self._s.next_corr())))
        except ConnectionBroken as exc:
            self._transport.close()
            if self._tls is not None:
                raise connect_lost(exc) from None
            raise
        except BaseException:
            self._transport.close()
            raise
        self._s.connected(reply)
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        if self._s.idle_limit() is not None:
            self._watchdog = loop.create_task(self._watch())

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

    async def run(self, flow: Flow[T]) -> T:
        """Carry out a flow's steps; its result, or its exception (steps.drive, awaiting)."""
        outcome: Any = None
        failure: BaseException | None = None
        while True:
            try:
                step = flow.send(outcome) if failure is None else flow.throw(failure)
            except StopIteration as done:
                result: T = done.value
                return result
            outcome = failure = None
            try:
                outcome = await self._step(step)
            except BaseException as exc:  # thrown into the flow, which decides
                failure = exc

    async def _step(self, step: Step) -> Any:
        if isinstance(step, Call):
            return await self._call(step.ev)
        if isinstance(step, Exchange):
            return await self._exchange(step.ev)
        if isinstance(step, Send):
            return await self._send(step.ev)
        if isinstance(step, Reconnect):
            return await self._reconnect(step.lost.cause, step.lost.generation)
        if isinstance(step, Pause):
            return await asyncio.sleep(step.seconds)
        if isinstance(step, Redial):
            assert self._dial is not None
            await self._handshake(await self._dial())
            return self._s
        if isinstance(step, Drop):
            if self._transport is not None:
                self._transport.abort()
            return None
        raise TypeError(step)

    # -- plumbing ----------------------------------------------------------------------------

    def _received(self, data: bytes) -> None:
        s = self._s
        try:
            s.feed(data)
        except ConnectionBroken as exc:
            self._fail_all(exc)
            if self._transport is not None:
                self._transport.close()
            return
        if s.out_bytes:
            self._schedule_flush()
        if s.replies:
            for corr in [c for c in s.replies if c in self._waiting]:
                fut = self._waiting.pop(corr)
                if not fut.done():
                    fut.set_result(s.replies.pop(corr))
        self._arrived.set()
        if s.ending is not None or s.eof:
            self._fail_all(None)

    def _lost(self, exc: Exception | None) -> None:
        self._s.eof = True
        self._fail_all(exc)

    def _fail_all(self, exc: BaseException | None) -> None:
        if isinstance(exc, MQError):  # the session's own verdict (a protocol error) says why
            err: BaseException = exc
        else:
            try:
                self._s.check_alive()
                err = broken(f"connection lost: {exc!r}")
            except MQError as e:
                err = e
        for fut in self._waiting.values():
            if not fut.done():
                fut.set_exception(err)
        self._waiting.clear()
        self._arrived.set()

    def _schedule_flush(self) -> None:
        if not self._flush_scheduled:
            self._flush_scheduled = True
            (self._loop or asyncio.get_running_loop()).call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        if self._s.out_bytes and self._transport is not None and not self._transport.is_closing():
            self._transport.write(self._s.take_out())
            self._flushed_corr = self._last_corr

    async def _exchange(self, ev: Any) -> Any:
        self._s.send(ev)
        self._last_corr = ev.corr
        fut: asyncio.Future[Any] = (self._loop or asyncio.get_running_loop()).create_future()
        self._waiting[ev.corr] = fut
        self._schedule_flush()
        return await fut

    async def _call(self, ev: Any) -> Any:
        """Send a request and await its reply, reconnecting (when enabled) if the
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
            reply = await self._exchange(ev)
        else:
            started = time.monotonic()
            try:
                reply = await self._send(ev)
            except Lost as lost:
                reply = await self.run(F.call_again(self, ev, lost, started))
        if guard:
            self._uow.ended(ev)
        return reply

    async def _send(self, ev: Any) -> Any:
        """Send a request and await its reply; an end of the conversation that a
        reconnect can cure is raised as Lost."""
        generation = self._generation
        try:
            if self._redial is not None and (self._s.eof or self._s.ending is not None):
                self._s.check_alive()  # died while idle: reconnect before sending
            return await self._exchange(ev)
        except MQError as exc:
            if not self._lost_conversation(exc, generation):
                raise
            raise Lost(exc, generation == self._generation and 0 < ev.corr <= self._flushed_corr, generation) from None

    def _lost_conversation(self, exc: MQError, generation: int) -> bool:
        if self._redial is None or self.closed or not R.reconnectable(exc):
            return False
        return generation != self._generation or self._s.eof or self._s.ending is not None

    async def _reconnect(self, cause: MQError, generation: int) -> None:
        """Re-make the conversation (flows.reconnect) once for every caller that saw
        conversation ``generation`` end.

        Raises:
            MQError: MQRC_RECONNECT_FAILED once the reconnect timeout has passed.
        """
        if generation != self._generation:
            return  # another task already reconnected
        if self._reconnecting is None or self._reconnecting.done():
            assert self._redial is not None
            self._reconnecting = asyncio.get_running_loop().create_task(
                self.run(F.reconnect(self, self._redial, self._uow, cause)))
        await asyncio.shield(self._reconnecting)

    async def _watch(self) -> None:
        """End a conversation whose server has been silent for the idle limit: while a call
        or a read-ahead waits (counted from the request), or at any time once the server
        has been heard sending heartbeats while nothing waited (SHARECNV(1) and above; under
        SHARECNV(0) IBM's server sends them only during a waiting MQGET)."""
        s = self._s
        limit = s.idle_limit()
        assert limit is not None
        idle_beats, seen = False, s.heartbeats_in
        while not self.closed:
            await asyncio.sleep(limit / 4)
            waiting = bool(self._waiting or s.consumers)
            if s.heartbeats_in != seen:
                idle_beats |= not waiting
                seen = s.heartbeats_in
            silent = time.monotonic() - (max(s.last_rx, s.last_tx) if waiting else s.last_rx) > limit
            if silent and (waiting or idle_beats) and self._transport is not None:
                self._s.eof = True
                self._fail_all(TimeoutError(f"no heartbeat for {limit:.0f} s"))
                self._transport.abort()
                return

    # -- MQI ---------------------------------------------------------------------------------

    @property
    def qmgr_name(self) -> str:
        return self._s.qmgr_name

    async def open(self, name: str, *, options: int | None = None, read_ahead: int = 0, async_put: bool = False,
                   object_q_mgr_name: str = "", dynamic_q_name: str = "AMQ.*", selector: str = "") -> AsyncQueue:
        """Open a queue (MQOPEN); see ``Client.open``."""
        reply, record = await self.run(F.open_queue(self, name, options, read_ahead, object_q_mgr_name,
                                                    dynamic_q_name, selector))
        q = AsyncQueue(self, reply.hobj, reply.object_name, read_ahead, async_put, record)
        self._handles.add(q)
        return q

    async def open_topic(self, topic: str, *, async_put: bool = False, options: int = pubsub.TOPIC_OPEN) -> AsyncQueue:
        """Open topic string ``topic`` for publishing (MQOPEN of an MQOT_TOPIC, output):
        ``put`` on the result publishes, with every keyword of ``Queue.put``
        (``options=MQPMO_RETAIN`` to retain). Its ``name`` is the full topic string.
        ``options``: the MQOO options (output, plus e.g. MQOO_SET_ALL_CONTEXT to publish
        with the context the caller sets).

        Raises:
            MQError: the queue manager refused (e.g. 2425 MQRC_TOPIC_STRING_ERROR, 2085
                MQRC_UNKNOWN_OBJECT_NAME).
        """
        reply, record = await self.run(mqi.open_topic(self, topic, options))
        q = AsyncQueue(self, reply.hobj, reply.res_object_string or topic, 0, async_put, record)
        self._handles.add(q)
        return q

    async def publish(self, topic: str, data: bytes | str, *, persistent: bool | None = None, retain: bool = False,
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
            q = await self.open_topic(topic)
            stale = self._topics.add(topic, q)
            if stale is not None:
                await stale.close()
        return await q.put(data, persistent=persistent, properties=properties, syncpoint=syncpoint, async_put=async_put,
                     options=C.MQPMO_RETAIN if retain else 0)

    async def subscribe(self, topic: str, *, durable: bool = False, name: str | None = None, selector: str | None = None,
                  wildcards: str = "topic", new_only: bool = False, read_ahead: int = 0) -> AsyncSubscription:
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
        reply = await self.run(mqi.subscribe(self, request))
        queue = AsyncQueue(self, reply.hobj, reply.queue_name, read_ahead, False, pubsub.managed_queue_record(reply.queue_name))
        sub = AsyncSubscription(self, reply, request, queue)
        self._handles.add(sub)
        self._handles.add(queue)  # after its subscription, which makes it again
        return sub

    async def put1(self, queue: str, data: bytes | str, **kw: Any) -> PutResult:
        """MQPUT1; same keywords as ``AsyncQueue.put``."""
        return await AsyncQueue(self, 0, queue, 0, kw.pop("async_put", False), R.OpenRecord(queue, 0, "", "")).put(
            data, **kw, _put1=True)

    async def open_list(self, queues: Sequence[str | tuple[str, str]], *,
                  options: int = C.MQOO_OUTPUT | C.MQOO_FAIL_IF_QUIESCING) -> AsyncDistributionList:
        """Open a distribution list (MQOPEN with object records): ``queues`` as names or
        (queue, queue manager) pairs. ``opened`` on the result holds each queue's open
        outcome (ferrymq.client.distlist); it is not re-opened after a reconnect.

        Raises:
            DistributionListError: no queue opened (its ``result`` says why each);
                MQError: refused as a whole (2045 options, 2154 no queues ...).
        """
        reply, pairs = await self.run(D.open_list(self, queues, options))
        return AsyncDistributionList(self, reply, pairs)

    async def put1_list(self, queues: Sequence[str | tuple[str, str]], data: bytes | str, *,
                  records: Sequence[D.PutRecord] | None = None, **kw: Any) -> D.ListResult:
        """MQPUT1 to a distribution list: open, put one copy to each queue, close; keywords
        as ``DistributionList.put``.

        Raises:
            DistributionListError, MQError: as ``open_list`` and ``DistributionList.put``.
        """
        return await self.run(D.put_list(self, 0, D.destinations(queues), data, records, self._tx.active, kw))

    async def reply(self, request: Message, data: bytes | str, *, feedback: int = C.MQFB_NONE,
              persistent: bool | None = None, priority: int | None = None,
              syncpoint: bool | None = None) -> PutResult:
        """Send a reply to ``request``, as its Report options ask (see ferrymq.client.replies):
        to its ReplyToQ, CorrelId from its MsgId (or CorrelId), its priority and persistence.

        Raises:
            MQError: MQRC_MISSING_REPLY_TO_Q when the request names no ReplyToQ; a put failure.
        """
        sp = self._tx.active if syncpoint is None else syncpoint
        return await self.run(F.reply(self, request, data, feedback, persistent, priority, sp))

    async def send_report(self, original: Message, feedback: int, data: bytes | None = None,
                    syncpoint: bool | None = None) -> PutResult | None:
        """Send a PAN (MQFB_PAN), NAN (MQFB_NAN) or exception report (any other feedback,
        MQFB_* or MQRC_*) on ``original`` — only if it asked for that kind; None otherwise.
        An exception report carries the data its option asks for unless ``data`` is given.

        Raises:
            MQError: MQRC_MISSING_REPLY_TO_Q when the original names no ReplyToQ; a put failure.
        """
        return await self.run(F.report(self, original, feedback, data,
                                       self._tx.active if syncpoint is None else syncpoint))

    async def commit(self) -> None:
        """MQCMIT. Raises BackedOut if the queue manager had to back the unit of work out."""
        await self.run(mqi.commit(self))

    async def backout(self) -> None:
        """MQBACK."""
        await self.run(mqi.backout(self))

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        """A unit of work: puts and gets inside default to syncpoint; commits on normal
        exit, backs out when the block raises."""
        self._tx.begin()
        try:
            yield
        except BaseException:
            self._tx.end()
            with contextlib.suppress(MQError):
                await self.backout()
            raise
        self._tx.end()
        await self.commit()

    async def stat(self) -> AsyncPutStatus:
        """MQSTAT: outcomes of asynchronous puts since the last call (sends buffered puts first)."""
        return await self.run(mqi.stat(self))

    def column_limit(self) -> int:
        """Data bytes one ``AsyncQueue.put_columns`` call may carry on this connection."""
        return self._s.column_limit()

    async def ping(self) -> float:
        t0 = time.perf_counter()
        await self._call(E.Heartbeat(self._s.next_corr(), reply=True))
        return time.perf_counter() - t0

    async def disconnect(self) -> None:
        """MQDISC."""
        if self.closed:
            return
        self.closed = True  # also stops any reconnecting
        try:
            with contextlib.suppress(ConnectionBroken, Quiescing):
                await self._exchange(E.Disconnect(self._s.next_corr()))
        finally:
            if self._watchdog is not None:
                self._watchdog.cancel()
            if self._transport is not None:
                self._transport.close()

    close = disconnect

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        if not self.closed and et is not None and self._tx.active:
            with contextlib.suppress(MQError):
                await self.backout()
        await self.disconnect()


class AsyncQueue:
    """An open queue for asyncio code; methods mirror ``Queue``."""

    def __init__(self, client: AsyncClient, hobj: int, name: str, read_ahead: int, async_put: bool,
                 record: R.OpenRecord) -> None:
        self.client = client
        self.hobj = hobj
        self.name = name
        self.read_ahead = read_ahead
        self.async_put = async_put
        self.closed = False
        self.record = record  # what re-opens it after a reconnect
        self._waited_since: float | None = None  # when a read-ahead get began to wait (_get_ahead)

    async def put(self, data: bytes | str, *, priority: int | None = None, persistent: bool | None = None,
                  expiry: float | None = None, correl_id: bytes | None = None, msg_id: bytes | None = None,
                  reply_to_q: str = "", reply_to_q_mgr: str = "", format: str | None = None,
                  msg_type: int | None = None, report: int = 0, feedback: int = 0,
                  properties: dict[str, Any] | None = None, syncpoint: bool | None = None,
                  async_put: bool | None = None, md: MQMD | None = None, options: int = 0,
                  _put1: bool = False) -> PutResult:
        """MQPUT; see ``Queue.put``."""
        c = self.client
        asy = self.async_put if async_put is None else async_put
        if asy and c._redial is not None and (c._s.eof or c._s.ending is not None):
            generation = c._generation
            with contextlib.suppress(MQError):
                c._s.check_alive()
            await c._reconnect(broken("the connection was lost"), generation)
        s = c._s
        ev, res = S.put_event(s, s.next_corr(), self.name if _put1 else self.hobj, data,
                              (priority, persistent, expiry, reply_to_q, reply_to_q_mgr, format, msg_type, report, feedback),
                              correl_id, msg_id, properties, c._tx.active if syncpoint is None else syncpoint, asy, md, options)
        if res is not None:
            if ev.options & C.MQPMO_SYNCPOINT:  # UnitOfWorkGuard.before does nothing for other puts
                c._uow.before(ev)
            s.send(ev)
            c._last_corr = ev.corr
            if s.out_bytes >= S.FLUSH_AT:
                c._flush()
                await c._can_write.wait()  # the server is slow: hold the producer
            else:
                c._schedule_flush()
            return res
        return S.put_result(await c._call(ev))

    async def put_columns(self, offsets: bytes, data: bytes | memoryview, *, md: MQMD | None = None,
                          msg_ids: bytes | None = None, correl_ids: bytes | None = None,
                          syncpoint: bool | None = None, options: int = 0) -> int:
        """n asynchronous MQPUTs as columns; see ``Queue.put_columns``."""
        c = self.client
        s = c._s
        ev = S.send_columns(s, c._uow, self.hobj, offsets, data, md=md, msg_ids=msg_ids, correl_ids=correl_ids,
                            syncpoint=c._tx.active if syncpoint is None else syncpoint, options=options)
        if s.out_bytes >= S.FLUSH_AT:
            c._flush()
            await c._can_write.wait()  # the server is slow: hold the producer
        else:
            c._schedule_flush()
        return ev.count

    async def get(self, wait: float | None = 0.0, *, msg_id: bytes | None = None, correl_id: bytes | None = None,
                  syncpoint: bool | None = None, max_length: int | None = None, accept_truncated: bool = False,
                  options: int = 0, ccsid: int | None = None, encoding: int = C.MQENC_NATIVE) -> Message:
        """MQGET; see ``Queue.get``."""
        c = self.client
        sp = c._tx.active if syncpoint is None else syncpoint
        if self.read_ahead and not options and ccsid is None and S.can_read_ahead(msg_id, correl_id, sp):
            generation = c._generation
            self._waited_since = None  # the clock is read only once the get must wait (_get_ahead)
            try:
                msg = await self._get_ahead(wait)
            except MQError as exc:
                if not c._lost_conversation(exc, generation):
                    raise
                await c._reconnect(exc, generation)  # pushed messages not yet taken are gone, as in MQ
                return await self.get(self._wait_left(wait), syncpoint=syncpoint, max_length=max_length,
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
        return S.message_from(await c._call(ev))

    def _wait_left(self, wait: float | None) -> float | None:
        """What is left of a read-ahead get's ``wait`` (all of it if it did not wait)."""
        since = self._waited_since
        if wait is None or since is None:
            return wait
        return max(0.0, wait - (time.monotonic() - since))

    async def get_batch(self, max_messages: int = 100, *, wait: float | None = 0.0, syncpoint: bool | None = None,
                        max_bytes: int = 1024 * 1024) -> list[Message]:
        """Up to ``max_messages`` messages in one round trip; see ``Queue.get_batch``."""
        c = self.client
        sp = c._tx.active if syncpoint is None else syncpoint
        ev = S.get_batch_event(c._s, self.hobj, max_messages=max_messages, max_bytes=max_bytes, wait=wait,
                               syncpoint=sp, read_ahead=self.read_ahead)
        if ev is not None:
            return S.messages_from(await c._call(ev))
        out: list[Message] = []
        with contextlib.suppress(NoMessageAvailable):
            out.append(await self.get(wait, syncpoint=sp))
            while len(out) < max_messages:
                out.append(await self.get(0.0, syncpoint=sp))
        return out

    async def _get_ahead(self, wait: float | None) -> Message | None:
        """A pushed message; None when the next one is persistent (get it synchronously)."""
        c = self.client
        s = c._s
        if self.hobj not in s.consumers:
            s.start_consume(self.hobj, self.read_ahead, C.MQGMO_FAIL_IF_QUIESCING)
            c._schedule_flush()
        deadline: float | None = None
        while True:
            msg = s.take_pushed(self.hobj)
            if msg is not None:
                if s.credit_due:
                    c._flush()  # at once: a consumer that does not yield would hold it (Session.take_pushed)
                elif s.out_bytes:
                    c._schedule_flush()
                return msg
            if s.take_pause(self.hobj):
                return None
            if self._waited_since is None:  # a message already pushed was taken before the clock was read
                self._waited_since = time.monotonic()
                if wait is not None:
                    deadline = self._waited_since + wait
            s.check_alive()
            c._arrived.clear()
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise NoMessageAvailable(C.MQCC_FAILED, C.MQRC_NO_MSG_AVAILABLE, "no message arrived within the wait")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(c._arrived.wait(), remaining)

    async def messages(self, wait: float | None = 0.0, **kw: Any) -> AsyncIterator[Message]:
        """Get messages until none arrives within ``wait`` seconds."""
        while True:
            try:
                yield await self.get(wait, **kw)
            except NoMessageAvailable:
                return

    def __aiter__(self) -> AsyncIterator[Message]:
        return self.messages()

    async def browse(self, *, msg_id: bytes | None = None, correl_id: bytes | None = None, wait: float = 0.0,
                     max_length: int | None = None) -> AsyncIterator[Message]:
        """Browse in delivery order without removing anything."""
        c = self.client
        flag = C.MQGMO_BROWSE_FIRST
        seen = S.BrowsePosition()
        while True:
            reconnects = c.reconnects
            ev = S.get_event(c._s.next_corr(), self.hobj, wait=wait, msg_id=msg_id, correl_id=correl_id,
                             syncpoint=False, max_length=S.buffer_length(c._s, max_length), accept_truncated=True,
                             browse=flag)
            try:
                msg = S.message_from(await c._call(ev))
            except NoMessageAvailable:
                return
            flag = C.MQGMO_BROWSE_NEXT
            if c.reconnects != reconnects:
                seen.restarted = True
            if seen.first_time(msg):
                yield msg

    async def inquire(self, *selectors: int) -> dict[int, int | str]:
        """MQINQ: attribute values by selector (MQIA_* ints, MQCA_* strings)."""
        return await self.client.run(mqi.attributes(self.client, self.hobj, selectors))

    async def depth(self) -> int:
        return int((await self.inquire(C.MQIA_CURRENT_Q_DEPTH))[C.MQIA_CURRENT_Q_DEPTH])

    async def set(self, attrs: dict[int, int | str]) -> None:
        """MQSET: change attributes (e.g. MQIA_INHIBIT_PUT)."""
        await self.client.run(mqi.set_attributes(self.client, self.hobj, attrs))

    async def close(self, options: int = C.MQCO_NONE) -> None:
        if self.closed or self.client.closed:
            return
        self.closed = True
        await self.client.run(mqi.close(self.client, self, options))

    async def __aenter__(self) -> AsyncQueue:
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        with contextlib.suppress(ConnectionBroken):
            await self.close()


async def connect_async(qmgr: str = "", conn_name: str | None = None, *, appl_name: str = "", user: str = "", password: str | None = None,
                        heartbeat: float = 30.0, max_msg_length: int = 4 * 1024 * 1024, timeout: float = 30.0,
                        connect_timeout: float = 10.0, reconnect: bool | float = False,
                        on_reconnect: R.EventHandler | None = None, channel: str = "",
                        tls: ClientTLS | None = None, connect_options: int = 0) -> AsyncClient:
    """Connect to ``qmgr`` at the first answering address of ``conn_name``; see ``connect``
    (``reconnect``, ``on_reconnect``, ``channel`` and ``tls`` too). With no ``conn_name``,
    a queue manager of that name started from this home is reached through its local
    socket (``client.local``, IBM's bindings), else ``localhost(1414)``.

    Raises:
        QueueManagerUnavailable: nothing answered; MQError: the queue manager refused.
    """
    S.check_qmgr_name(qmgr)
    bindings = conn_name is None and local.available(qmgr)
    addresses = [] if bindings else parse_conn_name("localhost(1414)" if conn_name is None else conn_name)

    async def dial() -> socket.socket:
        if bindings:
            try:
                return await local.dial_async(qmgr.strip(), connect_timeout)
            except (OSError, TimeoutError) as exc:
                raise local_unavailable(qmgr, exc) from None
        errors: list[str] = []
        loop = asyncio.get_running_loop()
        for host, port in addresses:
            try:
                infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
                sock = socket.socket(infos[0][0], socket.SOCK_STREAM)
                sock.setblocking(False)
                try:
                    await asyncio.wait_for(loop.sock_connect(sock, infos[0][4]), connect_timeout)
                except BaseException:
                    sock.close()
                    raise
            except (OSError, TimeoutError) as exc:
                errors.append(f"{host}({port}): {exc!r}")
                continue
            return sock
        raise QueueManagerUnavailable(C.MQCC_FAILED, C.MQRC_HOST_NOT_AVAILABLE, "; ".join(errors))

    policy = None
    if reconnect is not False:
        policy = R.ReconnectPolicy() if reconnect is True else R.ReconnectPolicy(timeout=float(reconnect))
    return await AsyncClient.from_socket(await dial(), qmgr=qmgr, appl_name=appl_name, user=user, password=password,
                                         heartbeat=heartbeat, max_msg_length=max_msg_length, timeout=timeout,
                                         reconnect=policy, dial=dial, on_reconnect=on_reconnect, channel=channel,
                                         connect_options=connect_options,
                                         tls=tls)
