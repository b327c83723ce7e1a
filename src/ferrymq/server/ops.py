"""What each request does to the engine, and the reply it earns.

Every MQI failure is an MQError from the engine; its comp/reason/detail go back to the
client unchanged in a ``Reply``. After every engine call the driver asks
``take_sync_lsn()``: a non-zero LSN parks the reply until the journal has it on disk.
Read-ahead (``Consume``) is served here too: the server takes messages for the client
with no-syncpoint gets and pushes them while the client's credit lasts.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ferrymq.engine import chlattrs as K
from ferrymq.engine.api import (
    GetOptions,
    GetResult,
    MessageParts,
    ObjectDescriptor,
    PersistentNext,
    PutOptions,
    PutRequest,
    SubDescriptor,
    SubResult,
    Waiting,
)
from ferrymq.engine.channels import ChannelObject
from ferrymq.engine.chlattrs import SVRCONN
from ferrymq.engine.chlauth import describe
from ferrymq.engine.distlist import ListOutcome
from ferrymq.errors import MQError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.properties import model as props_model
from ferrymq.protocol import events as E
from ferrymq.protocol.channel import MAX_HBINT
from ferrymq.protocol.columnframes import PutColumns, ids_of
from ferrymq.protocol.events import MIN_PROTOCOL_VERSION, PROTOCOL_VERSION
from ferrymq.server import chlgate, connauth, gc_policy, seq_ops
from ferrymq.server.tls import channel_refusal
from ferrymq.tls import rules
from ferrymq.wire.mqdh import MQPMR
from ferrymq.wire.mqmd import MQMD, NONE_ID

if TYPE_CHECKING:
    from ferrymq.server.handler import ClientHandler, Consumer

log = logging.getLogger("ferrymq.server")

_ASYNC_PMO = C.MQPMO_ASYNC_RESPONSE | C.MQPMO_SYNC_RESPONSE
_NOT_ASYNC = ~_ASYNC_PMO  # a put's options as the engine takes them: the client's response mode masked off
_READ_AHEAD_MD = MQMD(version=C.MQMD_VERSION_2)
_UNLIMITED = -1
VECTORED_FROM = 256 * 1024
"""A write this large goes out in its pieces (writelines) rather than joined first."""


def handle(h: ClientHandler, ev: E.ClientEvent) -> None:
    fn = _OPS.get(type(ev))
    if fn is None:  # the machine only yields known frames; this is a heartbeat reply
        return
    try:
        if h.quiescing:
            _check_channel_quiescing(ev)
        fn(h, ev)
    except MQError as exc:
        lsn = h.qmgr.take_sync_lsn()
        h.server.after_engine_call(h)
        if getattr(ev, "reply", True):
            h.emit_after(lsn, E.Reply(ev.corr, exc.comp, exc.reason, exc.detail))  # type: ignore[union-attr]
        else:
            h.stats.count(exc)
            if lsn:
                h.server.committer.kick()


# The option that makes each call fail while its channel quiesces (STOP CHANNEL MODE(QUIESCE)).
_FAIL_IF_QUIESCING: dict[type, int] = {
    E.Open: C.MQOO_FAIL_IF_QUIESCING, E.Put: C.MQPMO_FAIL_IF_QUIESCING, E.Put1: C.MQPMO_FAIL_IF_QUIESCING,
    E.PutBatch: C.MQPMO_FAIL_IF_QUIESCING, PutColumns: C.MQPMO_FAIL_IF_QUIESCING, E.Get: C.MQGMO_FAIL_IF_QUIESCING,
    E.GetBatch: C.MQGMO_FAIL_IF_QUIESCING, E.GetAhead: C.MQGMO_FAIL_IF_QUIESCING,
    E.Consume: C.MQGMO_FAIL_IF_QUIESCING, E.Sub: C.MQSO_FAIL_IF_QUIESCING, E.SubRequest: C.MQSRO_FAIL_IF_QUIESCING}


def _check_channel_quiescing(ev: E.ClientEvent) -> None:
    """While STOP CHANNEL MODE(QUIESCE) ends this client's channel instance: a call that asked
    FAIL_IF_QUIESCING fails with 2202 MQRC_CONNECTION_QUIESCING, as IBM's; the rest (MQCMIT,
    MQBACK, MQCLOSE, MQDISC ...) go on so that the application can finish its unit of work."""
    flag = _FAIL_IF_QUIESCING.get(type(ev), 0)
    if flag and getattr(ev, "options", 0) & flag:
        raise MQError(C.MQCC_FAILED, C.MQRC_CONNECTION_QUIESCING, "the channel is stopping (STOP CHANNEL)")


def _reply(h: ClientHandler, ev: E.ServerEvent, *, vectored: bool = False) -> None:
    lsn = h.qmgr.take_sync_lsn()
    h.emit_after(lsn, ev, vectored=vectored)


def _connect(h: ClientHandler, ev: E.Connect) -> None:
    server = h.server
    version = min(ev.max_version, PROTOCOL_VERSION)
    if version < max(ev.min_version, MIN_PROTOCOL_VERSION):
        detail = f"client speaks versions {ev.min_version}..{ev.max_version}; server {MIN_PROTOCOL_VERSION}..{PROTOCOL_VERSION}"
        h.emit(E.ConnectReply(ev.corr, C.MQCC_FAILED, C.MQRC_ENVIRONMENT_ERROR, detail))
        return
    if ev.qmgr_name.strip() not in ("", "*", h.qmgr.name):
        detail = f"this server is queue manager {h.qmgr.name!r}, not {ev.qmgr_name!r}"
        h.emit(E.ConnectReply(ev.corr, C.MQCC_FAILED, C.MQRC_Q_MGR_NAME_ERROR, detail))
        return
    if server.quiescing:
        h.emit(E.ConnectReply(ev.corr, C.MQCC_FAILED, C.MQRC_Q_MGR_QUIESCING, "the queue manager is quiescing"))
        return
    if h.network:  # over TCP: through a server-connection channel (local bindings use none)
        unknown = _svrconn(h, ev.channel.strip() or chlgate.DEFAULT_SVRCONN)
        if unknown is not None:
            log.warning("event=connect_refused peer=%s channel=%r reason=%d detail=%r", h.peer, ev.channel,
                        C.MQRC_UNKNOWN_CHANNEL_NAME, unknown)
            h.emit(E.ConnectReply(ev.corr, C.MQCC_FAILED, C.MQRC_UNKNOWN_CHANNEL_NAME, unknown))
            return
    # _svrconn took the channel when over TCP: its TLS attributes come next.
    refused = channel_refusal(h.channel, h.tls_peer) if h.channel is not None else None
    if refused is not None:
        rule, why = refused
        log.warning("event=channel_refused peer=%s channel=%r rule=%s peer_dn=%r detail=%r", h.peer,
                    ev.channel, rule, h.peer_dn, why)
        h.qmgr.events.channel_ssl_error(rules.QUALIFIER[rule], h.channel.name if h.channel else ev.channel,
                                        h.peer.rpartition(":")[0], peer_name=h.peer_dn)
        h.qmgr.take_sync_lsn()
        h.emit(E.ConnectReply(ev.corr, C.MQCC_FAILED, C.MQRC_Q_MGR_NOT_AVAILABLE, why))
        return
    if h.channel is not None and _unavailable(h, ev, h.channel):
        return
    auth = server.authenticator
    if auth is None or not auth.enabled:
        # A local-socket peer is the OS user the socket names (IBM's bindings), not the one it claims.
        _admit(h, ev, version, h.peer_user or ev.user)
        return
    qm = h.qmgr
    partner = None if h.peer_user else chlgate.partner_of(ev.channel, h.peer, ev.user, h.peer_dn,
                                                          h.peer_issuer_dn)
    chckclnt = chlgate.record_chckclnt(qm, partner) if partner is not None else F.MQCHK_AS_Q_MGR
    channel_user = chlgate.channel_mcauser(qm, partner.channel) if partner is not None else ""
    decision = auth.decide(local_user=h.peer_user, user=ev.user, password=ev.password, chckclnt=chckclnt,
                           channel_user=channel_user)
    user = decision.user
    if partner is not None:
        # The channel's records come first: a blocked channel is refused for what blocked it,
        # before any password is checked (IBM's listener checks BLOCKADDR before anything).
        adopted = decision.verify is not None and qm.state.authority.authinfo.adoptctx
        gate = chlgate.check(qm, partner, decision.user, adopted)
        running_as = chlgate.final_user(gate.decision.user, decision.user, adopted, gate.channel_user)
        for qualifier, rec in gate.decision.warnings:
            log.warning("event=channel_blocked_warning peer=%s channel=%s user=%r qualifier=%d rule=%r", h.peer,
                        partner.channel, ev.user, qualifier, describe(rec))
            qm.events.channel_blocked(qualifier, partner.channel, partner.address, warning=True, user=running_as,
                                      client_user=partner.clntuser)
        if gate.decision.refused:
            assert gate.decision.record is not None
            qm.events.channel_blocked(gate.decision.refused, partner.channel, partner.address, user=running_as,
                                      client_user=partner.clntuser)
            qm.take_sync_lsn()
            _refuse(h, ev, f"channel {partner.channel!r} blocked ({chlgate.BLOCKED_WHY[gate.decision.refused]}) "
                    f"by {describe(gate.decision.record)}", partner.channel, authority_event=False)
            return
        user = running_as
        if decision.verify is None and not decision.refusal and qm.state.authority.is_admin(running_as):
            # whatever maps it there, a client never runs as an administrator unchecked
            decision = connauth.unchecked_admin(running_as)
    if decision.refusal:
        _refuse(h, ev, decision.refusal, partner.channel if partner is not None else "")
        return
    if decision.verify is None or auth.cached(*decision.verify):
        _admit(h, ev, version, user)
        return
    # The password check (scrypt) runs off the event loop; nothing else is read from this
    # client meanwhile (CONNECT is answered before any other frame is sent).
    future = asyncio.get_running_loop().run_in_executor(None, auth.verify, *decision.verify)

    def checked(f: asyncio.Future[bool]) -> None:
        if h.closed:
            return
        if f.cancelled() or f.exception() is not None or not f.result():
            _refuse(h, ev, "user or password not recognised", partner.channel if partner is not None else "")
            return
        _admit(h, ev, version, user)
        h.flush()

    future.add_done_callback(checked)


def _svrconn(h: ClientHandler, name: str) -> str | None:
    """Take the SVRCONN channel ``name`` for this connection (``h.channel``), or say why
    not: as IBM's, a client names a channel that must be defined, and as a server-connection
    channel (auto-definition, CHAD, is not offered)."""
    chl = h.qmgr.state.channels.find(name)
    if chl is None:
        return f"channel {name!r} is not defined (DEFINE CHANNEL({name}) CHLTYPE(SVRCONN))"
    if chl.chltype != SVRCONN:
        return f"channel {name!r} is CHLTYPE({chl.chltype}), not SVRCONN"
    h.channel = chl
    return None


def _unavailable(h: ClientHandler, ev: E.Connect, chl: ChannelObject) -> bool:
    """Refuse the CONNECT with 2537 MQRC_CHANNEL_NOT_AVAILABLE, as IBM's channel does, when
    STOP CHANNEL left the channel STOPPED, or a new instance would pass MAXINST (the
    channel's client connections) or MAXINSTC (those from this client's address), with a
    Channel Not Available event for the limits. Instances are connections admitted already
    and CONNECTs that passed this check and still wait on their password check: this one
    is counted from here (``h.claimed``) until it is admitted or refused, so a burst of
    connects never has more than MAXINST instances at once."""
    qm = h.qmgr
    address = h.peer.rpartition(":")[0]
    why, qualifier, limit = "", 0, 0
    if chl.name in qm.state.channel_control.stopped:
        why = f"channel {chl.name} is STOPPED (START CHANNEL({chl.name}) to allow clients)"
    else:
        most, per_client = chl.number("MAXINST"), chl.number("MAXINSTC")
        if min(most, per_client) < K.UNLIMITED_INSTANCES:  # counted only when a limit is set
            mine = [c.conn_name for c in qm.connections.values() if c.channel == chl.name]
            mine += [o.peer.rpartition(":")[0] for o in h.server.handlers if o.claimed == chl.name]
            if len(mine) >= most:
                why, qualifier, limit = f"channel {chl.name} has MAXINST({most}) instances", \
                    F.MQRQ_SVRCONN_INST_LIMIT, most
            elif mine.count(address) >= per_client:
                why, qualifier, limit = f"channel {chl.name} has MAXINSTC({per_client}) instances from {address}", \
                    F.MQRQ_CLIENT_INST_LIMIT, per_client
    if not why:
        h.claimed = chl.name
        return False
    log.warning("event=connect_refused peer=%s channel=%s reason=%d detail=%r", h.peer, chl.name,
                C.MQRC_CHANNEL_NOT_AVAILABLE, why)
    if qualifier:
        qm.events.channel_not_available(qualifier, chl.name, address, limit)
        qm.take_sync_lsn()
    h.emit(E.ConnectReply(ev.corr, C.MQCC_FAILED, C.MQRC_CHANNEL_NOT_AVAILABLE, why))
    return True


def _admit(h: ClientHandler, ev: E.Connect, version: int, user: str) -> None:
    """The CONNECT accepted: the engine's MQCONN as ``user`` (its +connect checked there)."""
    server = h.server
    h.claimed = ""  # an instance from here on, or none
    try:
        hconn = h.qmgr.connect(appl_name=ev.appl_name, user=user, appl_type=ev.appl_type, options=ev.options,
                               pid=ev.pid, tid=ev.tid)
    except MQError as exc:
        log.warning("event=connect_refused peer=%s user=%r reason=%d detail=%r", h.peer, user, exc.reason, exc.detail)
        if exc.reason == C.MQRC_NOT_AUTHORIZED:
            _conn_event(h, ev, user, "" if h.peer_user else (ev.channel.strip() or chlgate.DEFAULT_SVRCONN))
        h.emit(E.ConnectReply(ev.corr, exc.comp, exc.reason, exc.detail))
        return
    h.hconn = h.last_hconn = hconn
    conn = h.qmgr.connections[h.hconn]
    conn.conn_name = h.peer.rpartition(":")[0] if h.peer not in ("local", "?") else ""
    conn.tls = h.tls_peer
    h.qmgr.take_sync_lsn()
    # IBM's negotiation: the larger heartbeat of the two ends (0 at either: none) and the
    # smallest maximum message length of client, channel and listener.
    chl, ours, max_len = h.channel, server.heartbeat_ms, min(ev.max_msg_length, server.max_msg_length)
    if chl is not None:
        conn.channel = chl.name
        conn.shcnv = min(chl.number("SHARECNV"), 1)  # one conversation per socket (docs/distributed.md)
        h.idle_heartbeats = bool(conn.shcnv)
        max_len = min(max_len, chl.number("MAXMSGL") or max_len)
        if ours is None:
            ours = chl.number("HBINT") * 1000
    # A client may ask for any u32; what is agreed stays within HBINT's range, as IBM's
    # channel attribute does (the kernel's TCP_USER_TIMEOUT derived from it must fit an int).
    asked = min(ev.heartbeat_ms, MAX_HBINT * 1000)
    h.heartbeat_ms = max(asked, ours) if asked and ours else 0
    server.limits.connected(h, h.transport.get_extra_info("socket") if h.transport is not None else None)
    log.info("event=connect peer=%s hconn=%d appl=%r user=%r version=%d", h.peer, h.hconn, ev.appl_name, user, version)
    h.emit(E.ConnectReply(ev.corr, version=version, max_msg_length=max_len, heartbeat_ms=h.heartbeat_ms,
                          qmgr_name=h.qmgr.name, connection_id=server.connection_id(h.hconn)))


def _refuse(h: ClientHandler, ev: E.Connect, why: str, channel: str = "", *, authority_event: bool = True) -> None:
    """2035 after FAILDELAY (so guessing passwords is slow), logged once, without the
    password, and reported as a Not Authorized event (AUTHOREV) unless it was the channel's
    records (a Channel Blocked event then, as IBM's)."""
    h.claimed = ""  # no instance: a burst's other CONNECTs may have its place
    auth = h.server.authenticator
    delay = auth.faildelay if auth is not None else 0.0
    log.warning("event=connect_refused peer=%s channel=%s user=%r reason=%d detail=%r", h.peer, channel or "-",
                ev.user, C.MQRC_NOT_AUTHORIZED, why)
    if authority_event:
        _conn_event(h, ev, ev.user.strip() or h.peer_user, channel)

    def answer() -> None:
        if h.closed:
            return
        h.emit(E.ConnectReply(ev.corr, C.MQCC_FAILED, C.MQRC_NOT_AUTHORIZED,
                              "not authorized: the user, password or authority was refused"))
        h.flush()

    asyncio.get_running_loop().call_later(delay, answer)


def _conn_event(h: ClientHandler, ev: E.Connect, user: str, channel: str) -> None:
    """The Not Authorized (type 1, MQRQ_CONN_NOT_AUTHORIZED) event of a refused CONNECT."""
    events = h.qmgr.events
    if events.on("AUTHOREV"):
        conn_name = h.peer.rpartition(":")[0] if h.peer not in ("local", "?") else ""
        events.not_authorized(F.MQRQ_CONN_NOT_AUTHORIZED, user, appl_type=ev.appl_type, appl_name=ev.appl_name,
                              conn_name=conn_name, channel=channel)
        h.qmgr.take_sync_lsn()


def _disconnect(h: ClientHandler, ev: E.Disconnect) -> None:
    hconn, h.hconn = h.hconn, 0
    h.unconnected_since = time.monotonic()  # the handshake deadline again: a Connect or the end
    for c in list(h.consumers.values()):
        stop_consumer(h, c)
    h.server.drop_waiters(h)
    h.qmgr.disconnect(hconn)
    _reply(h, E.Reply(ev.corr))
    h.server.after_engine_call(h)


def _open(h: ClientHandler, ev: E.Open) -> None:
    od = ObjectDescriptor(ev.object_name, ev.object_q_mgr_name, ev.object_type, ev.dynamic_q_name,
                          ev.alternate_user_id, ev.selection_string, ev.object_string)
    r = h.qmgr.open(h.hconn, od, ev.options)
    _reply(h, E.OpenReply(ev.corr, r.hobj, r.object_name, r.resolved_q_name, r.resolved_q_mgr_name,
                          res_object_string=r.res_object_string))


def _close(h: ClientHandler, ev: E.Close) -> None:
    c = h.consumers.get(ev.hobj)
    if c is not None:
        stop_consumer(h, c)
    h.server.drop_waiters(h, ev.hobj)
    h.qmgr.close(h.hconn, ev.hobj, ev.options)
    _reply(h, E.Reply(ev.corr))
    h.server.after_engine_call(h)


def _put(h: ClientHandler, ev: E.Put) -> None:
    # ev.md: a plain MQMD's bytes decoded in place (no properties), or the MQMD
    r = h.qmgr.put_request(PutRequest(h.hconn, ev.hobj, ev.md, ev.options & _NOT_ASYNC, ev.context, ev.data,
                                      ev.properties))
    delivered = r.delivered
    if delivered is not None:  # a waiting getter's answer goes out before the putter's reply
        h.server.answer_first(delivered)
    _after_put(h, ev.corr, ev.reply, r)


def _put1(h: ClientHandler, ev: E.Put1) -> None:
    assert isinstance(ev.md, MQMD)
    od = ObjectDescriptor(ev.object_name, ev.object_q_mgr_name, ev.object_type, alternate_user_id=ev.alternate_user_id,
                          object_string=ev.object_string)
    r = h.qmgr.put1(h.hconn, od, ev.md, PutOptions(ev.options & ~_ASYNC_PMO, ev.context), ev.data, ev.properties)
    if r.delivered is not None:
        h.server.answer_first(r.delivered)
    _after_put(h, ev.corr, ev.reply, r)


def _open_list(h: ClientHandler, ev: E.OpenList) -> None:
    out = h.qmgr.open_list(h.hconn, ev.objects, ev.options, ev.alternate_user_id)
    _list_reply(h, ev.corr, out)


def _put_list(h: ClientHandler, ev: E.PutList) -> None:
    assert isinstance(ev.md, MQMD)
    records = [MQPMR(*rec) for rec in ev.records]
    pmo = PutOptions(ev.options & ~_ASYNC_PMO, ev.context)
    if ev.hobj:
        out = h.qmgr.put_list(h.hconn, ev.hobj, ev.md, pmo, ev.data, ev.fields, records, ev.properties)
    else:
        out = h.qmgr.put1_list(h.hconn, ev.objects, ev.md, pmo, ev.data, ev.fields, records, ev.alternate_user_id,
                               ev.properties)
    _list_reply(h, ev.corr, out)
    h.server.after_engine_call(h)


def _list_reply(h: ClientHandler, corr: int, out: ListOutcome) -> None:
    """A distribution list's answer: its responses go back even when the call failed."""
    ids = out.ids or [(NONE_ID, NONE_ID)] * len(out.responses)
    responses = [(comp, reason, msg_id, correl_id) for (comp, reason), (msg_id, correl_id)
                 in zip(out.responses, ids, strict=True)]
    _reply(h, E.ListReply(corr, out.hobj, out.known, out.unknown, out.invalid, responses, out.comp, out.reason,
                          "" if out.comp == C.MQCC_OK else "see the response records"))


def _after_put(h: ClientHandler, corr: int, reply: bool, r: Any) -> None:
    if reply:
        _reply(h, E.PutReply(corr, r.md, r.resolved_q_name, r.resolved_q_mgr_name, r.comp, r.reason))  # a warning too
    else:
        if r.reason:
            h.stats.count(MQError(r.comp, r.reason, "the put succeeded with a warning"))
        else:
            h.stats.success += 1
        if h.qmgr.take_sync_lsn():
            h.server.committer.kick()
    h.server.after_engine_call(h)


def _put_batch(h: ClientHandler, ev: E.PutBatch) -> None:
    """Asynchronous puts sent as one frame: each item counts for MQSTAT as its own put."""
    assert isinstance(ev.md, MQMD)
    pmo = PutOptions(ev.options & ~_ASYNC_PMO, ev.context)
    h.stats.count_all(h.qmgr.put_many(h.hconn, ev.hobj, ev.md, pmo, ev.items))
    gc_policy.after_burst()
    if h.qmgr.take_sync_lsn():
        h.server.committer.kick()
    h.server.after_engine_call(h)


def _put_columns(h: ClientHandler, ev: PutColumns) -> None:
    """Asynchronous puts sent as columns: like a PutBatch, each message counts for MQSTAT."""
    assert isinstance(ev.md, MQMD)
    pmo = PutOptions(ev.options & ~_ASYNC_PMO, ev.context)
    outcomes = h.qmgr.put_columns(h.hconn, ev.hobj, ev.md, pmo, ev.payloads(), ids_of(ev.msg_ids),
                                  ids_of(ev.correl_ids))
    h.stats.count_all(outcomes)
    gc_policy.after_burst()  # the run's messages are long-lived: keep the young collections off them
    if h.qmgr.take_sync_lsn():
        h.server.committer.kick()
    h.server.after_engine_call(h)


def _get(h: ClientHandler, ev: E.Get) -> None:
    assert isinstance(ev.md, MQMD)
    qmgr, wait = h.qmgr, ev.wait_interval
    gmo = GetOptions(ev.options, wait, ev.match_options, ev.msg_token, False, ev.msg_handle)
    c = h.consumers.get(ev.hobj) if h.consumers else None
    resume = c is not None and c.paused
    r: GetResult | Waiting | None = None
    try:
        # A longer message than the connection carries is not taken (2080, it stays queued):
        # a reply over the negotiated frame size would be refused by the client after the take.
        r = qmgr.get(h.hconn, ev.hobj, ev.md, gmo, min(ev.buffer_length, h.conn.max_msg_length))
    except MQError as exc:
        if not resume:
            raise
        _reply(h, E.Reply(ev.corr, exc.comp, exc.reason, exc.detail))
    if isinstance(r, Waiting):
        qmgr.take_sync_lsn()
        h.server.add_waiter(r.waiter_id, h, ev.corr, ev.hobj, None if wait < 0 else wait / 1000)
    elif r is not None:
        _reply(h, get_reply(ev.corr, r))
    if resume:
        # A read-ahead paused before a persistent message resumes once the client has asked
        # for that message itself (whatever the Get found). After the reply, so that the
        # pushes do not wait for the fsync the reply may need.
        assert c is not None
        c.paused = False
        pump(h, c)
    h.server.after_engine_call(h)


def _get_batch(h: ClientHandler, ev: E.GetBatch | E.GetAhead) -> None:
    """Several destructive gets in one request (each an MQGET; a wait ends with one message).
    A GetAhead's after the first are read ahead into the unit of work (Getter.get_many)."""
    # Truncated messages are never taken by a batch: one that does not fit comes back alone,
    # as a GetReply with MQRC_TRUNCATED_MSG_FAILED, and stays on the queue.
    gmo = GetOptions(ev.options & ~C.MQGMO_ACCEPT_TRUNCATED_MSG, ev.wait_interval, C.MQMO_NONE, msg_handle=True)
    # The reply must fit one frame of the negotiated maximum, or the client refuses it and
    # the messages taken outside syncpoint are gone: the items, each with its framing, are
    # held to that maximum (the frame's overhead allowance covers the reply's own header).
    cap = h.conn.max_msg_length
    results, stop = h.qmgr.get_many(h.hconn, ev.hobj, _READ_AHEAD_MD, gmo, min(ev.buffer_length, cap),
                                    ev.max_messages, ev.max_bytes, frame_bytes=cap, framing=BATCH_ITEM_FRAMING,
                                    ahead=type(ev) is E.GetAhead)
    if results and results[-1].reason == C.MQRC_TRUNCATED_MSG_FAILED:
        last = results.pop()
        if not results:
            _reply(h, get_reply(ev.corr, last))
            h.server.after_engine_call(h)
            return
    if results:
        items = [(r.md_bytes or r.md.pack(), r.data, r.data_length, r.msg_token, r.properties) for r in results]
        # A reply of large messages goes out in its pieces: joined, every body would be copied
        # into a frame of megabytes first.
        _reply(h, E.GetBatchReply(ev.corr, items), vectored=sum(len(i[1]) for i in items) >= VECTORED_FROM)
    elif isinstance(stop, Waiting):
        h.qmgr.take_sync_lsn()
        h.server.add_waiter(stop.waiter_id, h, ev.corr, ev.hobj, None if ev.wait_interval < 0 else ev.wait_interval / 1000)
    elif stop is not None:
        raise stop
    h.server.after_engine_call(h)


BATCH_ITEM_FRAMING = 512
"""Bytes a GetBatchReply item takes besides its data and properties (item header, MQMD
v2 and lengths: about 400), rounded up."""


def get_reply(corr: int, r: GetResult) -> E.GetReply:
    return E.GetReply(corr, r.md_bytes or r.md.pack(), r.data, r.data_length, r.msg_token, r.resolved_q_name, r.properties,
                      r.comp, r.reason)


def _return_ahead(h: ClientHandler, ev: E.ReturnAhead) -> None:
    h.qmgr.return_ahead(h.hconn, ev.hobj, ev.tokens)
    _reply(h, E.Reply(ev.corr))
    h.server.after_engine_call(h)


def _commit(h: ClientHandler, ev: E.Commit) -> None:
    h.qmgr.commit(h.hconn)
    _reply(h, E.Reply(ev.corr))
    h.server.after_engine_call(h)


def _backout(h: ClientHandler, ev: E.Backout) -> None:
    h.qmgr.backout(h.hconn)
    _reply(h, E.Reply(ev.corr))
    h.server.after_engine_call(h)


def _inquire(h: ClientHandler, ev: E.Inquire) -> None:
    r = h.qmgr.inquire(h.hconn, ev.hobj, ev.int_selectors, ev.char_selectors)
    _reply(h, E.InquireReply(ev.corr, tuple(r.ints), tuple(r.chars)))


def _set(h: ClientHandler, ev: E.Set) -> None:
    h.qmgr.set(h.hconn, ev.hobj, ev.ints, ev.chars)
    _reply(h, E.Reply(ev.corr))


def _sub(h: ClientHandler, ev: E.Sub) -> None:
    """MQSUB. A durable subscription's creation is journaled: the reply waits for its fsync."""
    sd = SubDescriptor(ev.options, ev.object_name, ev.object_string, ev.sub_name, ev.sub_user_data, ev.sub_correl_id,
                       ev.pub_priority, ev.pub_accounting_token, ev.pub_appl_identity_data, ev.selection_string,
                       ev.sub_expiry, ev.sub_level, ev.alternate_user_id)
    r = h.qmgr.subscribe(h.hconn, sd, ev.hobj)
    _reply(h, _sub_reply(ev.corr, r))
    h.server.after_engine_call(h)


def _sub_reply(corr: int, r: SubResult) -> E.SubReply:
    d = r.descriptor
    if d is None:
        return E.SubReply(corr, r.hsub, r.hobj, r.queue_name, r.res_object_string, r.sub_correl_id, r.comp, r.reason)
    # A resume: the subscription's fields, for the client to write back into the caller's MQSD.
    return E.SubReply(corr, r.hsub, r.hobj, r.queue_name, r.res_object_string, r.sub_correl_id, r.comp, r.reason, "",
                      True, d.options, d.object_name, d.sub_user_data, d.pub_priority, d.pub_accounting_token,
                      d.pub_appl_identity_data, d.selection_string, d.sub_expiry, d.sub_level)


def _sub_request(h: ClientHandler, ev: E.SubRequest) -> None:
    """MQSUBRQ: the retained publications sent again; the reply counts them."""
    sent = h.qmgr.sub_request(h.hconn, ev.hsub, ev.action, ev.options)
    _reply(h, E.SubRequestReply(ev.corr, sent))
    h.server.after_engine_call(h)


def _heartbeat(h: ClientHandler, ev: E.Heartbeat) -> None:
    if ev.reply:
        h.emit(E.HeartbeatReply(ev.corr))


def _stat(h: ClientHandler, ev: E.Stat) -> None:
    if ev.stat_type != C.MQSTAT_TYPE_ASYNC_ERROR:
        h.emit(E.Reply(ev.corr, C.MQCC_FAILED, C.MQRC_STAT_TYPE_ERROR, f"StatusType {ev.stat_type} is not supported"))
        return
    s = h.stats
    first = s.first
    reply = E.StatReply(ev.corr, s.success, s.warning, s.failure, first.comp if first else C.MQCC_OK,
                        first.reason if first else C.MQRC_NONE, first.detail if first else "")
    s.success = s.warning = s.failure = 0
    s.first = None
    # Async puts of persistent messages are reported only once they are on disk.
    h.emit_after(h.qmgr.journal.appended_lsn, reply)


# -- read-ahead ----------------------------------------------------------------------------


def _consume(h: ClientHandler, ev: E.Consume) -> None:
    from ferrymq.server.handler import Consumer

    if ev.hobj in h.consumers or ev.window <= 0:
        h.emit(E.Reply(ev.corr, C.MQCC_FAILED, C.MQRC_OPTIONS_ERROR, "read-ahead already started, or window is 0"))
        return
    if ev.window > E.MAX_WINDOW:
        h.emit(E.Reply(ev.corr, C.MQCC_FAILED, C.MQRC_OPTIONS_ERROR,
                       f"read-ahead window {ev.window} exceeds the maximum MAX_WINDOW({E.MAX_WINDOW})"))
        return
    if ev.options & (C.MQGMO_SYNCPOINT | C.MQGMO_SYNCPOINT_IF_PERSISTENT | C.MQGMO_BROWSE_FIRST | C.MQGMO_BROWSE_NEXT):
        h.emit(E.Reply(ev.corr, C.MQCC_FAILED, C.MQRC_OPTIONS_ERROR,
                       "read-ahead takes messages outside syncpoint, destructively"))
        return
    c = Consumer(ev.corr, ev.hobj, (ev.options | C.MQGMO_NO_SYNCPOINT) & ~C.MQGMO_WAIT, ev.window, ev.window)
    h.consumers[ev.hobj] = c
    pump(h, c)


def _credit(h: ClientHandler, ev: E.Credit) -> None:
    c = h.consumers.get(ev.hobj)
    if c is None:
        return
    # A client returns what it consumed, so its credit never exceeds its window: more is
    # a client's error, held to the window rather than let it grow the pushes past it.
    c.credit = min(c.credit + ev.count, c.window)
    if not c.waiter_id and not c.paused:
        pump(h, c)


PUSH_BATCH_BYTES = 256 * 1024
"""What one PushedBatch frame carries at most (the negotiated maximum may be lower)."""


def pump(h: ClientHandler, c: Consumer) -> None:
    """Push messages while credit lasts and the connection has room for them (see
    ``ClientHandler.blocked``: a consumer that does not read stops the pump, which resumes
    when its writes drain); when the queue is empty, wait in the engine.

    The engine takes a run of messages per call (get_many: one MQGET's checks, then the
    takes), and a get with MQGMO_WAIT either returns a message or registers the wait, which
    then takes up to the credit of messages handed over to it (``gather``, called by the
    server for each, and ``push_gathered`` after the engine call that made them).
    Consecutive messages leave as one PushedBatch frame, with their properties (what one
    Pushed frame per message costs both ends is most of the read-ahead path): what the wait
    was given goes out in one frame with what this pump takes next.
    """
    qmgr = h.qmgr
    if h.hconn and not qmgr.connections[h.hconn].shcnv:
        # SHARECNV(0), IBM's pre-7 channel, has no read-ahead (MQOO_READ_AHEAD is ignored):
        # nothing is sent ahead; the client is told to get each message itself, as it does
        # before a persistent one, so every message is taken by its own MQGET.
        if not c.paused:
            pause(h, c)
        return
    gmo = GetOptions(c.options | C.MQGMO_WAIT, _UNLIMITED, non_persistent_only=True, msg_handle=True)  # read-ahead: the Pythonic API gets with a handle
    limit = batch_bytes(h)
    try:
        while c.credit > 0 and not h.closed and h.hconn:
            if h.blocked():  # the messages stay queued (and visible) until the client reads
                push_gathered(h, c)
                h.pump_stalled()
                return
            results, stop = qmgr.get_many(h.hconn, c.hobj, _READ_AHEAD_MD, gmo, h.conn.max_msg_length, c.credit,
                                          max(limit, 1), streamed=True)
            lsn = qmgr.take_sync_lsn()
            for r in results:
                gather(h, c, r.parts(), lsn, limit)
            if stop is None:
                continue
            push_gathered(h, c)  # what was taken goes out before the wait, pause or end
            if isinstance(stop, Waiting):
                c.waiter_id = stop.waiter_id
                h.server.add_waiter(stop.waiter_id, h, 0, c.hobj, None)
            elif isinstance(stop, PersistentNext):
                pause(h, c)
            else:
                stop_consumer(h, c, stop)
            return
    finally:
        push_gathered(h, c)


def batch_bytes(h: ClientHandler) -> int:
    """What one PushedBatch frame to ``h`` carries at most."""
    return min(PUSH_BATCH_BYTES, h.conn.batch_limit())


def gather(h: ClientHandler, c: Consumer, item: MessageParts, lsn: int, limit: int) -> None:
    """Count ``item``, a message taken for read-ahead consumer ``c``, against its credit
    and add it to the PushedBatch being gathered (``limit``: ``batch_bytes``); one that
    needs a disk write first (``lsn``) or fills a frame alone goes in a Pushed of its own."""
    _, data, _, _, props = item
    # MQMD v2 and the item's header, generously, and the properties' binary form
    item_size = len(data) + 420 + (len(props_model.pack(props)) if props else 0)
    if lsn > 0 or item_size > limit:
        push_gathered(h, c)
        push(h, c, item, lsn)
        return
    if c.gathered_bytes + item_size > limit:
        push_gathered(h, c)
    c.credit -= 1
    c.gathered.append(item)
    c.gathered_bytes += item_size


def push_gathered(h: ClientHandler, c: Consumer) -> None:
    """Send what ``gather`` gathered for ``c`` (one message goes as a plain Pushed)."""
    batch = c.gathered
    c.gathered_bytes = 0
    if not batch or h.closed:  # closed: the connection and its unsent pushes are gone
        batch.clear()
        return
    if len(batch) == 1:
        h.emit(E.Pushed(c.hobj, *batch[0]))
    else:
        h.emit(E.PushedBatch(c.hobj, batch.copy()))
    batch.clear()


def resume_pumps(h: ClientHandler) -> None:
    """Pump again the consumers a full connection stopped (its writes have drained)."""
    for c in list(h.consumers.values()):
        if c.credit > 0 and not c.waiter_id and not c.paused and not h.closed:
            pump(h, c)


def pause(h: ClientHandler, c: Consumer) -> None:
    """Stop pushing before a persistent message and tell the client to get it itself."""
    push_gathered(h, c)
    c.paused = True
    h.emit(E.PersistentNext(c.hobj))


def push(h: ClientHandler, c: Consumer, item: MessageParts, lsn: int) -> None:
    push_gathered(h, c)  # in the order they were taken
    c.credit -= 1
    h.emit_after(lsn, E.Pushed(c.hobj, *item))


def stop_consumer(h: ClientHandler, c: Consumer, error: MQError | None = None, *, reply: bool = True) -> None:
    """End a read-ahead: cancel its wait and answer its Consume (with the error that ended it)."""
    push_gathered(h, c)  # taken already: they are the client's
    h.consumers.pop(c.hobj, None)
    if c.waiter_id:
        h.qmgr.cancel_wait(c.waiter_id)
        h.server.waiters.pop(c.waiter_id, None)
        h.server.deadlines.discard(c.waiter_id)
        c.waiter_id = 0
    if error is not None:
        log.info("event=read_ahead_stopped hconn=%d hobj=%d reason=%d", h.hconn, c.hobj, error.reason)
    if reply and not h.closed:
        if error is None:
            h.emit(E.Reply(c.corr))
        else:
            h.emit(E.Reply(c.corr, error.comp, error.reason, error.detail))


_OPS: dict[type, Callable[[Any, Any], None]] = {
    E.Connect: _connect,
    E.Disconnect: _disconnect,
    E.Open: _open,
    E.Close: _close,
    E.Put: _put,
    E.Put1: _put1,
    E.OpenList: _open_list,
    E.PutList: _put_list,
    E.PutBatch: _put_batch,
    PutColumns: _put_columns,
    E.Get: _get,
    E.GetBatch: _get_batch,
    E.GetAhead: _get_batch,
    E.ReturnAhead: _return_ahead,
    E.Commit: _commit,
    E.Backout: _backout,
    E.Inquire: _inquire,
    E.Set: _set,
    E.Heartbeat: _heartbeat,
    E.Stat: _stat,
    E.Consume: _consume,
    E.Credit: _credit,
    E.Sub: _sub,
    E.SubRequest: _sub_request,
    **seq_ops.OPS,
}
