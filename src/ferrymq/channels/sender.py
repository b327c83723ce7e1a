"""The sending message channel agent (CHLTYPE SDR, SVR with a CONNAME, or a SVR a requester started).

One session: connect to the first CONNAME address that answers, HELLO naming this queue
manager and the batch in doubt (if any), HELLO_ACK with the receiver's last committed
sequence number. The batch in doubt is committed when the receiver committed it (its
sequence number is the receiver's last), else backed out: once and once only, with no
operator. Then batches: up to BATCHSZ messages got from the transmission queue under one
unit of work (waiting BATCHINT for more; ended early once BATCHLIM kilobytes are in it,
after the message that reached it), sent, the unit prepared under the batch's XID and
made durable, BATCH_END, and the unit committed only when CONFIRM says the receiver's
commit is durable. With BATCHHB, a batch about to be prepared when nothing has come from
the receiver for BATCHHB milliseconds first sends a heartbeat and waits for its answer
(twice HBINT at most): a receiver that is gone then fails the session with the batch
backed out, its messages still here to send, rather than in doubt. Idle: heartbeats
every HBINT, the channel ends after DISCINT; a partner that closes the connection meanwhile
(a requester stopped or gone) is seen within IDLE_POLL, not at the next heartbeat, and so
is one that closes it while a batch waits BATCHINT for more messages (the batch backs out).

Pipelining (IBM's PipeLineLength above 1 at both ends, agreed in the handshake): the next
batch is got, sent and prepared while the last one waits for its CONFIRM, so the two
queue managers' disk writes and the round trip overlap; at most two batches are in doubt
(IBM runs two threads). A third batch's messages may follow while two are: only its
prepare waits for the oldest CONFIRM. Prepared before its BATCH_END, each is in doubt on
its own XID; the receiver commits them in order, so at reconnection those up to its last
committed sequence number are committed and the rest backed out (``batches_in_doubt``).
Whatever the depth, a BATCH_END is written only once its prepare is durable; meanwhile
the agent gets and encodes the next batch, whose messages follow that BATCH_END.

A session that fails backs out what it had not prepared; the retry loop (SHORTRTY times
SHORTTMR, then LONGRTY times LONGTMR) starts the next one; STOPPED when they run out.
A server started by a requester (``inbound``: the connection the requester opened) has
one session over that connection and no retries: the requester starts it again.

The message exit (MSGEXIT, ferrymq.channels.exits) sees each message as it is sent, in
the batch's unit of work: MQXCC_SUPPRESS_FUNCTION dead-letters it here (MQDLH Reason: the
exit's Feedback, else MQFB_STOPPED_BY_MSG_EXIT), MQXCC_CLOSE_CHANNEL ends the session, and
an exit that fails stops the channel without retries; either way the unit backs out and
the message stays on the transmission queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from ferrymq.channels import calltls
from ferrymq.channels.events import ChannelEvents, ended_qualifier
from ferrymq.channels.exits import ChannelExits, ExitClosed, ExitFailed, ExitSettings
from ferrymq.channels.host import EngineHost
from ferrymq.channels.link import ChannelError, Link, open_link, receive_timeout
from ferrymq.channels.security import exchange
from ferrymq.engine.api import GetOptions, GetResult, ObjectDescriptor, PutOptions
from ferrymq.engine.channels import ChannelObject
from ferrymq.engine.chlcontrol import ChannelStatus, batch_xid, batches_in_doubt, committed_at_receiver
from ferrymq.engine.deadletter import dead_letter
from ferrymq.engine.objects import stamp
from ferrymq.errors import DecodeError, MQError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.mq import cxc as X
from ferrymq.properties import model as props_model
from ferrymq.protocol import channel as P
from ferrymq.protocol.errors import RemoteProtocolError
from ferrymq.tls import names, ocsp, rules
from ferrymq.wire.convert import convert_xmit
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.mqxqh import unpack_xmit

log = logging.getLogger("ferrymq.channels")

_GET = C.MQGMO_SYNCPOINT | C.MQGMO_NO_WAIT  # properties into the result (msg_handle), not the data
# NPMSPEED(FAST): a non-persistent message leaves the transmission queue at once, outside the batch's unit.
_GET_FAST = C.MQGMO_SYNCPOINT_IF_PERSISTENT | C.MQGMO_NO_WAIT
IDLE_POLL = 0.02  # seconds between looks at an empty transmission queue
_REQUEUE = C.MQPMO_SYNCPOINT | C.MQPMO_SET_ALL_CONTEXT
_ANY_LENGTH = 2**31 - 1  # a buffer limit, not an allocation: a message too long is dead-lettered, not cut
_ANY_MD = MQMD()  # no identifier to match: the transmission queue's messages in delivery order
# A batch's frames are written together (one system call for many messages), but never
# more than this many bytes held: messages a message exit made large go as they come.
_WRITE_AT = 256 * 1024
PIPELINE_DEPTH = 2  # batches out at once when pipelining is agreed: any PipeLineLength above 1 (IBM's)


@dataclass(slots=True)
class SentBatch:
    """A batch sent and prepared, waiting for its CONFIRM."""

    seq: int
    xid: bytes
    count: int
    sent_at: float = 0.0  # time.monotonic() of its BatchEnd (STATCHL's NetTime), once written


class SenderAgent:
    """Runs one sending channel until it is stopped or its retries run out."""

    def __init__(self, host: EngineHost, chl: ChannelObject, row: ChannelStatus, *, reset_to: int = 0,
                 exit_settings: ExitSettings | None = None, pipelined: bool = False,
                 inbound: tuple[Link, str] | None = None) -> None:
        """``pipelined``: this queue manager's PipeLineLength is above 1 (module docstring)."""
        self.host, self.qm = host, host.qmgr
        self.chl = chl
        self.exit_settings = exit_settings or ExitSettings(host.qmgr.name)
        self.exits: ChannelExits | None = None
        self.row = row
        self.reset_to = reset_to
        self.stop_requested = asyncio.Event()
        self.stop_mode = F.MQMODE_QUIESCE
        self.hconn = 0
        self.hobj = self.hobj_out = 0
        self.max_msg_length = 0
        self.link: Link | None = None
        self.fast = False  # NPMSPEED(FAST) agreed with the receiver for this session
        self.convert_to: tuple[int, int] | None = None  # CONVERT(YES): the receiver's (Encoding, CCSID)
        self.events = ChannelEvents(host, chl.name, chl.text("XMITQ"))
        self.pipelined = pipelined
        self.depth = 1  # batches out at once in this session: PIPELINE_DEPTH once both ends agreed
        self.unconfirmed: deque[SentBatch] = deque()  # sent and prepared, oldest first
        # The newest batch's BATCH_END, written once its prepare is durable: the next
        # batch's messages wait for it (``end_batch``).
        self.ending: asyncio.Future[None] | None = None
        self.inbound = inbound  # a requester's connection and address, taken by the one session
        self.requested = inbound is not None

    def stop(self, mode: int) -> None:
        self.stop_mode = mode
        self.row.stop_requested = True
        self.stop_requested.set()
        if mode != F.MQMODE_QUIESCE and self.link is not None:
            self.link.close()  # FORCE/TERMINATE: end the conversation now

    # -- the retry loop -------------------------------------------------------------------
    async def run(self) -> int:
        """Sessions until stopped, idle (DISCINT) or out of retries; the final MQCHS_ status."""
        chl, row = self.chl, self.row
        short_left, long_left = chl.number("SHORTRTY"), chl.number("LONGRTY")
        row.short_left, row.long_left = short_left, long_left
        try:
            while not self.stop_requested.is_set():
                try:
                    await self.session()
                    return F.MQCHS_STOPPED if self.stop_requested.is_set() else F.MQCHS_INACTIVE
                except ExitFailed as exc:  # retrying would fail the same way: stopped until mended
                    log.error("event=channel_exit_failed channel=%s reason=%d error=%s", chl.name, exc.reason, exc)
                    row.error = str(exc)
                    self.events.stopped(F.MQRQ_CHANNEL_STOPPED_DISABLED, exc.reason, str(exc))
                    return F.MQCHS_STOPPED
                except ExitClosed as exc:  # the exit's decision, not a failure to retry
                    log.warning("event=channel_closed_by_exit channel=%s detail=%s", chl.name, exc)
                    row.error = str(exc)
                    self.events.stopped(F.MQRQ_CHANNEL_STOPPED_DISABLED, getattr(exc, "reason", 0), str(exc))
                    return F.MQCHS_STOPPED
                except (OSError, ChannelError, MQError, TimeoutError, RemoteProtocolError) as exc:
                    if self.stop_requested.is_set():
                        break
                    reason = getattr(exc, "reason", C.MQRC_CONNECTION_BROKEN)
                    detail = str(exc) or type(exc).__name__  # a receive timeout has no text
                    log.warning("event=channel_failed channel=%s reason=%s error=%s", chl.name, reason, detail)
                    self.end_session()
                    retrying = short_left > 0 or long_left > 0
                    self.events.stopped(F.MQRQ_CHANNEL_STOPPED_RETRY if retrying else F.MQRQ_CHANNEL_STOPPED_DISABLED,
                                        reason, detail)
                    if self.requested:  # the requester's connection is gone: it starts the channel again
                        return F.MQCHS_INACTIVE
                if short_left > 0:
                    short_left -= 1
                    delay = chl.number("SHORTTMR")
                elif long_left > 0:
                    long_left -= 1
                    delay = chl.number("LONGTMR")
                else:
                    log.error("event=channel_retries_exhausted channel=%s", chl.name)
                    return F.MQCHS_STOPPED
                row.short_left, row.long_left = short_left, long_left
                row.status, row.substate = F.MQCHS_RETRYING, F.MQCHSSTATE_OTHER
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stop_requested.wait(), max(delay, 0.05))
            return F.MQCHS_STOPPED
        finally:
            self.end_session()
            self.release_engine()
            # Ended while running: stopped (STOP CHANNEL), idle (DISCINT) or the queue manager ending.
            self.events.stopped(ended_qualifier(chl.name in self.qm.state.channel_control.stopped, error=False))

    # -- one session ----------------------------------------------------------------------
    def in_doubt(self) -> list[tuple[bytes, int]]:
        """This channel's batches in doubt (XID, sequence number), oldest first."""
        return batches_in_doubt(self.qm.in_doubt, self.chl.name, self.chl.number("SEQWRAP"))

    async def connect(self) -> Link:
        if self.inbound is not None:
            link, self.row.conname = self.inbound
            self.inbound = None
            return link
        if self.requested:
            raise ChannelError(C.MQRC_CONNECTION_BROKEN, "the requester's connection has ended")
        self.row.substate = F.MQCHSSTATE_NET_CONNECTING
        self.row.tls = None  # until this connection's handshake says otherwise
        try:
            link, self.row.conname = await open_link(self.chl.text("CONNAME"), 30, self.tls_context(), self.check_peer)
        except ssl.SSLError as exc:
            stage, code = rules.handshake_failure(exc)
            self.events.ssl_error(F.MQRQ_SSL_HANDSHAKE_ERROR, self.chl.text("CONNAME"), stage=stage, return_code=code)
            raise
        await self.check_revocation(link)
        return link

    async def check_revocation(self, link: Link) -> None:
        """The receiver's certificate's revocation status by OCSP, as the queue manager's
        listener checks its callers' (server.tls ``ServerTLS.revocation``).

        Raises:
            ChannelError: MQRC_CHANNEL_SSL_ERROR (revoked, or not known under
                OCSPAuthentication REQUIRED), the connection closed.
        """
        agreed = link.writer.get_extra_info("ssl_object")
        keys = self.host.keys
        found = await keys.revocation(agreed) if keys is not None and agreed is not None else None
        if found is None:
            return
        conname, verdict = self.chl.text("CONNAME"), found.verdict
        if not found.refuse:
            log.warning("event=tls_revocation_unknown channel=%s warn=%s detail=%r", self.chl.name, found.warn,
                        verdict.detail)
            if found.warn:
                self.events.ssl_warning(F.MQRQ_SSL_UNKNOWN_REVOCATION, conname)
            return
        link.writer.close()
        self.events.ssl_error(F.MQRQ_SSL_HANDSHAKE_ERROR, conname, stage=ocsp.STAGE, return_code=verdict.code)
        raise ChannelError(C.MQRC_CHANNEL_SSL_ERROR, f"the receiver's certificate: OCSP {verdict.status} "
                                                     f"({verdict.detail})")

    def tls_context(self) -> ssl.SSLContext | None:
        """Raises: ChannelError: MQRC_CHANNEL_SSL_ERROR (``calltls.calling_context``)."""
        return calltls.calling_context(self.chl, self.host.keys)

    def check_peer(self, writer: asyncio.WriteTransport) -> None:
        """The receiver's certificate against this channel's SSLPEER, the suite against a
        single TLS 1.3 CipherSpec.

        Raises:
            ChannelError: MQRC_CHANNEL_SSL_ERROR, the connection closed.
        """
        peer = names.peer_of(writer.get_extra_info("ssl_object"))
        refused = calltls.receiver_refusal(self.chl, peer)
        if refused is not None:
            writer.close()
            self.events.ssl_error(rules.QUALIFIER[refused[0]], self.chl.text("CONNAME"), peer_name=peer.dn)
            raise ChannelError(C.MQRC_CHANNEL_SSL_ERROR, refused[1])
        self.row.tls = peer

    def open_engine(self) -> None:
        if self.hobj:
            return
        qm = self.qm
        if not self.hconn:  # connected, but the open failed (the queue in use ...): open again
            self.hconn = qm.connect(appl_name=f"ferrymq channel {self.chl.name}"[:28], user="ferrymq",
                                    appl_type=C.MQAT_QMGR)
        xmitq = self.chl.text("XMITQ")
        q = qm.objects.find(xmitq)
        if q is None or not q.is_local or q.attrs.get("USAGE") != C.MQUS_TRANSMISSION:
            raise ChannelError(F.MQRCCF_NOT_XMIT_Q, f"XMITQ({xmitq}) is not a local queue with USAGE(XMITQ)")
        self.hobj = qm.open(self.hconn, ObjectDescriptor(object_name=xmitq),
                            C.MQOO_INPUT_EXCLUSIVE | C.MQOO_INQUIRE).hobj

    def release_engine(self) -> None:
        if self.hconn and self.hconn in self.qm.connections:
            self.qm.backout(self.hconn)
            self.qm.disconnect(self.hconn)
            self.host.done()
        self.hconn = self.hobj = self.hobj_out = 0

    def end_session(self) -> None:
        if self.exits is not None:
            self.exits.term()
            self.exits = None
        if self.hconn and self.hconn in self.qm.connections:
            self.qm.backout(self.hconn)  # what was got but not prepared goes back
            self.host.done()
        if self.link is not None:
            self.link.close()
            self.link = None
        self.unconfirmed.clear()  # prepared: in doubt, resolved at the next session's start
        self.ending = None  # its link is closed: a BATCH_END still waiting is never written

    async def session(self) -> None:
        chl, row, qm = self.chl, self.row, self.qm
        self.exits = ChannelExits.load(chl, self.exit_settings)
        self.open_engine()
        link = self.link = await self.connect()
        doubt = self.in_doubt()
        row.indoubt = bool(doubt)
        hello = P.Hello(chl.name, qm.name, chl.number("BATCHSZ"), chl.number("MAXMSGL") or qm.qmgr_attr("MAXMSGL"),
                        chl.number("HBINT"), chl.number("SEQWRAP"), doubt[-1][1] if doubt else 0, self.reset_to,
                        chl.number("NPMSPEED"), chl.number("CONVERT") == F.MQCDC_SENDER_CONVERSION,
                        int(self.exits.get("SCYEXIT") is not None), self.pipelined)
        link.write(hello)
        await link.flush()
        ack = await link.next_event(30)
        if isinstance(ack, P.Close):
            raise ChannelError(ack.reason, f"the receiver refused the channel: {ack.text}")
        if not isinstance(ack, P.HelloAck):
            raise ChannelError(F.MQRCCF_RECEIVED_DATA_ERROR, f"expected HELLO_ACK, got {type(ack).__name__}")
        if ack.reason:
            raise ChannelError(ack.reason, f"the receiver refused the channel: {ack.text}")
        if not (0 < ack.batch_size <= hello.batch_size and 0 < ack.max_msg_length <= hello.max_msg_length):
            # Agreed means the smaller of both ends': more than asked (or 0) is a broken
            # partner, and a MAXMSGL of 0 would dead-letter every message as too big.
            raise ChannelError(F.MQRCCF_RECEIVED_DATA_ERROR,
                               f"the receiver agreed BATCHSZ {ack.batch_size} and MAXMSGL {ack.max_msg_length}, "
                               f"outside the {hello.batch_size} and {hello.max_msg_length} asked")
        self.reset_to = 0
        link.conn.agreed(ack.max_msg_length)
        row.rqmname, row.batchsz, row.maxmsgl, row.hbint = ack.qmgr, ack.batch_size, ack.max_msg_length, ack.heartbeat
        row.npmspeed = ack.npm_speed
        self.fast = ack.npm_speed == P.NPMS_FAST
        self.depth = PIPELINE_DEPTH if self.pipelined and ack.pipelined else 1
        self.convert_to = (ack.encoding, ack.ccsid) if ack.ccsid else None
        row.status, row.substate = F.MQCHS_RUNNING, F.MQCHSSTATE_OTHER
        row.started = stamp(time.time())
        row.short_left, row.long_left = chl.number("SHORTRTY"), chl.number("LONGRTY")
        row.error = ""
        self.max_msg_length = ack.max_msg_length
        self.exits.init(ack.qmgr, ack.max_msg_length)
        self.exits.attach(link.conn)
        await exchange(link, self.exits, receiver=False, partner_has_exit=bool(ack.security),
                       timeout=receive_timeout(ack.heartbeat))
        self.events.started(row.conname)
        log.info("event=channel_running channel=%s conname=%s batchsz=%d pipeline=%d", chl.name, row.conname,
                 ack.batch_size, self.depth)
        if doubt:  # the receiver's last committed batch says what became of ours
            outcomes = committed_at_receiver([seq for _, seq in doubt], ack.last_seq)
            for (xid, seq), committed in zip(doubt, outcomes, strict=True):
                qm.resolve(self.hconn, xid, committed)
                log.info("event=channel_resynchronised channel=%s seq=%d outcome=%s", chl.name, seq,
                         "commit" if committed else "backout")
            await self.host.durable(self.host.done())
            row.indoubt = False
        row.last_seq = row.cur_seq = ack.last_seq
        await self.transfer(link, ack)

    def next_seq(self, seq: int) -> int:
        return 1 if seq >= self.chl.number("SEQWRAP") else seq + 1

    def take(self, link: Link, limit: int, max_len: int, data_limit: int = 0) -> tuple[list[GetResult], int]:
        """Up to ``limit`` messages from the transmission queue: the batch's, got in the open
        unit of work, and how many were sent outside it; ``data_limit`` (bytes, 0: none):
        the batch's messages end with the one that reaches it (BATCHLIM). With NPMSPEED(FAST) agreed a
        non-persistent message is got outside the unit (MQGMO_SYNCPOINT_IF_PERSISTENT) and
        written at once as a FAST_MESSAGE, as IBM's agent sends it: no batch, no confirm,
        lost (never doubled) if the channel fails then. One longer than the channel's
        MAXMSGL goes to this queue manager's dead-letter queue, in the same unit as its get
        (MQRC_MSG_TOO_BIG_FOR_CHANNEL), as IBM's sending agent does."""
        got: list[GetResult] = []
        fast = size = 0
        gmo = GetOptions(options=_GET_FAST if self.fast else _GET, msg_handle=True)
        while len(got) + fast < limit and not (data_limit and size >= data_limit):
            # The gets of a run in one engine call, each as MQGET takes it; the run may
            # stop early (a message sent outside the batch, one dead-lettered): then again.
            run, stop = self.qm.get_many(self.hconn, self.hobj, _ANY_MD, gmo, _ANY_LENGTH, limit - len(got) - fast,
                                         data_limit - size if data_limit else _ANY_LENGTH)
            for res in run:
                outside = self.fast and res.md.persistence != C.MQPER_PERSISTENT
                if len(res.data) > max_len:
                    self.dead_letter(res, C.MQRC_MSG_TOO_BIG_FOR_CHANNEL, in_unit=not outside)
                    continue
                if outside:
                    data = self.through_exit(res, max_len, in_unit=False)
                    if data is not None:
                        link.write(self.outgoing(res, data, fast=True))
                        fast += 1
                else:
                    got.append(res)
                    size += len(res.data)
            if isinstance(stop, MQError) and stop.reason != C.MQRC_NO_MSG_AVAILABLE:
                raise stop
            if stop is not None or not run:
                break  # nothing more for now
        return got, fast

    def dead_letter(self, res: GetResult, reason: int, *, in_unit: bool = True) -> None:
        """Put a message of the transmission queue (its MQXQH kept) to the dead-letter queue
        behind an MQDLH naming its destination and ``reason``, in the open unit of work
        (``in_unit``), else at once, as its get was.

        Raises:
            ChannelError: the dead-letter queue refuses it too (the batch is backed out).
        """
        qm = self.qm
        try:
            xqh, _, _ = unpack_xmit(res.data)
            dest = xqh.remote_q_name.strip()
        except DecodeError:
            dest = self.chl.text("XMITQ")
        date, tod = qm.stamp_put(qm.clock.now())
        md, data = dead_letter(qm.name, qm.qmgr_attr("CCSID"), res.md, res.data, reason, dest, date, tod)
        dlq = str(qm.objects.qmgr.get("DEADQ", "") or "")
        log.warning("event=channel_dead_letter channel=%s reason=%d length=%d", self.chl.name, reason, len(res.data))
        try:
            qm.put1(self.hconn, ObjectDescriptor(object_name=dlq), md,
                    PutOptions(options=(C.MQPMO_SYNCPOINT if in_unit else C.MQPMO_NO_SYNCPOINT)
                               | C.MQPMO_SET_ALL_CONTEXT), data)
        except MQError as exc:
            raise ChannelError(exc.reason, f"a message of {len(res.data)} bytes to dead-letter ({reason}): the "
                                           f"dead-letter queue {dlq!r} refused it ({exc.reason})") from None

    async def transfer(self, link: Link, ack: P.HelloAck) -> None:
        chl, row = self.chl, self.row
        seq = ack.last_seq
        batch_int = chl.number("BATCHINT") / 1000
        data_limit = chl.number("BATCHLIM") * 1024
        disc, hb = chl.number("DISCINT"), ack.heartbeat
        idle_since = last_beat = time.monotonic()
        while not self.stop_requested.is_set():
            row.substate = F.MQCHSSTATE_IN_MQGET
            batch, fast = self.take(link, ack.batch_size, ack.max_msg_length, data_limit)
            if batch and len(batch) < ack.batch_size and batch_int > 0:
                deadline = time.monotonic() + batch_int
                while len(batch) < ack.batch_size and time.monotonic() < deadline:
                    room = data_limit - sum(len(res.data) for res in batch) if data_limit else 0
                    if data_limit and room <= 0:
                        break
                    await asyncio.sleep(min(IDLE_POLL, batch_int))
                    if link.gone():  # noticed while the batch fills, not only when it is sent
                        raise ChannelError(C.MQRC_CONNECTION_BROKEN, "the partner closed the connection while a "
                                           "batch was filling (BATCHINT)")
                    more, more_fast = self.take(link, ack.batch_size - len(batch), ack.max_msg_length, room)
                    batch += more
                    fast += more_fast
            if fast:
                self.host.done()
                await link.flush()
                row.msgs += fast
                row.bytes_sent, row.bytes_rcvd = link.sent, link.received
                if row.stats is not None:
                    row.stats.fast(fast, link.sent + link.received)
                row.last_msg = stamp(time.time())
                idle_since = last_beat = time.monotonic()
                if not batch:
                    await asyncio.sleep(0)  # drain() does not yield below its high-water mark
                    continue
            if not batch and self.unconfirmed:  # nothing to send meanwhile: wait for the batch out
                await self.confirmed(link)
                continue
            if not batch:
                if link.gone():  # a requester (or receiver) that went while idle: noticed now, not at the next heartbeat
                    raise ChannelError(C.MQRC_CONNECTION_BROKEN, "the partner closed the connection while the "
                                       "channel was idle")
                now = time.monotonic()
                if disc and now - idle_since >= disc:
                    link.write(P.Close(0, "disconnect interval"))
                    await link.flush()
                    return
                if hb and now - last_beat >= hb:
                    row.substate = F.MQCHSSTATE_HEARTBEATING
                    link.write(P.Heartbeat())
                    await link.flush()
                    beat = await link.next_event(receive_timeout(hb))
                    if not isinstance(beat, P.Heartbeat):
                        raise ChannelError(F.MQRCCF_RECEIVED_DATA_ERROR, "expected a heartbeat answer")
                    last_beat = time.monotonic()
                row.substate = F.MQCHSSTATE_OTHER
                await asyncio.sleep(IDLE_POLL)
                continue
            seq = self.next_seq(seq)
            await self.send_batch(link, batch, seq)
            if self.depth == 1:  # not pipelined: the next batch's messages only after this CONFIRM
                await self.confirmed(link)
            idle_since = last_beat = time.monotonic()
        while self.unconfirmed and self.stop_mode == F.MQMODE_QUIESCE:
            await self.confirmed(link)
        if self.stop_mode == F.MQMODE_QUIESCE:
            link.write(P.Close(0, "stopped"))
            await link.flush()

    def requeue(self, res: GetResult) -> Callable[[bytes], None]:
        """For the message exit: put ``data`` on the transmission queue with ``res``'s
        descriptor, in the batch's unit of work."""
        def put(data: bytes) -> None:
            self.qm.put(self.hconn, self.xmit_out(), res.md, PutOptions(options=_REQUEUE), data)
        return put

    def xmit_out(self) -> int:
        if not self.hobj_out:
            self.hobj_out = self.qm.open(self.hconn, ObjectDescriptor(object_name=self.chl.text("XMITQ")),
                                         C.MQOO_OUTPUT | C.MQOO_SET_ALL_CONTEXT).hobj
        return self.hobj_out

    def through_exit(self, res: GetResult, max_len: int, *, in_unit: bool = True) -> bytes | None:
        """The data to send for ``res`` after the message exit (if any); None when the exit
        suppressed it (it is then dead-lettered, in the batch's unit when ``in_unit``).

        Raises:
            ExitFailed: the exit failed or made the message longer than MAXMSGL;
            ExitClosed: it closed the channel.
        """
        data = self.converted(res)
        if self.exits is None or self.exits.get("MSGEXIT") is None:
            return data
        began = time.perf_counter()
        response, data, feedback = self.exits.message(data, self.requeue(res))
        if self.row.stats is not None:
            self.row.stats.exits.add(int((time.perf_counter() - began) * 1_000_000))
        if response == X.MQXCC_SUPPRESS_FUNCTION:
            self.dead_letter(res, feedback, in_unit=in_unit)
            return None
        if response == X.MQXCC_CLOSE_CHANNEL:
            raise ExitClosed(0, "the message exit closed the channel (MQXCC_CLOSE_CHANNEL)")
        if len(data) > max_len:
            raise ExitFailed(C.MQRC_MSG_TOO_BIG_FOR_CHANNEL, f"the message exit made a message of {len(data)} bytes, "
                                                             f"longer than the channel's MAXMSGL {max_len}")
        return data

    async def send_batch(self, link: Link, batch: list[GetResult], seq: int) -> None:
        row, qm = self.row, self.qm
        row.substate, row.cur_seq, row.cur_msgs = F.MQCHSSTATE_SENDING, seq, len(batch)
        sent = held = 0
        frames: list[bytes] = []
        for res in batch:
            data = self.through_exit(res, self.max_msg_length)
            if data is None:
                continue
            frame = link.frame(self.outgoing(res, data))
            del data
            frames.append(frame)
            held += len(frame)
            sent += 1
            if held >= _WRITE_AT:  # a message an exit made large is not kept waiting in the buffer
                await self.after_batch_end()
                link.write_frames(frames)
                frames.clear()
                held = 0
                await link.flush()
        await self.after_batch_end()
        link.write_frames(frames)
        await link.flush()
        while len(self.unconfirmed) >= self.depth:  # in doubt: never more than the depth agreed
            await self.confirmed(link)
        batch_hb = self.chl.number("BATCHHB")
        if batch_hb and (time.monotonic() - link.heard) * 1000 > batch_hb:
            await self.batch_heartbeat(link)
        xid = batch_xid(self.chl.name, seq)
        # Prepared and durable before the receiver is asked to commit: after a crash of
        # either end the XID tells what this batch was and the receiver's sequence number
        # whether it was committed there.
        qm.prepare(self.hconn, xid)
        row.indoubt = True
        row.substate = F.MQCHSSTATE_END_OF_BATCH
        sent_batch = SentBatch(seq, xid, sent)
        self.unconfirmed.append(sent_batch)
        self.ending = self.end_batch(link, sent_batch, self.host.done())

    def end_batch(self, link: Link, batch: SentBatch, lsn: int) -> asyncio.Future[None]:
        """Write ``batch``'s BATCH_END once its prepare (``lsn``) is durable: the receiver
        is asked to commit only what a crash here cannot undo. The agent does not wait for
        it meanwhile but gets and encodes the next batch, whose messages wait for the
        returned future (``after_batch_end``): done once the BATCH_END is written, or left
        unwritten because the session ended."""
        ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def write() -> None:
            if link is self.link and not link.writer.is_closing():
                batch.sent_at = time.monotonic()
                with contextlib.suppress(ChannelError):  # the next write or read fails the session
                    link.write(P.BatchEnd(batch.seq, batch.count))
            if not ended.done():
                ended.set_result(None)

        self.host.when_durable(lsn, write)
        return ended

    async def after_batch_end(self) -> None:
        """Wait until the last batch's BATCH_END is written: the next one's messages follow
        it on the wire (the receiver counts a batch's messages up to its BATCH_END)."""
        ending, self.ending = self.ending, None
        if ending is not None:
            await ending

    async def confirmed(self, link: Link) -> None:
        """The oldest batch out, committed here once its CONFIRM came.

        Raises:
            ChannelError: anything but its CONFIRM came (the batch stays in doubt);
            TimeoutError: nothing came within twice HBINT.
        """
        wait = receive_timeout(self.row.hbint)
        reply = await link.next_event(wait)
        while isinstance(reply, P.Heartbeat):
            reply = await link.next_event(wait)
        self.settle(reply, link)

    async def batch_heartbeat(self, link: Link) -> None:
        """BATCHHB: a heartbeat before the batch is prepared, and its answer (the CONFIRMs
        of batches out that come first are taken as they come).

        Raises:
            ChannelError, TimeoutError: no answer within twice HBINT; the caller's session
                fails with the batch not prepared (backed out), not in doubt.
        """
        self.row.substate = F.MQCHSSTATE_HEARTBEATING
        link.write(P.Heartbeat())
        await link.flush()
        wait = receive_timeout(self.row.hbint)
        reply = await link.next_event(wait)
        while not isinstance(reply, P.Heartbeat):
            self.settle(reply, link)
            reply = await link.next_event(wait)
        self.row.substate = F.MQCHSSTATE_END_OF_BATCH

    def settle(self, reply: P.Event, link: Link) -> None:
        """The oldest batch out committed here, ``reply`` being its CONFIRM.

        Raises:
            ChannelError: ``reply`` is anything else, or there is no batch out.
        """
        row = self.row
        done = self.unconfirmed[0] if self.unconfirmed else None
        if done is None or not isinstance(reply, P.Confirm) or reply.seq != done.seq or reply.reason:
            raise ChannelError(getattr(reply, "reason", 0) or F.MQRCCF_RECEIVED_DATA_ERROR,
                               f"batch {done.seq if done else '-'} not confirmed: {reply!r}")
        self.unconfirmed.popleft()
        self.qm.resolve(self.hconn, done.xid, True)
        self.host.done()
        row.indoubt = bool(self.unconfirmed)
        row.msgs += done.count
        row.batches += 1
        row.last_seq = done.seq
        if not self.unconfirmed:
            row.cur_msgs = 0
        row.bytes_sent, row.bytes_rcvd = link.sent, link.received
        stats = row.stats
        if stats is not None:
            stats.batch(done.count, done.count >= row.batchsz, link.sent + link.received)
            stats.net.add(int((time.monotonic() - done.sent_at) * 1_000_000))
        row.last_msg = stamp(time.time())

    def converted(self, res: GetResult) -> bytes:
        """A transmission-queue message's data as it crosses, before the message exit: with
        CONVERT(YES) the message (not its MQXQH) is converted to the receiving queue
        manager's CCSID and Encoding; one that does not convert goes as it is (the
        receiver's getters may still convert it), as IBM's sending agent sends it."""
        data = res.data
        if self.convert_to is not None:
            encoding, ccsid = self.convert_to
            data, reason = convert_xmit(data, encoding, ccsid, qmgr_ccsid=int(self.qm.qmgr_attr("CCSID")))
            if reason:
                log.warning("event=channel_conversion_error channel=%s reason=%d", self.chl.name, reason)
                self.events.conversion_error(reason, _format_of(res.data))
        return data

    def outgoing(self, res: GetResult, data: bytes, *, fast: bool = False) -> P.Message:
        """The frame of a transmission-queue message: ``data`` (converted, and as the
        message exit left it) and its properties."""
        return P.Message(data, props_model.pack(res.properties) if res.properties else b"", fast)


def _format_of(data: bytes) -> str:
    """The Format of a transmission-queue message's own MQMD (blank when it does not decode)."""
    try:
        return unpack_xmit(data)[0].msg_desc.format.strip()
    except DecodeError:
        return ""
