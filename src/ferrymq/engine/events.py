"""Instrumentation events: PCF messages the queue manager puts on its event queues when
something an operator watches happens, switched by the queue manager's attributes.

The message (IBM's "event message format"): an MQMD of format MQEVENT, MsgType DATAGRAM,
the event queue's default priority and persistence, PutApplType MQAT_QMGR; then an MQCFH
of Type MQCFT_EVENT, CompCode MQCC_WARNING and the event's reason, and its parameters.

| switch   | queue                       | events (reason)                                             |
|----------|-----------------------------|-------------------------------------------------------------|
| PERFMEV  | SYSTEM.ADMIN.PERFM.EVENT    | Queue Depth High 2224, Queue Depth Low 2225, Queue Full 2053, |
|          |                             | Queue Service Interval High 2226, OK 2227                   |
| INHIBTEV | SYSTEM.ADMIN.QMGR.EVENT     | Put Inhibited 2051, Get Inhibited 2016                      |
| LOCALEV  | SYSTEM.ADMIN.QMGR.EVENT     | Unknown Object Name 2085                                    |
| STRSTPEV | SYSTEM.ADMIN.QMGR.EVENT     | Queue Manager Active 2222, Not Active 2223                  |
| CONFIGEV | SYSTEM.ADMIN.CONFIG.EVENT   | Create 2367, Change 2368 (two messages), Delete 2369        |
| CMDEV    | SYSTEM.ADMIN.COMMAND.EVENT  | Command 2413 (NODISPLAY: not for inquiries)                 |
| AUTHOREV | SYSTEM.ADMIN.QMGR.EVENT     | Not Authorized 2035, by reason qualifier: 1 connect,        |
|          |                             | 2 open or put1, 3 close, 4 command, 17 subscribe, 18 a      |
|          |                             | subscription's destination                                  |
| CHLEV    | SYSTEM.ADMIN.CHANNEL.EVENT  | Channel Started 2282, Stopped 2283 (qualifier 7 OK, 8 error, |
|          |                             | 9 retry, 10 disabled), Stopped By User 2279, Conversion     |
|          |                             | Error 2284, Channel Blocked 2577 (WARN(YES) records: 2578;  |
|          |                             | qualifier 21 address, 22 user, 23 NOACCESS), Channel Not    |
|          |                             | Available 2537 (26 MAXINST, 27 MAXINSTC); EXCEPTION: all    |
|          |                             | but Started and Stopped OK                                  |
| SSLEV    | SYSTEM.ADMIN.CHANNEL.EVENT  | Channel SSL Error 2371 (qualifier 13 handshake, 14 CipherSpec, |
|          |                             | 15 client authentication, 16 peer name)                     |

Queue depth events follow IBM's enabling rules, per queue, on top of PERFMEV: a put that
brings the depth (uncommitted messages count) to QDEPTHHI percent of MAXDEPTH or more makes
Queue Depth High if QDPHIEV is enabled, which then disables QDPHIEV and enables QDPLOEV and
QDPMAXEV; a get that brings it to QDEPTHLO percent or less makes Queue Depth Low (QDPLOEV),
which enables QDPHIEV and QDPMAXEV and disables QDPLOEV; a put refused because the queue
is full makes Queue Full (QDPMAXEV), which enables QDPLOEV and disables QDPMAXEV. Each
carries the queue's statistics since the last performance event on it (TimeSinceReset,
HighQDepth, MsgEnqCount, MsgDeqCount), which it then resets. The statistics count what
the event checks see: puts and gets while the queue's depth events are on (a message handed
straight to a waiting get never changes the depth, and is not counted).

Queue service interval events (QSVCIEV HIGH or OK, QSVCINT in milliseconds) follow IBM's
service timer: started by a put to an empty queue, restarted by a get that leaves messages,
off after a get that empties the queue (and started at the first check of a queue that
already holds messages). At a put or a get, before the timer moves: with QSVCIEV(HIGH), a
timer that ran past the interval makes Queue Service Interval High and switches QSVCIEV to
OK; with QSVCIEV(OK), a get within the interval makes Queue Service Interval OK and switches
it to HIGH. They are checked at puts and gets only (IBM: "on, or before, the next" one).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ferrymq.engine.objects import QueueObject
from ferrymq.engine.session import Connection, UnitOfWork
from ferrymq.engine.state import EngineState
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.wire import pcf as P
from ferrymq.wire.mqmd import MQMD

log = logging.getLogger("ferrymq.engine")

QMGR_EVENTS = "SYSTEM.ADMIN.QMGR.EVENT"
PERFM_EVENTS = "SYSTEM.ADMIN.PERFM.EVENT"
CONFIG_EVENTS = "SYSTEM.ADMIN.CONFIG.EVENT"
COMMAND_EVENTS = "SYSTEM.ADMIN.COMMAND.EVENT"
CHANNEL_EVENTS = "SYSTEM.ADMIN.CHANNEL.EVENT"
_ON, _OFF = F.MQEVR_ENABLED, F.MQEVR_DISABLED

Deliver = Callable[[MQMD, bytes, str, str, UnitOfWork | None], None]


def _not_bound(md: MQMD, data: bytes, queue: str, qmgr: str, uow: UnitOfWork | None) -> None:  # pragma: no cover
    raise RuntimeError("Events used before deliver_with")


@dataclass(slots=True)
class QueueStatistics:
    """A queue's performance statistics since the last performance event on it."""

    reset_at: float
    enqueued: int = 0
    dequeued: int = 0
    high_depth: int = 0


class Events:
    """The instrumentation events of one queue manager (see the module docstring)."""

    def __init__(self, state: EngineState) -> None:
        self.state = state
        self.objects = state.objects
        self.deliver: Deliver = _not_bound
        self.statistics: dict[str, QueueStatistics] = {}
        self.service_timer: dict[str, float] = {}  # queue -> when its service timer started

    def deliver_with(self, deliver: Deliver) -> None:
        """Bind how generated messages are delivered (engine.reports), once at composition."""
        self.deliver = deliver

    def on(self, switch: str) -> bool:
        """Whether the queue manager attribute ``switch`` (PERFMEV, INHIBTEV ...) is enabled."""
        return self.state.qmgr_attr(switch) != _OFF

    # -- putting one ---------------------------------------------------------------------
    def emit(self, queue: str, command: int, reason: int, params: Sequence[P.Param], *, seq: int = 1,
             last: bool = True, correl_id: bytes = bytes(24)) -> None:
        """Put one event message on ``queue`` (outside any unit of work, as IBM does)."""
        state = self.state
        target = self.objects.find(queue)
        now = state.clock.now()
        date, tod = state.stamp_put(now)
        priority = int(target.attrs.get("DEFPRTY", 0)) if target is not None else 0
        persistence = int(target.attrs.get("DEFPSIST", 0)) if target is not None else C.MQPER_NOT_PERSISTENT
        md = MQMD(version=C.MQMD_VERSION_2, msg_type=C.MQMT_DATAGRAM, format=C.MQFMT_EVENT.rstrip(),
                  encoding=C.MQENC_NATIVE, coded_char_set_id=state.qmgr_attr("CCSID"), priority=priority,
                  persistence=persistence, msg_id=state.new_id(), correl_id=correl_id, reply_to_q_mgr=state.name,
                  put_appl_type=C.MQAT_QMGR, put_appl_name=state.name[:28], put_date=date, put_time=tod)
        header = P.CFH(type=F.MQCFT_EVENT, command=command, msg_seq_number=seq,
                       control=F.MQCFC_LAST if last else F.MQCFC_NOT_LAST, comp_code=C.MQCC_WARNING, reason=reason,
                       version=F.MQCFH_VERSION_2 if command == F.MQCMD_CONFIG_EVENT else F.MQCFH_VERSION_1)
        data = P.PCFMessage(header, tuple(params)).pack(C.MQENC_NATIVE)
        log.info("event=instrumentation queue=%s reason=%d", queue, reason)
        self.deliver(md, data, queue, "", None)

    def _qmgr_name(self) -> P.CFST:
        return P.CFST(C.MQCA_Q_MGR_NAME, self.state.name)

    # -- performance: queue depth --------------------------------------------------------
    def watching(self, q: QueueObject) -> bool:
        """Whether puts and gets on ``q`` are checked for depth events (worked out again when
        the registry's epoch has moved since)."""
        q.events_epoch = self.objects.epoch
        a = q.attrs
        q.events_on = (q.is_local and self.on("PERFMEV")
                       and bool(a.get("QDPHIEV") or a.get("QDPLOEV") or a.get("QDPMAXEV") or a.get("QSVCIEV")))
        if q.events_on and q.name not in self.statistics:
            now = self.state.clock.now()
            self.statistics[q.name] = QueueStatistics(now)
            if q.messages.depth:  # the service timer starts now for a queue that holds messages
                self.service_timer[q.name] = now
        return q.events_on

    def arrived(self, q: QueueObject) -> None:
        """A message now counts on ``q`` (placed, or held by a unit of work)."""
        if q.events_epoch != self.objects.epoch:
            self.watching(q)
        if not q.events_on:
            return
        stats = self.statistics[q.name]
        stats.enqueued += 1
        depth = q.messages.depth
        stats.high_depth = max(stats.high_depth, depth)
        self._service(q, got=False)
        if depth == 1:
            self.service_timer[q.name] = self.state.clock.now()  # a put to an empty queue starts it
        limit = _percent(q, "QDEPTHHI")
        if q.attrs.get("QDPHIEV") == _ON and depth >= limit:
            self._depth_event(q, C.MQRC_Q_DEPTH_HIGH, {"QDPHIEV": _OFF, "QDPLOEV": _ON, "QDPMAXEV": _ON})

    def removed(self, q: QueueObject) -> None:
        """A message was taken from ``q`` by a destructive get."""
        if q.events_epoch != self.objects.epoch:
            self.watching(q)
        if not q.events_on:
            return
        stats = self.statistics[q.name]
        stats.dequeued += 1
        self._service(q, got=True)
        if q.messages.depth:
            self.service_timer[q.name] = self.state.clock.now()  # restarted while messages remain
        else:
            self.service_timer.pop(q.name, None)  # off: nothing waits for service
        if q.attrs.get("QDPLOEV") == _ON and q.messages.depth <= _percent(q, "QDEPTHLO"):
            self._depth_event(q, C.MQRC_Q_DEPTH_LOW, {"QDPLOEV": _OFF, "QDPHIEV": _ON, "QDPMAXEV": _ON})

    def full(self, q: QueueObject) -> None:
        """A put to ``q`` was refused with MQRC_Q_FULL."""
        if (self.watching(q) if q.events_epoch != self.objects.epoch else q.events_on) \
                and q.attrs.get("QDPMAXEV") == _ON:
            self._depth_event(q, C.MQRC_Q_FULL, {"QDPMAXEV": _OFF, "QDPLOEV": _ON})

    def _service(self, q: QueueObject, got: bool) -> None:
        """Queue service interval events (QSVCIEV, QSVCINT ms) at a put or a get, before the
        service timer moves: High when the timer ran past the interval (a put or a get), OK
        when a get came within it; each switches QSVCIEV to the other."""
        started = self.service_timer.get(q.name)
        watch = q.attrs.get("QSVCIEV", F.MQQSIE_NONE)
        if started is None or watch == F.MQQSIE_NONE:
            return
        late = self.state.clock.now() - started > int(q.attrs.get("QSVCINT", 999_999_999)) / 1000
        if watch == F.MQQSIE_HIGH and late:
            self._depth_event(q, C.MQRC_Q_SERVICE_INTERVAL_HIGH, {"QSVCIEV": F.MQQSIE_OK})
        elif watch == F.MQQSIE_OK and got and not late:
            self._depth_event(q, C.MQRC_Q_SERVICE_INTERVAL_OK, {"QSVCIEV": F.MQQSIE_HIGH})

    def _depth_event(self, q: QueueObject, reason: int, switches: dict[str, int]) -> None:
        now = self.state.clock.now()
        stats = self.statistics[q.name]
        params: list[P.Param] = [self._qmgr_name(), P.CFST(C.MQCA_BASE_OBJECT_NAME, q.name),
                                 P.CFIN(C.MQIA_TIME_SINCE_RESET, int(now - stats.reset_at)),
                                 P.CFIN(C.MQIA_HIGH_Q_DEPTH, stats.high_depth),
                                 P.CFIN(C.MQIA_MSG_ENQ_COUNT, stats.enqueued),
                                 P.CFIN(C.MQIA_MSG_DEQ_COUNT, stats.dequeued)]
        self.statistics[q.name] = QueueStatistics(now, high_depth=q.messages.depth)
        self.objects.alter(q.name, switches)
        self.emit(PERFM_EVENTS, F.MQCMD_PERFM_EVENT, reason, params)

    # -- queue manager events: refusals of MQI calls ------------------------------------
    def refused(self, conn: Connection | None, reason: int, name: str, object_type: int = C.MQOT_Q,
                object_q_mgr: str = "") -> None:
        """An MQI call failed with ``reason`` on the object ``name``: the inhibit and local
        events it makes, when they are switched on."""
        if reason in (C.MQRC_PUT_INHIBITED, C.MQRC_GET_INHIBITED):
            if not self.on("INHIBTEV"):
                return
        elif reason == C.MQRC_UNKNOWN_OBJECT_NAME:
            if not self.on("LOCALEV"):
                return
        else:
            return
        params: list[P.Param] = [self._qmgr_name()]
        if reason == C.MQRC_UNKNOWN_OBJECT_NAME:
            params.append(P.CFIN(F.MQIACF_OBJECT_TYPE, object_type))
        params.append(P.CFST(C.MQCA_Q_NAME if object_type == C.MQOT_Q else F.MQCACF_OBJECT_NAME, name))
        params += [P.CFIN(C.MQIA_APPL_TYPE, conn.appl_type if conn is not None else C.MQAT_DEFAULT),
                   P.CFST(F.MQCACF_APPL_NAME, conn.appl_name if conn is not None else "")]
        if object_q_mgr and object_q_mgr != self.state.name:
            params.append(P.CFST(F.MQCACF_OBJECT_Q_MGR_NAME, object_q_mgr))
        if conn is not None and conn.conn_name:
            params.append(P.CFST(F.MQCACH_CONNECTION_NAME, conn.conn_name))
        self.emit(QMGR_EVENTS, F.MQCMD_Q_MGR_EVENT, reason, params)

    # -- authority events (AUTHOREV): what the OAM and channel authentication refused -----------
    def not_authorized(self, qualifier: int, user: str, *, appl_type: int = C.MQAT_DEFAULT, appl_name: str = "",
                       conn_name: str = "", channel: str = "", options: int | None = None,
                       object_type: int = C.MQOT_Q, object_name: str = "", command: int = 0) -> None:
        """A Not Authorized event (MQRC_NOT_AUTHORIZED) of IBM's type ``qualifier``:
        MQRQ_CONN_NOT_AUTHORIZED (QMgrName, ReasonQualifier, UserIdentifier, ApplType,
        ApplName, then ConnName and ChannelName for a client), MQRQ_OPEN_NOT_AUTHORIZED (with
        Options and the object's name), MQRQ_CMD_NOT_AUTHORIZED (Command, UserIdentifier)."""
        if not self.on("AUTHOREV"):
            return
        params: list[P.Param] = [self._qmgr_name(), P.CFIN(F.MQIACF_REASON_QUALIFIER, qualifier)]
        if qualifier == F.MQRQ_CMD_NOT_AUTHORIZED:
            params += [P.CFIN(F.MQIACF_COMMAND, command), P.CFST(F.MQCACF_USER_IDENTIFIER, user)]
        else:
            if options is not None:
                params.append(P.CFIN(F.MQIACF_OPEN_OPTIONS, options))
            params += [P.CFST(F.MQCACF_USER_IDENTIFIER, user), P.CFIN(C.MQIA_APPL_TYPE, appl_type),
                       P.CFST(F.MQCACF_APPL_NAME, appl_name)]
            if qualifier == F.MQRQ_OPEN_NOT_AUTHORIZED:
                params.append(P.CFST(_NAME_PARAM.get(object_type, F.MQCACF_OBJECT_NAME), object_name))
            if conn_name:
                params.append(P.CFST(F.MQCACH_CONNECTION_NAME, conn_name))
            if channel:
                params.append(P.CFST(F.MQCACH_CHANNEL_NAME, channel))
        self.emit(QMGR_EVENTS, F.MQCMD_Q_MGR_EVENT, C.MQRC_NOT_AUTHORIZED, params)

    def channel_blocked(self, qualifier: int, channel: str, conn_name: str, *, warning: bool = False,
                        user: str = "", client_user: str = "", remote_qmgr: str = "") -> None:
        """A Channel Blocked event (CHLEV ENABLED or EXCEPTION): a channel its channel
        authentication records refused (``warning``: a WARN(YES) record that let it run).
        QMgrName, ReasonQualifier, ChannelName (not for a blocked address, which IBM's
        listener refuses before the channel is known), UserIdentifier, ConnName, then the
        client's user or the remote queue manager."""
        if self.state.qmgr_attr("CHLEV") == _OFF:
            return
        params: list[P.Param] = [self._qmgr_name(), P.CFIN(F.MQIACF_REASON_QUALIFIER, qualifier)]
        if qualifier != F.MQRQ_CHANNEL_BLOCKED_ADDRESS:
            params.append(P.CFST(F.MQCACH_CHANNEL_NAME, channel))
        if user:
            params.append(P.CFST(F.MQCACF_USER_IDENTIFIER, user))
        params.append(P.CFST(F.MQCACH_CONNECTION_NAME, conn_name))
        if client_user:
            params.append(P.CFST(F.MQCACH_CLIENT_USER_ID, client_user))
        if remote_qmgr:
            params.append(P.CFST(C.MQCA_REMOTE_Q_MGR_NAME, remote_qmgr))
        self.emit(CHANNEL_EVENTS, F.MQCMD_CHANNEL_EVENT,
                  C.MQRC_CHANNEL_BLOCKED_WARNING if warning else C.MQRC_CHANNEL_BLOCKED, params)

    def subscribe_refused(self, conn: Connection | None, options: int, topic: str) -> None:
        """An MQSUB refused 2035 (MQRQ_SUB_NOT_AUTHORIZED): QMgrName, ReasonQualifier,
        Options, UserIdentifier, ApplType, ApplName, TopicString."""
        self._sub_refused(conn, F.MQRQ_SUB_NOT_AUTHORIZED, options, topic)

    def _sub_refused(self, conn: Connection | None, qualifier: int, options: int, topic: str,
                     *more: P.Param) -> None:
        """The Not Authorized events of MQSUB (types 17, 18): their common parameters, then ``more``."""
        if conn is None or not self.on("AUTHOREV"):
            return
        self.emit(QMGR_EVENTS, F.MQCMD_Q_MGR_EVENT, C.MQRC_NOT_AUTHORIZED, [
            self._qmgr_name(), P.CFIN(F.MQIACF_REASON_QUALIFIER, qualifier),
            P.CFIN(F.MQIACF_SUB_OPTIONS, options), P.CFST(F.MQCACF_USER_IDENTIFIER, conn.user),
            P.CFIN(C.MQIA_APPL_TYPE, conn.appl_type), P.CFST(F.MQCACF_APPL_NAME, conn.appl_name),
            P.CFST(C.MQCA_TOPIC_STRING, topic), *more])

    def close_refused(self, conn: Connection | None, name: str, *, subscription: bool = False) -> None:
        """An MQCLOSE refused 2035 (MQRQ_CLOSE_NOT_AUTHORIZED): deleting a permanent dynamic
        queue another handle made without +dlt, or removing a subscription (MQCO_REMOVE_SUB)
        of another user's or without +sub. QMgrName, ReasonQualifier, UserIdentifier,
        ApplType, ApplName, QName (for a subscription its SubName, MQCACF_SUB_NAME), ConnName."""
        if conn is None or not self.on("AUTHOREV"):
            return
        self.emit(QMGR_EVENTS, F.MQCMD_Q_MGR_EVENT, C.MQRC_NOT_AUTHORIZED, [
            self._qmgr_name(), P.CFIN(F.MQIACF_REASON_QUALIFIER, F.MQRQ_CLOSE_NOT_AUTHORIZED),
            P.CFST(F.MQCACF_USER_IDENTIFIER, conn.user), P.CFIN(C.MQIA_APPL_TYPE, conn.appl_type),
            P.CFST(F.MQCACF_APPL_NAME, conn.appl_name),
            P.CFST(F.MQCACF_SUB_NAME if subscription else C.MQCA_Q_NAME, name), *self._conn_name(conn)])

    def sub_destination_refused(self, conn: Connection | None, options: int, topic: str, queue: str,
                                open_options: int) -> None:
        """An MQSUB refused 2035 for its destination (MQRQ_SUB_DEST_NOT_AUTHORIZED): a queue
        the application gave without +put, or a resumed subscription's queue without +put,
        +get and +browse. QMgrName, ReasonQualifier, Options, UserIdentifier, ApplType,
        ApplName, TopicString, DestQName, DestOpenOptions, ConnName."""
        if conn is not None:
            self._sub_refused(conn, F.MQRQ_SUB_DEST_NOT_AUTHORIZED, options, topic, P.CFST(C.MQCA_Q_NAME, queue),
                              P.CFIN(F.MQIACF_OPEN_OPTIONS, open_options), *self._conn_name(conn))

    @staticmethod
    def _conn_name(conn: Connection) -> list[P.Param]:
        return [P.CFST(F.MQCACH_CONNECTION_NAME, conn.conn_name)] if conn.conn_name else []

    def open_refused(self, conn: Connection | None, options: int, object_type: int, name: str) -> None:
        """An MQOPEN (or the open an MQPUT1 implies) refused 2035 by the OAM."""
        if conn is None or not self.on("AUTHOREV"):
            return
        self.not_authorized(F.MQRQ_OPEN_NOT_AUTHORIZED, conn.user, appl_type=conn.appl_type,
                            appl_name=conn.appl_name, conn_name=conn.conn_name, options=options,
                            object_type=object_type, object_name=name)

    # -- start and stop ------------------------------------------------------------------
    def started(self) -> None:
        """The queue manager is active (STRSTPEV)."""
        if self.on("STRSTPEV"):
            self.emit(QMGR_EVENTS, F.MQCMD_Q_MGR_EVENT, C.MQRC_Q_MGR_ACTIVE, [self._qmgr_name()])

    def stopping(self, quiescing: bool) -> None:
        """The queue manager is ending (STRSTPEV): quiescing, or now."""
        if self.on("STRSTPEV"):
            qualifier = F.MQRQ_Q_MGR_QUIESCING if quiescing else F.MQRQ_Q_MGR_STOPPING
            self.emit(QMGR_EVENTS, F.MQCMD_Q_MGR_EVENT, C.MQRC_Q_MGR_NOT_ACTIVE,
                      [self._qmgr_name(), P.CFIN(F.MQIACF_REASON_QUALIFIER, qualifier)])

    # -- configuration and command events ------------------------------------------------
    def configured(self, reason: int, object_type: int, name_param: int, name: str,
                   attributes: Sequence[P.Param], before: Sequence[P.Param] = (), user: str = "") -> None:
        """An object was created, changed (``before``: its attributes before) or deleted."""
        if not self.on("CONFIGEV"):
            return
        context: list[P.Param] = [P.CFST(F.MQCACF_EVENT_USER_ID, user), P.CFIN(F.MQIACF_EVENT_ORIGIN, F.MQEVO_MSG),
                                  P.CFST(F.MQCACF_EVENT_Q_MGR, self.state.name),
                                  P.CFIN(F.MQIACF_OBJECT_TYPE, object_type)]
        if not any(p.parameter == name_param for p in attributes):  # the attributes name it first
            context.append(P.CFST(name_param, name))
        if reason == C.MQRC_CONFIG_CHANGE_OBJECT:
            correl = self.state.new_id()
            self.emit(CONFIG_EVENTS, F.MQCMD_CONFIG_EVENT, reason, [*context, *before], seq=1, last=False,
                      correl_id=correl)
            self.emit(CONFIG_EVENTS, F.MQCMD_CONFIG_EVENT, reason, [*context, *attributes], seq=2, correl_id=correl)
            return
        self.emit(CONFIG_EVENTS, F.MQCMD_CONFIG_EVENT, reason, [*context, *attributes])

    def commanded(self, command: int, data: Sequence[P.Param], inquiry: bool, user: str = "") -> None:
        """A command was run by the command server (CMDEV; NODISPLAY leaves out inquiries)."""
        switch = self.state.qmgr_attr("CMDEV")
        if switch == _OFF or (switch == F.MQEVR_NO_DISPLAY and inquiry):
            return
        context = P.CFGR(F.MQGACF_COMMAND_CONTEXT, (
            P.CFST(F.MQCACF_EVENT_USER_ID, user), P.CFIN(F.MQIACF_EVENT_ORIGIN, F.MQEVO_MSG),
            P.CFST(F.MQCACF_EVENT_Q_MGR, self.state.name), P.CFIN(F.MQIACF_COMMAND, command)))
        self.emit(COMMAND_EVENTS, F.MQCMD_COMMAND_EVENT, C.MQRC_COMMAND_PCF,
                  [context, P.CFGR(F.MQGACF_COMMAND_DATA, tuple(data))])

    # -- channel events (CHLEV): what the channel agents report -------------------------
    def _channel(self, exception: bool) -> bool:
        """Whether CHLEV lets a channel event through: ENABLED all, EXCEPTION only the
        ``exception`` ones (IBM: not Channel Started, not Channel Stopped with
        MQRQ_CHANNEL_STOPPED_OK)."""
        switch = self.state.qmgr_attr("CHLEV")
        return switch == _ON or (exception and switch == F.MQEVR_EXCEPTION)

    def _channel_event(self, reason: int, params: list[P.Param]) -> None:
        self.emit(CHANNEL_EVENTS, F.MQCMD_CHANNEL_EVENT, reason, params)

    def _where(self, xmitq: str, conn_name: str) -> list[P.Param]:
        """XmitQName (sending channels only) and ConnectionName, last in every channel event."""
        where: list[P.Param] = [P.CFST(F.MQCACH_XMIT_Q_NAME, xmitq)] if xmitq else []
        return [*where, P.CFST(F.MQCACH_CONNECTION_NAME, conn_name)]

    def channel_started(self, channel: str, xmitq: str, conn_name: str) -> None:
        """Channel Started: an instance finished its initial data exchange and may move messages."""
        if self._channel(exception=False):
            self._channel_event(C.MQRC_CHANNEL_STARTED, [self._qmgr_name(), P.CFST(F.MQCACH_CHANNEL_NAME, channel),
                                                         *self._where(xmitq, conn_name)])

    def channel_stopped(self, channel: str, qualifier: int, xmitq: str, conn_name: str, *, error: int = 0,
                        detail: str = "") -> None:
        """Channel Stopped: an instance that had started ended; ``qualifier`` MQRQ_CHANNEL_STOPPED_*
        says how (OK, ERROR, RETRY, DISABLED), ``error`` the reason it failed with (ErrorIdentifier
        and AuxErrorDataInt1), ``detail`` its text (AuxErrorDataStr1)."""
        if not self._channel(exception=qualifier != F.MQRQ_CHANNEL_STOPPED_OK):
            return
        self._channel_event(C.MQRC_CHANNEL_STOPPED, [
            self._qmgr_name(), P.CFIN(F.MQIACF_REASON_QUALIFIER, qualifier), P.CFST(F.MQCACH_CHANNEL_NAME, channel),
            P.CFIN(F.MQIACF_ERROR_IDENTIFIER, error), P.CFIN(F.MQIACF_AUX_ERROR_DATA_INT_1, error),
            P.CFIN(F.MQIACF_AUX_ERROR_DATA_INT_2, 0), P.CFST(F.MQCACF_AUX_ERROR_DATA_STR_1, detail[:_AUX_TEXT]),
            P.CFST(F.MQCACF_AUX_ERROR_DATA_STR_2, ""), P.CFST(F.MQCACF_AUX_ERROR_DATA_STR_3, ""),
            *self._where(xmitq, conn_name)])

    def channel_ssl_error(self, qualifier: int, channel: str, conn_name: str, *, xmitq: str = "", stage: str = "",
                          return_code: int = 0, peer_name: str = "") -> None:
        """Channel SSL Error (SSLEV): a channel using TLS could not start; ``qualifier``
        MQRQ_SSL_*. IBM's order: QMgrName, ReasonQualifier, ChannelName (blank: not known
        yet, as at a handshake that failed before the channel was named: left out),
        XmitQName (sending channels), ConnectionName, then SSLHandshakeStage and
        SSLReturnCode for a handshake error, SSLPeerName for a peer name error."""
        if self.state.qmgr_attr("SSLEV") == _OFF:
            return
        params: list[P.Param] = [self._qmgr_name(), P.CFIN(F.MQIACF_REASON_QUALIFIER, qualifier)]
        if channel:
            params.append(P.CFST(F.MQCACH_CHANNEL_NAME, channel))
        params += self._where(xmitq, conn_name)
        if qualifier == F.MQRQ_SSL_HANDSHAKE_ERROR:
            params += [P.CFST(F.MQCACH_SSL_HANDSHAKE_STAGE, stage[:C.MQ_SSL_HANDSHAKE_STAGE_LENGTH]),
                       P.CFIN(F.MQIACH_SSL_RETURN_CODE, return_code)]
        elif qualifier == F.MQRQ_SSL_PEER_NAME_ERROR:
            params.append(P.CFST(F.MQCACH_SSL_PEER_NAME, peer_name))
        self._channel_event(C.MQRC_CHANNEL_SSL_ERROR, params)

    def channel_not_available(self, qualifier: int, channel: str, conn_name: str, limit: int) -> None:
        """Channel Not Available (2537; CHLEV ENABLED or EXCEPTION, as Channel Blocked): a
        client refused because its channel reached MAXINST (MQRQ_SVRCONN_INST_LIMIT) or
        MAXINSTC from its address (MQRQ_CLIENT_INST_LIMIT). QMgrName, ReasonQualifier,
        ChannelName, ConnectionName, then the limit reached: MaximumInstances or
        MaximumClientInstances."""
        if self.state.qmgr_attr("CHLEV") == _OFF:
            return
        which = F.MQIACH_MAX_INSTANCES if qualifier == F.MQRQ_SVRCONN_INST_LIMIT else F.MQIACH_MAX_INSTS_PER_CLIENT
        self._channel_event(C.MQRC_CHANNEL_NOT_AVAILABLE, [
            self._qmgr_name(), P.CFIN(F.MQIACF_REASON_QUALIFIER, qualifier), P.CFST(F.MQCACH_CHANNEL_NAME, channel),
            P.CFST(F.MQCACH_CONNECTION_NAME, conn_name), P.CFIN(which, limit)])

    def channel_ssl_warning(self, qualifier: int, channel: str, conn_name: str, *, xmitq: str = "") -> None:
        """Channel SSL Warning (SSLEV, MQRC_CHANNEL_SSL_WARNING): a TLS problem that let the
        channel start, as IBM's only one, MQRQ_SSL_UNKNOWN_REVOCATION (OCSPAuthentication
        WARN and the certificate's revocation status not known). QMgrName, ReasonQualifier,
        ChannelName (left out when not known yet), XmitQName (sending channels),
        ConnectionName."""
        if self.state.qmgr_attr("SSLEV") == _OFF:
            return
        params: list[P.Param] = [self._qmgr_name(), P.CFIN(F.MQIACF_REASON_QUALIFIER, qualifier)]
        if channel:
            params.append(P.CFST(F.MQCACH_CHANNEL_NAME, channel))
        self._channel_event(C.MQRC_CHANNEL_SSL_WARNING, params + self._where(xmitq, conn_name))

    def channel_stopped_by_user(self, channel: str) -> None:
        """Channel Stopped By User: STOP CHANNEL ended a running instance (an exception event)."""
        if self._channel(exception=True):
            self._channel_event(C.MQRC_CHANNEL_STOPPED_BY_USER, [
                self._qmgr_name(), P.CFIN(F.MQIACF_REASON_QUALIFIER, F.MQRQ_CHANNEL_STOPPED_DISABLED),
                P.CFST(F.MQCACH_CHANNEL_NAME, channel)])

    def channel_conversion_error(self, channel: str, conversion_reason: int, fmt: str, xmitq: str,
                                 conn_name: str) -> None:
        """Channel Conversion Error: a sender with CONVERT(YES) could not convert a message
        of format ``fmt`` (ConversionReasonCode: why); it is sent as it was."""
        if self._channel(exception=True):
            self._channel_event(C.MQRC_CHANNEL_CONV_ERROR, [
                self._qmgr_name(), P.CFIN(F.MQIACF_CONV_REASON_CODE, conversion_reason),
                P.CFST(F.MQCACH_CHANNEL_NAME, channel), P.CFST(F.MQCACH_FORMAT_NAME, fmt),
                *self._where(xmitq, conn_name)])


_AUX_TEXT = 64  # characters of an error's text in AuxErrorDataStr1 (IBM's inserts are as short)

# The parameter naming the object of an open Not Authorized event, by object type.
_NAME_PARAM = {C.MQOT_Q: C.MQCA_Q_NAME, C.MQOT_Q_MGR: C.MQCA_Q_MGR_NAME, C.MQOT_TOPIC: C.MQCA_TOPIC_NAME,
               C.MQOT_NAMELIST: C.MQCA_NAMELIST_NAME, C.MQOT_PROCESS: C.MQCA_PROCESS_NAME}


def _percent(q: QueueObject, limit: str) -> int:
    """QDEPTHHI / QDEPTHLO as a number of messages (a percentage of MAXDEPTH)."""
    return int(q.attrs.get("MAXDEPTH", 0)) * int(q.attrs.get(limit, 0)) // 100
