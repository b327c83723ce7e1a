"""The receiving message channel agent (CHLTYPE RCVR, RQSTR), one per inbound conversation.

HELLO names a channel defined here as RCVR or RQSTR (else CLOSE with
MQRCCF_UNKNOWN_REMOTE_CHANNEL); the answer carries the last committed sequence number from
the channel's synchronisation record on SYSTEM.CHANNEL.SYNCQ (a RESET from the sender
replaces it), and leaves only once that commit is durable: a sender resolves its batch in
doubt from it and deletes its copy. Each MESSAGE is put under the batch's unit of work to
the MQXQH's RemoteQName at RemoteQMgrName with the context it carries
(MQPMO_SET_ALL_CONTEXT), so a message for a further queue manager is routed on and COA/COD
are made where it arrives.
A put failing with a reason that may pass (TRANSIENT) is retried MRRTY times every MRTMR
milliseconds first; with a message-retry exit (MREXIT) the exit decides instead, for any
reason: it is called with ExitReason MQXR_RETRY, the MQXQH and message in its buffer, the
reason and MsgRetryCount in its MQCXP, and answers MQXCC_OK to be tried again after its
MsgRetryInterval (ms; MRTMR to start with), or MQXCC_SUPPRESS_FUNCTION to stop trying. It is
given MQXR_INIT and MQXR_TERM with the channel's other exits.
A message that cannot be put goes, in the same unit, to the dead-letter queue behind an
MQDLH with the reason (or is discarded with MQRO_DISCARD_MSG), with an exception report
when its Report asks for one. BATCH_END replaces the synchronisation record in the same
unit, commits, and CONFIRMs once the commit is durable.

Both answers that report a commit (HELLO_ACK's last sequence number, CONFIRM) go through
``tell_committed``, which sends them once the LSN that commit needs is durable, in the
order they were told: a sender that gave up waiting for a CONFIRM (a disk slower than
twice HBINT) and comes back at once must not read as committed a batch whose commit a
crash here could still undo. The agent does not wait for it meanwhile: the next batch's
messages (a pipelining sender sends them before that CONFIRM) are put while the commit is
written, and their commit joins the journal's next write (group commit).

The message exit (MSGEXIT, ferrymq.channels.exits) sees each message, MQXQH first, before
it is put: MQXCC_SUPPRESS_FUNCTION dead-letters it here as an undeliverable message (the
reason: the exit's Feedback, else MQFB_STOPPED_BY_MSG_EXIT), MQXCC_CLOSE_CHANNEL ends the
conversation; an exit that fails ends it too and leaves the channel STOPPED here (the
sender's HELLO is refused until START CHANNEL). The batch backs out in both cases: the
messages stay at the sender.

Security, as IBM's receiving MCA: with security on and the queue manager's CHLAUTH
ENABLED, the channel's authentication records (engine.chlauth: BLOCKADDR, QMGRMAP on the
sending queue manager's name, ADDRESSMAP, SSLPEERMAP) are checked at HELLO, and a channel
they block is refused with 2035 MQRC_NOT_AUTHORIZED. The user the channel runs as is the
MCAUSER of the USERSRC(MAP) record that matched, else the channel's MCAUSER; when there is
one, each message is put with that user's authority (alternate user authority: it needs
+put and +setall on the target queue, as IBM's PUTAUT(DEF) does), while the agent's own
work (the synchronisation record, the dead-letter queue, reports) stays the queue
manager's. The channel's PUTAUT chooses whose authority instead: CTX the UserIdentifier
the message carries (blank: as DEF), ALTMCA the same, ONLYMCA as DEF (``put_user``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import struct
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import NamedTuple

from ferrymq.channels.events import ChannelEvents, ended_qualifier
from ferrymq.channels.exits import ChannelExits, ExitClosed, ExitFailed, ExitSettings
from ferrymq.channels.host import EngineHost
from ferrymq.channels.link import ChannelError, Link, receive_timeout
from ferrymq.channels.security import Refused, exchange
from ferrymq.engine import chlattrs as K
from ferrymq.engine import chlauth
from ferrymq.engine.api import GetOptions, GetResult, ObjectDescriptor, PutOptions
from ferrymq.engine.chlcontrol import ChannelStatus
from ferrymq.engine.deadletter import dead_letter
from ferrymq.engine.distlist import apply_record
from ferrymq.engine.objects import stamp
from ferrymq.engine.qmgr import QueueManager
from ferrymq.engine.reports import _EXCEPTION, data_amount, report_descriptor
from ferrymq.errors import DecodeError, MQError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.mq import cxc as X
from ferrymq.properties import model as props_model
from ferrymq.protocol import channel as P
from ferrymq.protocol.errors import LocalProtocolError, RemoteProtocolError
from ferrymq.tls import names, rules
from ferrymq.wire import mqdh
from ferrymq.wire.headers import report_data
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.mqxqh import pack_xmit, unpack_xmit

log = logging.getLogger("ferrymq.channels")

SYNCQ = "SYSTEM.CHANNEL.SYNCQ"
_SYNC = struct.Struct(">8sI48s")
_SYNC_ID = b"FMQSYNC1"
_PUT = C.MQPMO_SYNCPOINT | C.MQPMO_SET_ALL_CONTEXT
_FAST_PUT = C.MQPMO_NO_SYNCPOINT | C.MQPMO_SET_ALL_CONTEXT  # a FAST_MESSAGE: at once, outside the batch
_OWN_PUT = C.MQPMO_SYNCPOINT
# Put failures that may pass (the queue full or put-inhibited for a while): retried MRRTY
# times every MRTMR milliseconds before the message is dead-lettered, as IBM's agent does
# without a message-retry exit (MREXIT, which decides for every reason when there is one).
# Any other reason dead-letters it at once.
TRANSIENT = frozenset({C.MQRC_Q_FULL, C.MQRC_PUT_INHIBITED})
# The put options of a message, by (its options, whether a user's authority puts it): made
# once, not per message.
_PUT_OPTIONS = {(options, alt): PutOptions(options | (C.MQPMO_ALTERNATE_USER_AUTHORITY if alt else 0))
                for options in (_PUT, _FAST_PUT) for alt in (False, True)}


def sync_correl_id(channel: str) -> bytes:
    """The CorrelId of a channel's synchronisation record: its name, blank-padded."""
    return channel.encode("ascii").ljust(24)


def read_sync(qm_get: Callable[[MQMD, GetOptions], GetResult], channel: str) -> int:
    """The last committed sequence number in ``channel``'s record (0: none yet)."""
    try:
        res = qm_get(MQMD(correl_id=sync_correl_id(channel)), GetOptions(options=C.MQGMO_BROWSE_FIRST | C.MQGMO_NO_WAIT,
                                                                          match_options=C.MQMO_MATCH_CORREL_ID))
    except MQError as exc:
        if exc.reason == C.MQRC_NO_MSG_AVAILABLE:
            return 0
        raise
    if len(res.data) < _SYNC.size or res.data[:8] != _SYNC_ID:
        return 0
    return int(_SYNC.unpack_from(res.data)[1])


class Committed(NamedTuple):
    """A channel's last committed batch and the journal LSN its commit needs (0: none)."""

    seq: int
    lsn: int


def check_records(qm: QueueManager, channel: str, partner_qmgr: str, peer: str,
                  tls_peer: names.TLSPeer | None) -> tuple[str, str]:
    """A message channel's authentication records for the partner that started it here
    (module docstring): a sender's HELLO at a receiver, and a requester's REQUEST at the
    server or sender it names, are checked alike, as IBM checks every inbound channel.
    ``peer``: the listener's "host(port)"; ``tls_peer``: what the TLS handshake learnt of
    the partner (its DNs for SSLPEERMAP). Returns why the records block it ("" if they do
    not) and the MCAUSER of the USERSRC(MAP) record that matched ("" for none). Channel
    Blocked events (CHLEV) and the log say which record."""
    oam = qm.state.authority
    if not oam.enabled or qm.state.qmgr_attr("CHLAUTH") != F.MQCHLA_ENABLED:
        return "", ""
    address = peer.partition("(")[0]
    partner = chlauth.Partner(channel, F.MQCHT_RECEIVER, address, qmname=partner_qmgr,
                              peer_dn=tls_peer.dn if tls_peer is not None else "",
                              issuer_dn=tls_peer.issuer_dn if tls_peer is not None else "")
    decision = chlauth.resolve(oam.chlauth.records, partner, oam.is_admin)
    for qualifier, rec in decision.warnings:
        log.warning("event=channel_blocked_warning channel=%s peer=%s qmgr=%s qualifier=%d rule=%r", channel,
                    peer, partner_qmgr, qualifier, chlauth.describe(rec))
        qm.events.channel_blocked(qualifier, channel, address, warning=True, remote_qmgr=partner_qmgr)
    if decision.refused:
        assert decision.record is not None
        qm.events.channel_blocked(decision.refused, channel, address, remote_qmgr=partner_qmgr)
        return (f"channel {channel} from {partner_qmgr} at {address} blocked by {chlauth.describe(decision.record)}",
                "")
    return "", decision.user


class ReceiverAgent:
    """One inbound channel conversation (see the module docstring)."""

    def __init__(self, host: EngineHost, link: Link, peer: str, rows: dict[str, ChannelStatus],
                 running: dict[str, ReceiverAgent], stopped: set[str], committed: dict[str, Committed],
                 exit_settings: ExitSettings | None = None, *, pipelined: bool = False) -> None:
        """``pipelined``: this queue manager's PipeLineLength is above 1 (it agrees to a
        sender's pipelining; the agent itself works alike either way)."""
        self.host, self.qm = host, host.qmgr
        self.exit_settings = exit_settings or ExitSettings(host.qmgr.name)
        self.exits: ChannelExits | None = None
        self.link = link
        self.peer = peer
        self.rows, self.running, self.stopped = rows, running, stopped
        # The last batch committed per channel while this process runs: ahead of the record
        # on SYSTEM.CHANNEL.SYNCQ after batches of non-persistent messages only.
        self.committed = committed
        self.name = ""
        self.hconn = self.sync_hobj = 0
        self.row: ChannelStatus | None = None
        self.in_batch = 0
        self.partner_security = False  # the sender has a security exit (HELLO)
        self.persistent_in_batch = 0
        self.fast = False  # NPMSPEED(FAST) agreed
        self.events: ChannelEvents | None = None  # once the channel is accepted
        self.failure: tuple[int, str] | None = None  # why the conversation failed (reason, text)
        self.mcauser = ""  # the user whose authority puts each message (blank: the agent's own)
        self.putaut = F.MQPA_DEFAULT  # the channel's PUTAUT, taken at HELLO
        self.retry = (0, 0)  # the channel's MRRTY and MRTMR (ms), taken at HELLO
        self.pipelined = pipelined
        # Destinations opened during the batch, by (queue, queue manager, user putting): one
        # MQOPEN each per batch, not per message; closed when the batch commits, so that between
        # batches the agent holds nothing open (DELETE and CLEAR QLOCAL go on).
        self.opened: dict[tuple[str, str, str], int] = {}
        # Answers reporting commits, oldest first, each with whether its commit is durable yet.
        self.telling: deque[tuple[P.HelloAck | P.Confirm, asyncio.Future[None]]] = deque()

    def abort(self) -> None:
        """End now: what this batch put is backed out (the sender sends it again)."""
        self.link.close()
        self.release()

    def release(self) -> None:
        if self.exits is not None:
            self.exits.term()
            self.exits = None
        if self.hconn and self.hconn in self.qm.connections:
            self.qm.backout(self.hconn)
            self.qm.disconnect(self.hconn)  # closes what the batch had open
            self.host.done()
        self.hconn = 0
        self.opened.clear()
        if self.events is not None:  # STOP CHANNEL, the partner's close, or a failure
            self.events.stopped(ended_qualifier(self.name in self.stopped, self.failure is not None),
                                *(self.failure or (0, "")))
        if self.name and self.running.get(self.name) is self:
            del self.running[self.name]
            if self.row is not None:
                self.row.status = F.MQCHS_STOPPED if self.name in self.stopped else F.MQCHS_INACTIVE

    async def run(self, first: P.Event | None = None) -> None:
        """``first``: the conversation's first frame, when the caller read it already."""
        try:
            hello = first if first is not None else await self.link.next_event(30)
            if isinstance(hello, P.Ping):
                self.answer_ping(hello)
                await self.link.flush()
                return
            if not isinstance(hello, P.Hello):
                return
            if not await self.accept(hello):
                await self.link.flush()
                return
            await self.serve()
        except ExitFailed as exc:
            log.error("event=channel_exit_failed channel=%s reason=%d error=%s", self.name, exc.reason, exc)
            self.stopped.add(self.name)  # START CHANNEL here once the exit is mended
            self.close_with(exc)
        except ExitClosed as exc:
            log.warning("event=channel_closed_by_exit channel=%s detail=%s", self.name, exc)
            if isinstance(exc, Refused):  # the exchange told the sender already
                if self.row is not None:
                    self.row.error = str(exc)
            else:
                self.close_with(exc)
        except (OSError, ChannelError, TimeoutError, RemoteProtocolError) as exc:
            log.info("event=receiver_ended channel=%s peer=%s error=%s", self.name or "?", self.peer, str(exc))
            self.failure = (getattr(exc, "reason", C.MQRC_CONNECTION_BROKEN), str(exc) or type(exc).__name__)
        except MQError as exc:
            log.warning("event=receiver_failed channel=%s reason=%d detail=%s", self.name, exc.reason, exc.detail)
            self.failure = (exc.reason, exc.detail)
        finally:
            self.link.close()
            self.release()

    def close_with(self, exc: ChannelError) -> None:
        """Tell the sender why the conversation ends (the batch is backed out here)."""
        if self.row is not None:
            self.row.error = str(exc)
        with contextlib.suppress(ChannelError, LocalProtocolError):
            self.link.write(P.Close(exc.reason, str(exc)))

    def refuse(self, reason: int, text: str) -> bool:
        self.link.write(P.HelloAck(reason, self.qm.name, 0, 0, 0, 0, text))
        log.warning("event=channel_refused channel=%s peer=%s reason=%d %s", self.name, self.peer, reason, text)
        return False

    def answer_ping(self, ping: P.Ping) -> None:
        """PING CHANNEL from the partner: its data back when the channel is defined here as
        a receiver and not stopped, else the reason, as the answer to a HELLO would say it.
        Nothing else happens: a conversation of this channel that runs goes on."""
        chl = self.qm.state.channels.find(ping.channel)
        reason = 0
        if chl is None or chl.chltype not in K.RECEIVING:
            reason = F.MQRCCF_UNKNOWN_REMOTE_CHANNEL
        elif ping.channel in self.stopped:
            reason = F.MQRCCF_CHANNEL_DISABLED
        else:  # a ping is held to the channel's TLS rules as its sender would be
            tls = self.link.writer.get_extra_info("ssl_object")
            refused = rules.refusal(chl.name, chl.text("SSLCIPH"), chl.number("SSLCAUTH"), chl.text("SSLPEER"),
                                    names.peer_of(tls) if tls is not None else None)
            if refused is not None:
                reason = C.MQRC_CHANNEL_SSL_ERROR
                log.warning("event=channel_ping_refused channel=%s peer=%s reason=%d %s: %s", ping.channel,
                            self.peer, reason, *refused)
        self.link.write(P.PingAck(reason, self.qm.name, b"" if reason else ping.data))
        log.info("event=channel_pinged channel=%s peer=%s bytes=%d reason=%d", ping.channel, self.peer,
                 len(ping.data), reason)

    async def accept(self, hello: P.Hello) -> bool:
        qm = self.qm
        self.name = hello.channel
        chl = qm.state.channels.find(hello.channel)
        if chl is None or chl.chltype not in K.RECEIVING:
            return self.refuse(F.MQRCCF_UNKNOWN_REMOTE_CHANNEL,
                               f"channel {hello.channel} is not defined at {qm.name} as a receiver")
        tls = self.link.writer.get_extra_info("ssl_object")
        tls_peer = names.peer_of(tls) if tls is not None else None
        refused = rules.refusal(chl.name, chl.text("SSLCIPH"), chl.number("SSLCAUTH"), chl.text("SSLPEER"), tls_peer)
        if refused is not None:
            ChannelEvents(self.host, hello.channel).ssl_error(rules.QUALIFIER[refused[0]], self.peer,
                                                              peer_name=tls_peer.dn if tls_peer is not None else "")
            return self.refuse(C.MQRC_CHANNEL_SSL_ERROR, f"{refused[0]}: {refused[1]}")
        if hello.channel in self.stopped:
            return self.refuse(F.MQRCCF_CHANNEL_DISABLED, f"channel {hello.channel} is stopped at {qm.name}")
        self.putaut = chl.number("PUTAUT")
        self.retry = (chl.number("MRRTY"), chl.number("MRTMR"))
        blocked = self.check_records(hello, chl.text("MCAUSER").strip(), tls_peer)
        if blocked:
            return self.refuse(C.MQRC_NOT_AUTHORIZED, blocked)
        try:
            exits = ChannelExits.load(chl, self.exit_settings)
        except ExitFailed as exc:
            log.error("event=channel_exit_failed channel=%s reason=%d error=%s", hello.channel, exc.reason, exc)
            return self.refuse(exc.reason, str(exc))
        old = self.running.get(hello.channel)
        if old is not None:  # the sender started again: the old conversation is dead
            old.abort()
        self.running[hello.channel] = self
        self.hconn = qm.connect(appl_name=f"ferrymq channel {hello.channel}"[:28], user="ferrymq",
                                appl_type=C.MQAT_QMGR)
        self.sync_hobj = qm.open(self.hconn, ObjectDescriptor(object_name=SYNCQ),
                                 C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT).hobj
        done = self.committed.get(hello.channel)
        if done is None:  # none committed by a receiver of this process: the record as recovered,
            # durable, unless something else wrote it since: then once all staged so far is
            done = Committed(read_sync(lambda md, gmo: self._get(self.sync_hobj, md, gmo), hello.channel),
                             qm.journal.appended_lsn)
        if hello.reset_to:
            self.write_sync(hello.reset_to - 1, hello.qmgr)
            qm.commit(self.hconn)
            done = Committed(hello.reset_to - 1, self.host.done())
        self.committed[hello.channel] = done
        last = done.seq
        batch, maxmsgl, hb = P.negotiate(hello, chl.number("BATCHSZ"), chl.number("MAXMSGL") or qm.qmgr_attr("MAXMSGL"),
                                         chl.number("HBINT"))
        speed = P.npm_speed(hello, chl.number("NPMSPEED"))
        self.fast = speed == P.NPMS_FAST
        # A sender with CONVERT(YES) converts what it sends to this queue manager's CCSID and
        # its native encoding (the one every structure here is written in).
        ccsid, encoding = (int(qm.qmgr_attr("CCSID")), C.MQENC_NATIVE) if hello.asks_ccsid else (0, 0)
        self.partner_security = bool(hello.security)
        await self.tell_committed(P.HelloAck(0, qm.name, batch, maxmsgl, hb, last, npm_speed=speed, ccsid=ccsid,
                                             encoding=encoding, security=int(exits.get("SCYEXIT") is not None),
                                             pipelined=self.pipelined and hello.pipelined), done)
        if self.running.get(hello.channel) is not self:  # a newer conversation took over meanwhile
            return False
        self.link.conn.agreed(maxmsgl)
        self.row = row = ChannelStatus(hello.channel, K.CHLTYPES[chl.chltype], F.MQCHS_RUNNING, conname=self.peer,
                                       rqmname=hello.qmgr, batchsz=batch, maxmsgl=maxmsgl, hbint=hb,
                                       last_seq=last, cur_seq=last, started=stamp(time.time()), npmspeed=speed,
                                       tls=tls_peer, stats=qm.monitor.channel_counts(hello.channel))
        self.rows[hello.channel] = row
        self.heartbeat = hb
        self.exits = exits
        exits.init(hello.qmgr, maxmsgl)
        exits.attach(self.link.conn)
        self.events = ChannelEvents(self.host, hello.channel)
        self.events.started(self.peer)
        return True

    def tell_committed(self, answer: P.HelloAck | P.Confirm, done: Committed) -> asyncio.Future[None]:
        """Send ``answer``, which reports ``done`` as committed, once that commit is durable
        and every answer told before it is sent (module docstring): the one way a commit
        is reported to the sender. The future is done when it is written."""
        durable: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.telling.append((answer, durable))

        def release() -> None:
            if not durable.done():
                durable.set_result(None)
            while self.telling and self.telling[0][1].done():
                told, _ = self.telling.popleft()
                if self.link.writer.is_closing():  # the sender asks again when it comes back
                    continue
                with contextlib.suppress(ChannelError):
                    self.link.write(told)

        self.host.when_durable(done.lsn, release)
        return durable

    def check_records(self, hello: P.Hello, channel_user: str, tls_peer: names.TLSPeer | None) -> str:
        """The channel's authentication records at HELLO (``check_records``): why they
        block it, or "" with ``mcauser`` set to the user it runs as."""
        blocked, user = check_records(self.qm, hello.channel, hello.qmgr, self.peer, tls_peer)
        self.mcauser = user or channel_user
        return blocked

    def _get(self, hobj: int, md: MQMD, gmo: GetOptions) -> GetResult:
        res = self.qm.get(self.hconn, hobj, md, gmo, 4096)
        assert isinstance(res, GetResult)
        return res

    def write_sync(self, seq: int, sender_qmgr: str) -> None:
        """Replace the channel's synchronisation record inside the open unit of work."""
        try:
            self._get(self.sync_hobj, MQMD(correl_id=sync_correl_id(self.name)),
                      GetOptions(options=C.MQGMO_SYNCPOINT | C.MQGMO_NO_WAIT, match_options=C.MQMO_MATCH_CORREL_ID))
        except MQError as exc:
            if exc.reason != C.MQRC_NO_MSG_AVAILABLE:
                raise
        md = MQMD(correl_id=sync_correl_id(self.name), persistence=C.MQPER_PERSISTENT)
        self.qm.put(self.hconn, self.sync_hobj, md, PutOptions(options=_OWN_PUT),
                    _SYNC.pack(_SYNC_ID, seq, sender_qmgr.encode("ascii", "replace")[:48].ljust(48)))

    async def serve(self) -> None:
        link, row = self.link, self.row
        assert row is not None and self.exits is not None
        await link.flush()
        await exchange(link, self.exits, receiver=True, partner_has_exit=self.partner_security,
                       timeout=receive_timeout(self.heartbeat))
        idle = max(self.heartbeat, 1) * 2 + 60
        while True:
            ev = await link.next_event(idle)
            if isinstance(ev, P.Message) and ev.fast:
                if not self.fast:
                    raise ChannelError(F.MQRCCF_RECEIVED_DATA_ERROR, "a FAST_MESSAGE, but NPMSPEED(NORMAL) was agreed")
                await self.receive(ev.data, ev.properties, fast=True)
                self.host.done()
                row.msgs += 1
                if row.stats is not None:
                    row.stats.fast(1, link.sent + link.received)
                row.last_msg = stamp(time.time())
            elif isinstance(ev, P.Message):
                row.substate = F.MQCHSSTATE_IN_MQPUT
                # The batch's messages that came in the same read: put together (receive_all)
                messages = [(ev.data, ev.properties)]
                pending = link.pending
                while pending and isinstance(pending[0], P.Message) and not pending[0].fast:
                    more = pending.popleft()
                    assert isinstance(more, P.Message)
                    messages.append((more.data, more.properties))
                await self.receive_all(messages)
                self.in_batch += len(messages)
            elif isinstance(ev, P.BatchEnd):
                row.substate = F.MQCHSSTATE_END_OF_BATCH
                if ev.count != self.in_batch:
                    raise ChannelError(F.MQRCCF_RECEIVED_DATA_ERROR,
                                       f"batch {ev.seq} announced {ev.count} messages, {self.in_batch} arrived")
                # A batch of non-persistent messages only needs no record: lost in a crash, its
                # messages are gone at both ends, and a batch in doubt (prepared with persistent
                # messages) always wrote one; so it costs no disk write here either.
                if self.persistent_in_batch:
                    self.write_sync(ev.seq, row.rqmname)
                self.qm.commit(self.hconn)
                self.close_opened()
                done = self.committed[self.name] = Committed(ev.seq, self.host.done())
                self.tell_committed(P.Confirm(ev.seq), done)
                await asyncio.sleep(0)  # the journal's writer starts on that commit before the next batch
                row.msgs += self.in_batch
                row.batches += 1
                if row.stats is not None:
                    row.stats.batch(self.in_batch, self.in_batch >= row.batchsz, link.sent + link.received)
                row.last_seq = row.cur_seq = ev.seq
                row.last_msg = stamp(time.time())
                row.bytes_sent, row.bytes_rcvd = link.sent, link.received
                row.substate = F.MQCHSSTATE_RECEIVING
                self.in_batch = self.persistent_in_batch = 0
            elif isinstance(ev, P.Heartbeat):
                link.write(P.Heartbeat(ack=True))
                await link.flush()
            elif isinstance(ev, P.Close):
                return

    def destination(self, queue: str, qmgr: str, user: str) -> int:
        """The batch's handle for putting to ``queue`` at ``qmgr`` with ``user``'s authority
        (blank: the agent's own), opened as MQPUT1 would open it (SET_ALL_CONTEXT).

        Raises:
            MQError: MQOPEN's reason (nothing is kept open then).
        """
        hobj = self.opened.get((queue, qmgr, user))
        if hobj is None:
            options = C.MQOO_OUTPUT | C.MQOO_SET_ALL_CONTEXT | (C.MQOO_ALTERNATE_USER_AUTHORITY if user else 0)
            hobj = self.qm.open(self.hconn, ObjectDescriptor(object_name=queue, object_q_mgr_name=qmgr,
                                                             alternate_user_id=user), options).hobj
            self.opened[queue, qmgr, user] = hobj
        return hobj

    def close_opened(self) -> None:
        for hobj in self.opened.values():
            with contextlib.suppress(MQError):  # already gone with its queue
                self.qm.close(self.hconn, hobj)
        self.opened.clear()

    async def receive(self, data: bytes, packed_properties: bytes = b"", *, fast: bool = False) -> None:
        """Put one message where its MQXQH says, or dead-letter it: inside the batch's unit,
        or at once for a FAST_MESSAGE (which must be non-persistent).

        Raises:
            ChannelError: as ``receive_all``.
        """
        await self.receive_all([(data, packed_properties)], fast=fast)

    async def receive_all(self, messages: Sequence[tuple[bytes, bytes]], *, fast: bool = False) -> None:
        """Put messages (data, packed properties) in order where their MQXQHs say, or
        dead-letter them, as ``receive`` one by one would. Consecutive messages for one
        destination without properties (a batch's usual shape) are put with one engine call
        (``put_run``).

        Raises:
            ChannelError: an unreadable MQXQH, or a message neither its queue nor the
                dead-letter queue takes (the batch is backed out and the channel ends).
        """
        options = _FAST_PUT if fast else _PUT
        run: list[tuple[MQMD, bytes]] = []
        dest = ("", "", "")
        for data, packed_properties in messages:
            dest_q, dest_qm, md, body, properties, feedback = self.unwrap(data, packed_properties, fast)
            if feedback is None and properties is None and not fast and md.format.rstrip() != mqdh.FORMAT:
                key = (dest_q, dest_qm, self.put_user(md))
                if key != dest and run:
                    await self.put_run(dest, run)
                    run = []
                dest = key
                run.append((md, body))
                continue
            if run:  # the messages before this one are put before it
                await self.put_run(dest, run)
                run = []
            await self.receive_one(dest_q, dest_qm, md, body, options, properties, fast, feedback)
        if run:
            await self.put_run(dest, run)

    def unwrap(self, data: bytes, packed_properties: bytes,
               fast: bool) -> tuple[str, str, MQMD, bytes, props_model.PropertySet | None, int | None]:
        """A message as the sender sent it, after the message exit: its destination queue and
        queue manager, descriptor, data and properties, and the exit's feedback when it
        suppressed the message (None otherwise).

        Raises:
            ChannelError: an unreadable MQXQH or properties, a persistent FAST_MESSAGE, or
                the message exit closed the channel.
        """
        original = data
        response, feedback = X.MQXCC_OK, C.MQFB_NONE
        if self.exits is not None and self.exits.get("MSGEXIT") is not None:
            began = time.perf_counter()
            response, data, feedback = self.exits.message(data)
            if self.row is not None and self.row.stats is not None:
                self.row.stats.exits.add(int((time.perf_counter() - began) * 1_000_000))
            if response == X.MQXCC_CLOSE_CHANNEL:
                raise ExitClosed(0, "the message exit closed the channel (MQXCC_CLOSE_CHANNEL)")
            if response == X.MQXCC_SUPPRESS_FUNCTION:
                data = original
        try:
            xqh, md, at = unpack_xmit(data)
        except DecodeError as exc:
            raise ChannelError(C.MQRC_XQH_ERROR, f"a message without a valid MQXQH: {exc}") from None
        del original
        body = data[at:]
        if md.persistence == C.MQPER_PERSISTENT:
            if fast:
                raise ChannelError(F.MQRCCF_RECEIVED_DATA_ERROR, "a persistent message sent outside the batch")
            self.persistent_in_batch += 1
        try:
            properties = props_model.unpack(packed_properties) if packed_properties else None
        except DecodeError as exc:
            raise ChannelError(F.MQRCCF_RECEIVED_DATA_ERROR, f"unreadable message properties: {exc}") from None
        return (xqh.remote_q_name.strip(), xqh.remote_q_mgr_name.strip(), md, body, properties,
                feedback if response == X.MQXCC_SUPPRESS_FUNCTION else None)

    async def receive_one(self, dest_q: str, dest_qm: str, md: MQMD, body: bytes, options: int,
                          properties: props_model.PropertySet | None, fast: bool, feedback: int | None) -> None:
        """Put one unwrapped message (each copy of one behind an MQDH), or dead-letter it
        (suppressed by the message exit: ``feedback``).

        Raises:
            ChannelError: neither its queue nor the dead-letter queue takes it.
        """
        if feedback is not None:
            log.warning("event=channel_message_suppressed channel=%s queue=%s feedback=%d", self.name, dest_q, feedback)
            self.undeliverable(md, body, feedback, dest_q, dest_qm, options)
            return
        if md.format.rstrip() == mqdh.FORMAT:  # several destinations here: one copy each
            try:
                copies = self.split(md, body)
            except DecodeError as exc:  # the whole message to the dead-letter queue, as IBM's agent
                log.warning("event=channel_dh_error channel=%s error=%s", self.name, str(exc))
                self.undeliverable(md, body, C.MQRC_DH_ERROR, dest_q, dest_qm, options)
                return
            for dest_q, dest_qm, md_i, body_i in copies:
                await self.deliver(dest_q, dest_qm, md_i, body_i, options, properties, fast)
            return
        await self.deliver(dest_q, dest_qm, md, body, options, properties, fast)

    async def put_run(self, dest: tuple[str, str, str], run: list[tuple[MQMD, bytes]]) -> None:
        """Put a batch's messages for one destination (queue, queue manager, user putting)
        with one engine call, each as ``deliver`` puts it; one that is refused goes on
        through ``deliver`` (retried, or dead-lettered) before the next is put.

        Raises:
            ChannelError: as ``deliver``.
        """
        dest_q, dest_qm, user = dest
        put = _PUT_OPTIONS[_PUT, bool(user)]
        at = 0
        while at < len(run):
            refused: MQError | None
            try:
                hobj = self.destination(dest_q, dest_qm, user)
            except MQError as exc:
                done, refused = 0, exc
            else:
                done, refused = self.qm.put_each(self.hconn, hobj, put, run, at)
            at += done
            if refused is not None:
                md, body = run[at]
                await self.deliver(dest_q, dest_qm, md, body, _PUT, None, False, refused.reason)
                at += 1

    def split(self, md: MQMD, body: bytes) -> list[tuple[str, str, MQMD, bytes]]:
        """The copies a message behind an MQDH stands for (engine.distlist): per object record
        the original descriptor with its put-message record's fields (a new MsgId each with
        MQDHF_NEW_MSG_IDS), and the data after the records in the MQDH's format.

        Raises:
            DecodeError: an MQDH that cannot be read.
        """
        dh = mqdh.MQDH.unpack_from(body)
        data = body[dh.struc_length:]
        base = md.replace(format=dh.format, encoding=dh.encoding, coded_char_set_id=dh.coded_char_set_id)
        out = []
        for i, obj in enumerate(dh.objects):
            pmr = dh.put_msg_recs[i] if i < len(dh.put_msg_recs) else None
            md_i = apply_record(base, dh.put_msg_rec_fields, pmr)
            if dh.flags & C.MQDHF_NEW_MSG_IDS:
                md_i = md_i.with_msg_id(self.qm.new_id())
            out.append((obj.object_name.strip(), obj.object_q_mgr_name.strip(), md_i, data))
        return out

    async def deliver(self, dest_q: str, dest_qm: str, md: MQMD, body: bytes, options: int,
                      properties: props_model.PropertySet | None, fast: bool, refused: int = 0) -> None:
        """Put one message to ``dest_q`` at ``dest_qm`` (retried while its queue may take it
        later), or dead-letter it (``undeliverable``). ``refused``: the reason its first
        put just failed with (``put_run``), 0 when it is still to be tried.

        Raises:
            ChannelError: neither its queue nor the dead-letter queue takes it.
        """
        qm = self.qm
        # The put is the user's PUTAUT names to make (alternate user authority).
        user = self.put_user(md)
        put = _PUT_OPTIONS[options, bool(user)]
        retries, calls = self.retry[0], 0
        reason = refused
        while True:
            if not reason:
                try:
                    if fast:
                        qm.put1(self.hconn, ObjectDescriptor(object_name=dest_q, object_q_mgr_name=dest_qm,
                                                             alternate_user_id=user), md, put, body, properties)
                    else:
                        qm.put(self.hconn, self.destination(dest_q, dest_qm, user), md, put, body, properties)
                    return
                except MQError as exc:
                    reason = exc.reason
            if self.exits is not None and self.exits.retries():
                # MREXIT decides, for every reason: how long to wait, or to stop trying
                calls += 1
                wait = self.exits.retry(pack_xmit(dest_q, dest_qm, md) + body, calls, reason, self.retry[1])
                if wait is None:
                    break
                log.info("event=channel_message_retry channel=%s queue=%s reason=%d exit_call=%d wait_ms=%d",
                         self.name, dest_q, reason, calls, wait)
                await asyncio.sleep(wait / 1000)
                reason = 0
                continue
            if reason not in TRANSIENT or retries <= 0:
                break
            retries -= 1  # MRRTY/MRTMR: the queue may take it a moment later
            if self.row is not None and self.row.stats is not None:
                self.row.stats.put_retries += 1
            log.info("event=channel_message_retry channel=%s queue=%s reason=%d left=%d", self.name, dest_q,
                     reason, retries)
            await asyncio.sleep(self.retry[1] / 1000)
            reason = 0
        self.undeliverable(md, body, reason, dest_q, dest_qm, options)

    def undeliverable(self, md: MQMD, body: bytes, reason: int, dest_q: str, dest_qm: str, options: int) -> None:
        """A message its destination did not take: an exception report when asked, then the
        dead-letter queue behind an MQDLH with the reason (or nothing, MQRO_DISCARD_MSG).

        Raises:
            ChannelError: the dead-letter queue refused it too.
        """
        qm = self.qm
        log.info("event=channel_undeliverable channel=%s queue=%s qmgr=%s reason=%d", self.name, dest_q, dest_qm, reason)
        if md.report & C.MQRO_EXCEPTION:
            self.exception_report(md, body, reason, options)
        if md.report & C.MQRO_DISCARD_MSG:
            return
        now = qm.clock.now()
        date, tod = qm.stamp_put(now)
        dl_md, dl_data = dead_letter(qm.name, qm.qmgr_attr("CCSID"), md, body, reason, dest_q, date, tod)
        dlq = str(qm.objects.qmgr.get("DEADQ", "") or "")
        try:
            qm.put1(self.hconn, ObjectDescriptor(object_name=dlq), dl_md, PutOptions(options=options), dl_data)
        except MQError as exc:
            raise ChannelError(exc.reason, f"message for {dest_q} at {dest_qm} ({reason}) and the dead-letter "
                                           f"queue {dlq!r} refused it too ({exc.reason})") from None
        log.warning("event=message_dead_lettered channel=%s queue=%s qmgr=%s dlq=%s reason=%d msg_id=%s length=%d",
                    self.name, dest_q, dest_qm, dlq, reason, md.msg_id.hex(), len(body))

    def put_user(self, md: MQMD) -> str:
        """Whose authority puts ``md``'s message (blank: the agent's own): PUTAUT(CTX) and
        ALTMCA the message's UserIdentifier when it has one, else (and for DEF, ONLYMCA) the
        user the channel runs as."""
        if self.putaut in (F.MQPA_CONTEXT, F.MQPA_ALTERNATE_OR_MCA):
            return md.user_identifier.strip() or self.mcauser
        return self.mcauser

    def exception_report(self, md: MQMD, body: bytes, reason: int, options: int) -> None:
        """The agent's exception report (Feedback: the reason) to ReplyToQ at ReplyToQMgr,
        which may be back across a channel."""
        qm = self.qm
        reply_q, reply_qm = md.reply_to_q.strip(), md.reply_to_q_mgr.strip()
        if not reply_q:
            return
        date, tod = qm.stamp_put(qm.clock.now())
        rmd = report_descriptor(md, reason, qm.new_id(), C.MQEI_UNLIMITED, qm.name, date, tod)
        amount = data_amount(md.report, _EXCEPTION)
        try:
            data = report_data(body, md.format, md.encoding, md.coded_char_set_id, amount)
        except DecodeError:
            data = body if amount is None else body[:max(amount, 0)]
        try:
            qm.put1(self.hconn, ObjectDescriptor(object_name=reply_q, object_q_mgr_name=reply_qm), rmd,
                    PutOptions(options=options), data)
        except MQError as exc:
            log.warning("event=exception_report_undeliverable queue=%s qmgr=%s reason=%d", reply_q, reply_qm, exc.reason)
