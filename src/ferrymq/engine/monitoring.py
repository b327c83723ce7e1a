"""Statistics and accounting messages: PCF messages in IBM's layout that say what the MQI
did, switched by the queue manager's attributes (and a queue's own STATQ/ACCTQ).

| switch (QMGR)   | message (MQCFH Command)        | queue                          | when                        |
|-----------------|--------------------------------|--------------------------------|-----------------------------|
| STATMQI(ON)     | MQI statistics (164)           | SYSTEM.ADMIN.STATISTICS.QUEUE  | every STATINT seconds, and  |
| STATQ           | queue statistics (165)         | SYSTEM.ADMIN.STATISTICS.QUEUE  | at RESET QMGR TYPE(STATISTICS) |
| STATCHL         | channel statistics (166)       | SYSTEM.ADMIN.STATISTICS.QUEUE  | (the same)                  |
| ACCTMQI(ON)     | MQI accounting (167)           | SYSTEM.ADMIN.ACCOUNTING.QUEUE  | at MQDISC, and every ACCTINT |
| ACCTQ           | queue accounting (168)         | SYSTEM.ADMIN.ACCOUNTING.QUEUE  | for a longer connection     |

A channel instance collects statistics (engine.chlcontrol.ChannelCounts, counted by its
agent in ferrymq.channels) when, as it starts, its STATCHL is LOW/MEDIUM/HIGH and the queue
manager's not NONE, or QMGR and the queue manager's LOW/MEDIUM/HIGH.

A queue collects statistics when its STATQ is ON (and the queue manager's is not NONE) or
QMGR (and the queue manager's is ON); ACCTQ likewise for accounting. As IBM has it, a
queue's statistics start at its next MQOPEN after they are switched on; a connection's MQI
accounting is decided when it connects (ACCTMQI), its accounting of a queue at each MQOPEN.

The message: an MQMD as an event's (MsgType DATAGRAM, PutApplType MQAT_QMGR) but of Format
MQADMIN; an MQCFH version 3 of Type MQCFT_STATISTICS or MQCFT_ACCOUNTING, CompCode MQCC_OK;
then IBM's parameters. Arrays follow IBM's reference notes: by persistence (index 0
non-persistent, 1 persistent) or by object type (13 entries, MQOT_Q at 1). A queue message
holds at most 100 groups (QStatisticsData, QAccountingData); more go in further messages
whose MsgSeqNumber counts up, the last with Control MQCFC_LAST. Dates and times are
``YYYY-MM-DD`` and ``HH.MM.SS`` in the queue manager's local time (as IBM writes them);
times on queue are in microseconds. ApplicationPid and ApplicationTid are what the client
said at CONNECT (0 for an older client, and for the queue manager's own connections).

ACCTCONO(ENABLED) lets a connection's MQCNO_ACCOUNTING_MQI_/Q_ENABLED or _DISABLED stand for
ACCTMQI and ACCTQ (the queue manager's) for that connection; DISABLED ignores them.

The hot path pays one test, ``Monitor.on``, false until something collects; then each put,
get and browse adds to the counters its queue, connection and the queue manager hold.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence

from ferrymq.engine import attrs as A
from ferrymq.engine.api import PutRequest, PutResult
from ferrymq.engine.chlcontrol import ChannelCounts, ChannelStatus
from ferrymq.engine.objects import QueueObject
from ferrymq.engine.session import Connection, UnitOfWork, connection_id
from ferrymq.engine.state import EngineState
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.wire import pcf as P
from ferrymq.wire.mqmd import MQMD

log = logging.getLogger("ferrymq.engine")

STATISTICS_QUEUE = "SYSTEM.ADMIN.STATISTICS.QUEUE"
ACCOUNTING_QUEUE = "SYSTEM.ADMIN.ACCOUNTING.QUEUE"
GROUPS_PER_MESSAGE = 100
OBJECT_TYPES = 13  # IBM's arrays indexed by object type: 13 entries, only some meaningful
_ON, _NONE, _QMGR = C.MQMON_ON, C.MQMON_NONE, C.MQMON_Q_MGR
_QTYPE = {A.QLOCAL: C.MQQT_LOCAL, A.QMODEL: C.MQQT_MODEL}
_ACCT_MQI_OPTIONS = C.MQCNO_ACCOUNTING_MQI_ENABLED | C.MQCNO_ACCOUNTING_MQI_DISABLED

Deliver = Callable[[MQMD, bytes, str, str, UnitOfWork | None], None]


def _not_bound(md: MQMD, data: bytes, queue: str, qmgr: str, uow: UnitOfWork | None) -> None:  # pragma: no cover
    raise RuntimeError("Monitor used before deliver_with")


NONE_YET = 1 << 62  # a minimum not yet seen (shown as 0)


def stamp(when: float) -> tuple[str, str]:
    """``YYYY-MM-DD`` and ``HH.MM.SS`` in the queue manager's local time: IBM writes the
    times of these messages so outside z/OS (as it does an object's CRDATE/CRTIME)."""
    t = time.localtime(when)
    return time.strftime("%Y-%m-%d", t), time.strftime("%H.%M.%S", t)


def _least(value: int) -> int:
    return 0 if value == NONE_YET else value


def _by_type() -> list[int]:
    return [0] * OBJECT_TYPES


class Operations:
    """What one connection, or the whole queue manager, did in an interval (the MQI part
    of accounting and statistics messages)."""

    __slots__ = ("backouts", "browse_bytes", "browse_fails", "browses", "close_fails", "closes", "commit_fails",
                 "commits", "conns", "conns_failed", "conns_max", "discs", "expired", "get_bytes", "get_fails", "gets",
                 "inq_fails", "inqs", "open_fails", "opens", "published", "published_bytes", "purged", "put1_fails",
                 "put1s", "put_bytes", "put_fails", "puts", "set_fails", "sets", "start", "sub_fails", "subrq_fails",
                 "subrqs", "subs_dur", "subs_ndur", "topic_put1_fails", "topic_put1s", "topic_put_bytes",
                 "topic_put_fails", "topic_puts", "unsub_fails", "unsubs_dur", "unsubs_ndur")

    def __init__(self, start: float) -> None:
        self.start = start
        self.conns = self.conns_failed = self.conns_max = 0
        self.discs = [0, 0, 0]  # by MQDISCONNECT_*: normal, implicit, queue manager
        self.opens, self.open_fails, self.closes, self.close_fails = _by_type(), _by_type(), _by_type(), _by_type()
        self.inqs, self.inq_fails, self.sets, self.set_fails = _by_type(), _by_type(), _by_type(), _by_type()
        self.puts, self.put1s, self.put_bytes = [0, 0], [0, 0], [0, 0]
        self.gets, self.get_bytes, self.browses, self.browse_bytes = [0, 0], [0, 0], [0, 0], [0, 0]
        self.put_fails = self.put1_fails = self.get_fails = self.browse_fails = 0
        self.commits = self.commit_fails = self.backouts = self.expired = self.purged = 0
        # publish/subscribe: MQSUB by what it did (created, altered, resumed), MQCLOSE of a
        # subscription by what became of it (kept, removed), puts to topics by persistence,
        # and the copies delivered to subscribers (statistics only)
        self.subs_dur, self.subs_ndur, self.unsubs_dur, self.unsubs_ndur = [0, 0, 0], [0, 0, 0], [0, 0], [0, 0]
        self.sub_fails = self.unsub_fails = self.subrqs = self.subrq_fails = 0
        self.topic_puts, self.topic_put1s, self.topic_put_bytes = [0, 0], [0, 0], [0, 0]
        self.topic_put_fails = self.topic_put1_fails = 0
        self.published, self.published_bytes = [0, 0], [0, 0]

    def api(self) -> list[P.Param]:
        """The counts both MQI messages carry, in the accounting message's order."""
        return [P.CFIL(F.MQIAMO_OPENS, tuple(self.opens)), P.CFIL(F.MQIAMO_OPENS_FAILED, tuple(self.open_fails)),
                P.CFIL(F.MQIAMO_CLOSES, tuple(self.closes)), P.CFIL(F.MQIAMO_CLOSES_FAILED, tuple(self.close_fails)),
                P.CFIL(F.MQIAMO_PUTS, tuple(self.puts)), P.CFIN(F.MQIAMO_PUTS_FAILED, self.put_fails),
                P.CFIL(F.MQIAMO_PUT1S, tuple(self.put1s)), P.CFIN(F.MQIAMO_PUT1S_FAILED, self.put1_fails),
                P.CFIL64(F.MQIAMO64_PUT_BYTES, tuple(self.put_bytes)),
                P.CFIL(F.MQIAMO_GETS, tuple(self.gets)), P.CFIN(F.MQIAMO_GETS_FAILED, self.get_fails),
                P.CFIL64(F.MQIAMO64_GET_BYTES, tuple(self.get_bytes)),
                P.CFIL(F.MQIAMO_BROWSES, tuple(self.browses)), P.CFIN(F.MQIAMO_BROWSES_FAILED, self.browse_fails),
                P.CFIL64(F.MQIAMO64_BROWSE_BYTES, tuple(self.browse_bytes)),
                P.CFIN(F.MQIAMO_COMMITS, self.commits), P.CFIN(F.MQIAMO_COMMITS_FAILED, self.commit_fails),
                P.CFIN(F.MQIAMO_BACKOUTS, self.backouts),
                P.CFIL(F.MQIAMO_INQS, tuple(self.inqs)), P.CFIL(F.MQIAMO_INQS_FAILED, tuple(self.inq_fails)),
                P.CFIL(F.MQIAMO_SETS, tuple(self.sets)), P.CFIL(F.MQIAMO_SETS_FAILED, tuple(self.set_fails)),
                P.CFIL(F.MQIAMO_SUBS_DUR, tuple(self.subs_dur)), P.CFIL(F.MQIAMO_SUBS_NDUR, tuple(self.subs_ndur)),
                P.CFIN(F.MQIAMO_SUBS_FAILED, self.sub_fails),
                P.CFIL(F.MQIAMO_UNSUBS_DUR, tuple(self.unsubs_dur)),
                P.CFIL(F.MQIAMO_UNSUBS_NDUR, tuple(self.unsubs_ndur)),
                P.CFIN(F.MQIAMO_UNSUBS_FAILED, self.unsub_fails),
                P.CFIN(F.MQIAMO_SUBRQS, self.subrqs), P.CFIN(F.MQIAMO_SUBRQS_FAILED, self.subrq_fails),
                P.CFIL(F.MQIAMO_TOPIC_PUTS, tuple(self.topic_puts)),
                P.CFIN(F.MQIAMO_TOPIC_PUTS_FAILED, self.topic_put_fails),
                P.CFIL(F.MQIAMO_TOPIC_PUT1S, tuple(self.topic_put1s)),
                P.CFIN(F.MQIAMO_TOPIC_PUT1S_FAILED, self.topic_put1_fails),
                P.CFIL64(F.MQIAMO64_TOPIC_PUT_BYTES, tuple(self.topic_put_bytes))]

    def statistics(self) -> list[P.Param]:
        """The MQI statistics message's counts, after its common header."""
        return [P.CFIN(F.MQIAMO_CONNS, self.conns), P.CFIN(F.MQIAMO_CONNS_FAILED, self.conns_failed),
                P.CFIN(F.MQIAMO_CONNS_MAX, self.conns_max), P.CFIL(F.MQIAMO_DISCS, tuple(self.discs)),
                *self.api(),
                P.CFIL(F.MQIAMO_PUBLISH_MSG_COUNT, tuple(self.published)),
                P.CFIL64(F.MQIAMO64_PUBLISH_MSG_BYTES, tuple(self.published_bytes)),
                P.CFIN(F.MQIAMO_MSGS_EXPIRED, self.expired), P.CFIN(F.MQIAMO_MSGS_PURGED, self.purged)]


class QueueCounts:
    """One queue's counts in an interval: the queue manager's (statistics) or one
    connection's (accounting)."""

    __slots__ = ("browse_bytes", "browse_fails", "browse_max", "browse_min", "browses", "close_at", "expired",
                 "get_bytes", "get_fails", "get_max", "get_min", "gets", "max_depth", "min_depth", "open_at",
                 "opens", "purged", "put1_fails", "put1s", "put_bytes", "put_fails", "put_max", "put_min", "puts",
                 "time_max", "time_min", "time_n", "time_sum", "used")

    def __init__(self, depth: int = 0) -> None:
        self.min_depth = self.max_depth = depth
        self.puts, self.put1s, self.put_bytes = [0, 0], [0, 0], [0, 0]
        self.gets, self.get_bytes, self.browses, self.browse_bytes = [0, 0], [0, 0], [0, 0], [0, 0]
        self.time_sum, self.time_n = [0, 0], [0, 0]
        self.put_fails = self.put1_fails = self.get_fails = self.browse_fails = self.expired = self.purged = 0
        self.put_min = self.get_min = self.browse_min = self.time_min = NONE_YET
        self.put_max = self.get_max = self.browse_max = self.time_max = 0
        self.opens = 0
        self.open_at = self.close_at = 0.0
        self.used = False  # anything happened to it in the interval

    # put and got run on the MQI's path while collecting: plain statements, no calls
    def put(self, p: int, n: int, size: int, put1: bool, depth: int) -> None:
        (self.put1s if put1 else self.puts)[p] += n
        self.put_bytes[p] += size
        each = size if n == 1 else size // n
        if each < self.put_min:
            self.put_min = each
        if each > self.put_max:
            self.put_max = each
        if depth > self.max_depth:
            self.max_depth = depth
        self.used = True

    def got(self, p: int, size: int, waited: int, browse: bool, depth: int) -> None:
        self.used = True
        if browse:
            self.browses[p] += 1
            self.browse_bytes[p] += size
            if size < self.browse_min:
                self.browse_min = size
            if size > self.browse_max:
                self.browse_max = size
            return
        self.gets[p] += 1
        self.get_bytes[p] += size
        if size < self.get_min:
            self.get_min = size
        if size > self.get_max:
            self.get_max = size
        self.time_sum[p] += waited
        self.time_n[p] += 1
        if waited < self.time_min:
            self.time_min = waited
        if waited > self.time_max:
            self.time_max = waited
        if depth < self.min_depth:
            self.min_depth = depth

    def average_times(self) -> tuple[int, int]:
        return (self.time_sum[0] // self.time_n[0] if self.time_n[0] else 0,
                self.time_sum[1] // self.time_n[1] if self.time_n[1] else 0)

    def counts(self) -> list[P.Param]:
        return [P.CFIL(F.MQIAMO_PUTS, tuple(self.puts)), P.CFIN(F.MQIAMO_PUTS_FAILED, self.put_fails),
                P.CFIL(F.MQIAMO_PUT1S, tuple(self.put1s)), P.CFIN(F.MQIAMO_PUT1S_FAILED, self.put1_fails),
                P.CFIL64(F.MQIAMO64_PUT_BYTES, tuple(self.put_bytes))]


class Accounting:
    """A connection's accounting: its MQI counts (ACCTMQI) and per-queue counts (ACCTQ)."""

    __slots__ = ("mqi", "queues", "seq", "start")

    def __init__(self, start: float, mqi: bool) -> None:
        self.start = start
        self.seq = 0
        self.mqi = Operations(start) if mqi else None
        self.queues: dict[str, QueueCounts] = {}

    def next(self, now: float) -> Accounting:
        """The next interval's: the same switches, the queues it has open carried on."""
        fresh = Accounting(now, self.mqi is not None)
        fresh.seq = self.seq + 1
        fresh.queues = {name: QueueCounts() for name in self.queues}
        return fresh


def _type_of(object_type: int) -> int:
    return object_type if 0 <= object_type < OBJECT_TYPES else 0


class Monitor:
    """The statistics and accounting of one queue manager (see the module docstring)."""

    def __init__(self, state: EngineState) -> None:
        self.state = state
        self.objects = state.objects
        self.queues, self.connections, self.name = state.objects.queues, state.connections, state.name
        self.deliver: Deliver = _not_bound
        self.clock = state.clock.now
        self.on = False  # anything collects: the one test the hot path makes
        self.mqi: Operations | None = None  # STATMQI's counts for this interval
        self.start = state.clock.now()  # this statistics interval's
        self.epoch = -1  # the registry epoch the switches were read at
        self.connected = 0  # connections now, for ConnsMax

    def deliver_with(self, deliver: Deliver) -> None:
        """Bind how the messages are delivered (engine.reports), once at composition."""
        self.deliver = deliver

    # -- switches --------------------------------------------------------------------------
    def _switches(self) -> None:
        """Read the queue manager's switches again after an ALTER (the registry's epoch moved)."""
        self.epoch = self.objects.epoch
        if self.state.qmgr_attr("STATMQI") == _ON:
            if self.mqi is None:
                self.mqi = Operations(self.state.clock.now())
                self.mqi.conns_max = self.connected
        else:
            self.mqi = None
        self._recount()

    def _recount(self) -> None:
        self.on = (self.mqi is not None or any(q.stats is not None for q in self.objects.queues.values())
                   or any(c.acct is not None for c in self.state.connections.values()))

    def _wanted(self, q: QueueObject, attr: str, conn: Connection | None = None) -> bool:
        own = q.attrs.get(attr, _QMGR)
        qmgr = self.state.qmgr_attr(attr) if conn is None else self._acct_q(conn)
        return (own == _ON and qmgr != _NONE) or (own == _QMGR and qmgr == _ON)

    def _acct_q(self, conn: Connection) -> int:
        """The queue manager's ACCTQ as this connection has it: MQCNO_ACCOUNTING_Q_ENABLED or
        _DISABLED (kept only under ACCTCONO(ENABLED)) stand for ON or OFF; NONE stays NONE."""
        qmgr: int = self.state.qmgr_attr("ACCTQ")
        o = conn.cno_options
        if not o or qmgr == _NONE:
            return qmgr
        return _ON if o & C.MQCNO_ACCOUNTING_Q_ENABLED else C.MQMON_OFF if o & C.MQCNO_ACCOUNTING_Q_DISABLED else qmgr

    # -- what the MQI did (called by the QueueManager facade and the getter) ---------------
    def connected_now(self, conn: Connection) -> None:
        if self.epoch != self.objects.epoch:
            self._switches()
        self.connected += 1
        now = self.state.clock.now()
        conn.connected_at = now
        if self.mqi is not None:
            self.mqi.conns += 1
            self.mqi.conns_max = max(self.mqi.conns_max, self.connected)
        if self.state.qmgr_attr("ACCTCONO") != C.MQMON_ENABLED:
            conn.cno_options = 0  # IBM ignores MQCNO_ACCOUNTING_* then, without an error
        o = conn.cno_options
        acct_mqi = (o & C.MQCNO_ACCOUNTING_MQI_ENABLED != 0 if o & _ACCT_MQI_OPTIONS
                    else self.state.qmgr_attr("ACCTMQI") == _ON)
        if acct_mqi or self._acct_q(conn) == _ON:
            conn.acct = Accounting(now, acct_mqi)
            self.on = True

    def connect_failed(self) -> None:
        if self.mqi is not None:
            self.mqi.conns_failed += 1

    def disconnected(self, conn: Connection, disc_type: int) -> None:
        self.connected = max(0, self.connected - 1)
        if self.mqi is not None:
            self.mqi.discs[disc_type] += 1
        acct = conn.acct
        if acct is not None:
            conn.acct = None
            self._account(conn, acct, self.state.clock.now(), disc_type)

    def opened(self, conn: Connection | None, q: QueueObject | None, object_type: int) -> None:
        if self.epoch != self.objects.epoch:
            self._switches()
        acct = conn.acct if conn is not None else None
        if q is not None and q.is_local:
            if not self._wanted(q, "STATQ"):
                q.stats = None
            elif q.stats is None:
                q.stats = QueueCounts(q.messages.depth)
                self.on = True
            if q.stats is not None:
                q.stats.used = True
            if conn is not None and self._wanted(q, "ACCTQ", conn):
                if acct is None:  # a queue's own ACCTQ(ON) accounts for any connection that opens it
                    acct = conn.acct = Accounting(self.state.clock.now(), False)
                    self.on = True
                counts = acct.queues.get(q.name)
                if counts is None:
                    counts = acct.queues[q.name] = QueueCounts(q.messages.depth)
                    counts.open_at = self.state.clock.now()
                counts.opens += 1
                counts.used = True
        if not self.on:
            return
        t = _type_of(object_type)
        if self.mqi is not None:
            self.mqi.opens[t] += 1
        if acct is not None and acct.mqi is not None:
            acct.mqi.opens[t] += 1

    @staticmethod
    def _counts(conn: Connection | None, q: QueueObject | None) -> list[QueueCounts]:
        """The counts of ``q`` that collect: the queue's statistics, the connection's accounting."""
        if q is None:
            return []
        out = [] if q.stats is None else [q.stats]
        acct = conn.acct if conn is not None else None
        if acct is not None and q.name in acct.queues:
            out.append(acct.queues[q.name])
        return out

    def _each(self, conn: Connection | None) -> Iterable[Operations]:
        if self.mqi is not None:
            yield self.mqi
        acct = conn.acct if conn is not None else None
        if acct is not None and acct.mqi is not None:
            yield acct.mqi

    def counted(self, conn: Connection | None, what: str, object_type: int, ok: bool) -> None:
        """An MQOPEN that failed, an MQCLOSE, MQINQ or MQSET (``what``: its Operations list)."""
        if not self.on:
            return
        t = _type_of(object_type)
        for ops in self._each(conn):
            getattr(ops, what if ok else what[:-1] + "_fails")[t] += 1
        if what == "closes" and ok and conn is not None and conn.acct is not None:
            now = self.state.clock.now()
            for counts in conn.acct.queues.values():
                counts.close_at = now

    def unit(self, conn: Connection | None, committed: bool, ok: bool) -> None:
        if not self.on:
            return
        for ops in self._each(conn):
            if not committed:
                ops.backouts += 1
            elif ok:
                ops.commits += 1
            else:
                ops.commit_fails += 1

    def put_done(self, req: PutRequest, r: PutResult) -> None:
        """A put that succeeded (a run: each message that did)."""
        conn = self.connections.get(req.hconn)
        q = self.queues.get(r.resolved_q_name)
        if q is None and self._to_topic(conn, req):  # a publication resolves to no queue (""): tested second
            p = 1 if r.md.persistence == C.MQPER_PERSISTENT else 0
            sizes = [len(req.data)] if req.datas is None else [
                len(d) for d, o in zip(req.datas, r.outcomes or [], strict=False) if o is None or o.comp != C.MQCC_FAILED]
            failures = 0 if req.datas is None else len(req.datas) - len(sizes)
            for ops in self._each(conn):
                (ops.topic_put1s if req.od is not None else ops.topic_puts)[p] += len(sizes)
                ops.topic_put_bytes[p] += sum(sizes)
                ops.topic_put_fails += failures
                if req.od is not None:  # MQPUT1 opens and closes its topic
                    ops.opens[C.MQOT_TOPIC] += 1
                    ops.closes[C.MQOT_TOPIC] += 1
            return
        if q is not None and r.resolved_q_mgr_name not in (self.name, ""):
            q = None  # bound for another queue manager: counted for the MQI, not a queue here
        if req.datas is None:
            self.put(conn, q, r.md.persistence == C.MQPER_PERSISTENT, 1, len(req.data), req.od is not None)
            if req.od is not None:
                self._put1_open(conn)
            return
        outcomes = r.outcomes or []
        done = [len(d) for d, o in zip(req.datas, outcomes, strict=False) if o is None or o.comp == C.MQCC_WARNING]
        for o in outcomes:
            if o is not None and o.comp == C.MQCC_FAILED:
                self.put_failed(conn, q, False)
        if done:
            self.put(conn, q, r.md.persistence == C.MQPER_PERSISTENT, len(done), sum(done), False)

    @staticmethod
    def _to_topic(conn: Connection | None, req: PutRequest) -> bool:
        """The put is a publication (IBM counts those as topic puts, not queue puts)."""
        if req.od is not None:
            return req.od.object_type == C.MQOT_TOPIC
        h = conn.handles.get(req.hobj) if conn is not None else None
        return h is not None and h.topic is not None

    def _put1_open(self, conn: Connection | None) -> None:
        for ops in self._each(conn):  # MQPUT1 opens and closes its queue (IBM counts both)
            ops.opens[C.MQOT_Q] += 1
            ops.closes[C.MQOT_Q] += 1

    def put_refused(self, req: PutRequest) -> None:
        """A put that failed."""
        conn = self.state.connections.get(req.hconn)
        if self._to_topic(conn, req):
            for ops in self._each(conn):
                if req.od is not None:
                    ops.topic_put1_fails += 1
                else:
                    ops.topic_put_fails += 1
            return
        if req.od is not None:
            q = self.objects.queues.get(req.od.object_name.strip())
        else:
            h = conn.handles.get(req.hobj) if conn is not None else None
            q = h.queue if h is not None else None
        self.put_failed(conn, q, req.od is not None)

    # -- publish/subscribe (not on the point-to-point path) ----------------------------------
    def subscribed(self, conn: Connection | None, durable: bool, done: int | None) -> None:
        """An MQSUB that ``done`` 0 (created), 1 (altered) or 2 (resumed) a subscription, or
        (None) failed."""
        for ops in self._each(conn):
            if done is None:
                ops.sub_fails += 1
            else:
                (ops.subs_dur if durable else ops.subs_ndur)[done] += 1

    def unsubscribed(self, conn: Connection | None, durable: bool, removed: bool | None) -> None:
        """An MQCLOSE of a subscription handle that kept (False) or removed (True) it, or
        (None) failed."""
        for ops in self._each(conn):
            if removed is None:
                ops.unsub_fails += 1
            else:
                (ops.unsubs_dur if durable else ops.unsubs_ndur)[1 if removed else 0] += 1

    def sub_requested(self, conn: Connection | None, ok: bool) -> None:
        for ops in self._each(conn):
            if ok:
                ops.subrqs += 1
            else:
                ops.subrq_fails += 1

    def published(self, persistent: bool, size: int) -> None:
        """A publication's copy delivered to a subscription (MQI statistics' PublishMsgCount)."""
        mqi = self.mqi
        if mqi is not None:
            p = 1 if persistent else 0
            mqi.published[p] += 1
            mqi.published_bytes[p] += size

    def put(self, conn: Connection | None, q: QueueObject | None, persistent: bool, n: int, size: int,
            put1: bool) -> None:
        """``n`` messages of ``size`` bytes in all put to ``q`` (None: not a local queue)."""
        p = 1 if persistent else 0
        mqi = self.mqi
        if mqi is not None:
            (mqi.put1s if put1 else mqi.puts)[p] += n
            mqi.put_bytes[p] += size
        acct = conn.acct if conn is not None else None
        if acct is not None and acct.mqi is not None:
            (acct.mqi.put1s if put1 else acct.mqi.puts)[p] += n
            acct.mqi.put_bytes[p] += size
        if q is None:
            return
        s = q.stats
        counts = acct.queues.get(q.name) if acct is not None and acct.queues else None
        if s is None and counts is None:
            return
        depth = q.messages.depth
        if s is not None:
            s.put(p, n, size, put1, depth)
        if counts is not None:
            counts.put(p, n, size, put1, depth)

    def put_failed(self, conn: Connection | None, q: QueueObject | None, put1: bool) -> None:
        for ops in self._each(conn):
            if put1:
                ops.put1_fails += 1
            else:
                ops.put_fails += 1
        for c in self._counts(conn, q):
            if put1:
                c.put1_fails += 1
            else:
                c.put_fails += 1

    def got(self, conn: Connection | None, q: QueueObject, persistent: bool, size: int, put_at: float,
            browse: bool) -> None:
        """A message got (or browsed) from ``q``."""
        p = 1 if persistent else 0
        mqi = self.mqi
        if mqi is not None:
            (mqi.browses if browse else mqi.gets)[p] += 1
            (mqi.browse_bytes if browse else mqi.get_bytes)[p] += size
        acct = conn.acct if conn is not None else None
        if acct is not None and acct.mqi is not None:
            (acct.mqi.browses if browse else acct.mqi.gets)[p] += 1
            (acct.mqi.browse_bytes if browse else acct.mqi.get_bytes)[p] += size
        s = q.stats
        counts = acct.queues.get(q.name) if acct is not None and acct.queues else None
        if s is None and counts is None:
            return
        waited = int((self.clock() - put_at) * 1_000_000)
        if waited < 0:
            waited = 0
        depth = q.messages.depth
        if s is not None:
            s.got(p, size, waited, browse, depth)
        if counts is not None:
            counts.got(p, size, waited, browse, depth)

    def get_failed(self, conn: Connection | None, q: QueueObject | None, browse: bool) -> None:
        if not self.on:
            return
        for ops in self._each(conn):
            if browse:
                ops.browse_fails += 1
            else:
                ops.get_fails += 1
        for c in self._counts(conn, q):
            if browse:
                c.browse_fails += 1
            else:
                c.get_fails += 1

    def expired(self, q: QueueObject) -> None:
        if self.mqi is not None:
            self.mqi.expired += 1
        if q.stats is not None:
            q.stats.expired += 1
            q.stats.used = True

    def purged(self, q: QueueObject, count: int) -> None:
        """CLEAR QLOCAL removed ``count`` messages."""
        if self.mqi is not None:
            self.mqi.purged += count
        if q.stats is not None:
            q.stats.purged += count
            q.stats.used = True

    # -- the messages ----------------------------------------------------------------------
    def tick(self, now: float) -> None:
        """Periodic work: the statistics at the end of each STATINT, accounting records at
        the end of each connection's ACCTINT."""
        if self.epoch != self.objects.epoch:
            self._switches()
            for q in self.objects.queues.values():
                if q.stats is not None and not self._wanted(q, "STATQ"):
                    q.stats = None
            self._recount()
        if not self.on and not self._channel_rows():
            self.start = now
            return
        if now - self.start >= self.state.qmgr_attr("STATINT"):
            self.collect(now)
        interval = self.state.qmgr_attr("ACCTINT")
        for conn in list(self.state.connections.values()):
            acct = conn.acct
            if acct is not None and now - acct.start >= interval:
                self._account(conn, acct, now, None)
                conn.acct = acct.next(now)

    def ending(self) -> None:
        """The queue manager ends in a controlled way: what this interval collected is written
        (IBM writes statistics at a controlled shutdown too)."""
        if self.on or self._channel_rows():
            self.collect(self.clock())

    def collect(self, now: float) -> None:
        """Write this interval's statistics and begin the next (the interval's end, and
        RESET QMGR TYPE(STATISTICS))."""
        head = self._head(self.start, now)
        if self.mqi is not None:
            self._emit(STATISTICS_QUEUE, F.MQCFT_STATISTICS, F.MQCMD_STATISTICS_MQI, head + self.mqi.statistics())
            fresh = Operations(now)
            fresh.conns_max = self.connected
            self.mqi = fresh
        groups = []
        for q in self.objects.queues.values():
            s = q.stats
            if s is None:
                continue
            if s.used:
                groups.append(P.CFGR(F.MQGACF_Q_STATISTICS_DATA, tuple(self._q_statistics(q, s))))
            q.stats = QueueCounts(q.messages.depth) if self._wanted(q, "STATQ") else None
        self._groups(STATISTICS_QUEUE, F.MQCFT_STATISTICS, F.MQCMD_STATISTICS_Q, head, groups)
        channels = []
        for row in self._channel_rows():
            counts = row.stats
            assert counts is not None
            if counts.msgs or counts.bytes_now != counts.bytes_base or row.status == F.MQCHS_RUNNING:
                channels.append(P.CFGR(F.MQGACF_CHL_STATISTICS_DATA, tuple(self._chl_statistics(row, counts))))
            row.stats = counts.next()
        self._groups(STATISTICS_QUEUE, F.MQCFT_STATISTICS, F.MQCMD_STATISTICS_CHANNEL, head, channels)
        self.start = now

    # -- channel statistics (STATCHL) -------------------------------------------------------
    def channel_counts(self, name: str) -> ChannelCounts | None:
        """A starting channel instance's counts when STATCHL collects for channel ``name``
        (its own LOW, MEDIUM or HIGH unless the queue manager's is NONE; or QMGR and the
        queue manager's LOW, MEDIUM or HIGH), else None. As IBM has it, a change to STATCHL
        applies to channels started after it."""
        chl = self.state.channels.find(name)
        own = chl.number("STATCHL") if chl is not None else _QMGR
        qmgr = self.state.qmgr_attr("STATCHL")
        wanted = (own > C.MQMON_OFF and qmgr != _NONE) or (own == _QMGR and qmgr > C.MQMON_OFF)
        return ChannelCounts() if wanted else None

    def _channel_rows(self) -> list[ChannelStatus]:
        return [row for row in self.state.channel_control.channels.values() if row.stats is not None]

    @staticmethod
    def _chl_statistics(row: ChannelStatus, c: ChannelCounts) -> list[P.Param]:
        batches = c.full + c.incomplete
        out: list[P.Param] = [
            P.CFST(F.MQCACH_CHANNEL_NAME, row.name), P.CFIN(F.MQIACH_CHANNEL_TYPE, row.chltype),
            P.CFST(C.MQCA_REMOTE_Q_MGR_NAME, row.rqmname), P.CFST(F.MQCACH_CONNECTION_NAME, row.conname),
            P.CFIN(F.MQIAMO_MSGS, c.msgs), P.CFIN64(F.MQIAMO64_BYTES, c.bytes_now - c.bytes_base)]
        # measured by a sending end only, and only with a message exit ("when available", as IBM's)
        for t, least, average, most in ((c.net, F.MQIAMO_NET_TIME_MIN, F.MQIAMO_NET_TIME_AVG, F.MQIAMO_NET_TIME_MAX),
                                        (c.exits, F.MQIAMO_EXIT_TIME_MIN, F.MQIAMO_EXIT_TIME_AVG,
                                         F.MQIAMO_EXIT_TIME_MAX)):
            if t.n:
                out += [P.CFIN(least, t.least), P.CFIN(average, t.total // t.n), P.CFIN(most, t.most)]
        return [*out, P.CFIN(F.MQIAMO_FULL_BATCHES, c.full), P.CFIN(F.MQIAMO_INCOMPLETE_BATCHES, c.incomplete),
                P.CFIN(F.MQIAMO_AVG_BATCH_SIZE, c.batch_msgs // batches if batches else 0),
                P.CFIN(F.MQIAMO_PUT_RETRIES, c.put_retries)]

    def _head(self, start: float, end: float) -> list[P.Param]:
        (sd, st), (ed, et) = stamp(start), stamp(end)
        return [P.CFST(C.MQCA_Q_MGR_NAME, self.state.name), P.CFST(F.MQCAMO_START_DATE, sd),
                P.CFST(F.MQCAMO_START_TIME, st), P.CFST(F.MQCAMO_END_DATE, ed), P.CFST(F.MQCAMO_END_TIME, et),
                P.CFIN(C.MQIA_COMMAND_LEVEL, C.MQCMDL_CURRENT_LEVEL)]

    @staticmethod
    def _q_head(q: QueueObject) -> list[P.Param]:
        return [P.CFST(C.MQCA_Q_NAME, q.name), P.CFST(C.MQCA_CREATION_DATE, q.created[0]),
                P.CFST(C.MQCA_CREATION_TIME, q.created[1]), P.CFIN(C.MQIA_Q_TYPE, _QTYPE.get(q.qtype, C.MQQT_LOCAL)),
                P.CFIN(C.MQIA_DEFINITION_TYPE, q.deftype)]

    def _q_statistics(self, q: QueueObject, s: QueueCounts) -> list[P.Param]:
        return [*self._q_head(q), P.CFIN(F.MQIAMO_Q_MIN_DEPTH, s.min_depth), P.CFIN(F.MQIAMO_Q_MAX_DEPTH, s.max_depth),
                P.CFIL64(F.MQIAMO64_AVG_Q_TIME, s.average_times()), *s.counts(),
                P.CFIL(F.MQIAMO_GETS, tuple(s.gets)), P.CFIL64(F.MQIAMO64_GET_BYTES, tuple(s.get_bytes)),
                P.CFIN(F.MQIAMO_GETS_FAILED, s.get_fails),
                P.CFIL(F.MQIAMO_BROWSES, tuple(s.browses)), P.CFIL64(F.MQIAMO64_BROWSE_BYTES, tuple(s.browse_bytes)),
                P.CFIN(F.MQIAMO_BROWSES_FAILED, s.browse_fails),
                P.CFIN(F.MQIAMO_MSGS_NOT_QUEUED, 0), P.CFIN(F.MQIAMO_MSGS_EXPIRED, s.expired),
                P.CFIN(F.MQIAMO_MSGS_PURGED, s.purged)]

    def _q_accounting(self, q: QueueObject, s: QueueCounts) -> list[P.Param]:
        (od, ot) = stamp(s.open_at) if s.open_at else ("", "")
        (cd, ct) = stamp(s.close_at) if s.close_at else ("", "")
        average = s.time_sum[0] + s.time_sum[1]
        count = s.time_n[0] + s.time_n[1]
        return [*self._q_head(q), P.CFIN(F.MQIAMO_OPENS, s.opens), P.CFST(F.MQCAMO_OPEN_DATE, od),
                P.CFST(F.MQCAMO_OPEN_TIME, ot), P.CFST(F.MQCAMO_CLOSE_DATE, cd), P.CFST(F.MQCAMO_CLOSE_TIME, ct),
                *s.counts(), P.CFIN(F.MQIAMO_PUT_MIN_BYTES, _least(s.put_min)),
                P.CFIN(F.MQIAMO_PUT_MAX_BYTES, s.put_max),
                P.CFIL(F.MQIAMO_GETS, tuple(s.gets)), P.CFIN(F.MQIAMO_GETS_FAILED, s.get_fails),
                P.CFIL64(F.MQIAMO64_GET_BYTES, tuple(s.get_bytes)),
                P.CFIN(F.MQIAMO_GET_MIN_BYTES, _least(s.get_min)), P.CFIN(F.MQIAMO_GET_MAX_BYTES, s.get_max),
                P.CFIL(F.MQIAMO_BROWSES, tuple(s.browses)), P.CFIN(F.MQIAMO_BROWSES_FAILED, s.browse_fails),
                P.CFIL64(F.MQIAMO64_BROWSE_BYTES, tuple(s.browse_bytes)),
                P.CFIN(F.MQIAMO_BROWSE_MIN_BYTES, _least(s.browse_min)),
                P.CFIN(F.MQIAMO_BROWSE_MAX_BYTES, s.browse_max),
                P.CFIN64(F.MQIAMO64_Q_TIME_MIN, _least(s.time_min)),
                P.CFIN64(F.MQIAMO64_Q_TIME_AVG, average // count if count else 0),
                P.CFIN64(F.MQIAMO64_Q_TIME_MAX, s.time_max)]

    def _account(self, conn: Connection, acct: Accounting, now: float, disc_type: int | None) -> None:
        """A connection's accounting messages for [acct.start, now] (``disc_type``: it ended so)."""
        head = [
            *self._head(acct.start, now), P.CFBS(F.MQBACF_CONNECTION_ID, connection_id(self.state.name, conn.hconn)),
            P.CFIN(F.MQIACF_SEQUENCE_NUMBER, acct.seq), P.CFST(F.MQCACF_APPL_NAME, conn.appl_name[:28]),
            P.CFIN(F.MQIACF_PROCESS_ID, conn.pid), P.CFIN(F.MQIACF_THREAD_ID, conn.tid),
            P.CFST(F.MQCACF_USER_IDENTIFIER, conn.user[:12])]
        if acct.mqi is not None:
            cd, ct = stamp(conn.connected_at)
            params = [*head, P.CFST(F.MQCAMO_CONN_DATE, cd), P.CFST(F.MQCAMO_CONN_TIME, ct),
                      P.CFST(F.MQCACH_CONNECTION_NAME, conn.conn_name), P.CFST(F.MQCACH_CHANNEL_NAME, conn.channel)]
            if disc_type is not None:
                dd, dt = stamp(now)
                params += [P.CFST(F.MQCAMO_DISC_DATE, dd), P.CFST(F.MQCAMO_DISC_TIME, dt),
                           P.CFIN(F.MQIAMO_DISC_TYPE, disc_type)]
            self._emit(ACCOUNTING_QUEUE, F.MQCFT_ACCOUNTING, F.MQCMD_ACCOUNTING_MQI, params + acct.mqi.api())
        groups = []
        for name, counts in acct.queues.items():
            q = self.objects.find(name)
            if q is not None and counts.used:
                groups.append(P.CFGR(F.MQGACF_Q_ACCOUNTING_DATA, tuple(self._q_accounting(q, counts))))
        self._groups(ACCOUNTING_QUEUE, F.MQCFT_ACCOUNTING, F.MQCMD_ACCOUNTING_Q, head, groups)

    def _groups(self, queue: str, kind: int, command: int, head: list[P.Param], groups: Sequence[P.CFGR]) -> None:
        """Queue statistics or accounting: at most 100 groups a message, numbered."""
        chunks = [groups[i:i + GROUPS_PER_MESSAGE] for i in range(0, len(groups), GROUPS_PER_MESSAGE)]
        for seq, chunk in enumerate(chunks, 1):
            self._emit(queue, kind, command, [*head, P.CFIN(F.MQIAMO_OBJECT_COUNT, len(chunk)), *chunk],
                       seq=seq, last=seq == len(chunks))

    def _emit(self, queue: str, kind: int, command: int, params: Sequence[P.Param], *, seq: int = 1,
              last: bool = True) -> None:
        state = self.state
        target = self.objects.find(queue)
        if target is None:
            return
        date, tod = state.stamp_put(state.clock.now())
        md = MQMD(version=C.MQMD_VERSION_2, msg_type=C.MQMT_DATAGRAM, format=C.MQFMT_ADMIN.rstrip(),
                  encoding=C.MQENC_NATIVE, coded_char_set_id=state.qmgr_attr("CCSID"),
                  priority=int(target.attrs.get("DEFPRTY", 0)),
                  persistence=int(target.attrs.get("DEFPSIST", C.MQPER_NOT_PERSISTENT)), msg_id=state.new_id(),
                  reply_to_q_mgr=state.name, put_appl_type=C.MQAT_QMGR, put_appl_name=state.name[:28],
                  put_date=date, put_time=tod)
        header = P.CFH(type=kind, command=command, msg_seq_number=seq, control=F.MQCFC_LAST if last else F.MQCFC_NOT_LAST,
                       version=F.MQCFH_VERSION_3)
        log.info("event=%s queue=%s command=%d", "statistics" if kind == F.MQCFT_STATISTICS else "accounting",
                 queue, command)
        self.deliver(md, P.PCFMessage(header, tuple(params)).pack(C.MQENC_NATIVE), queue, "", None)
