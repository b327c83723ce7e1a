"""Status commands: INQUIRE_Q_STATUS (DISPLAY QSTATUS TYPE QUEUE / HANDLE) and
INQUIRE_CONNECTION (DISPLAY CONN): what is open, by whom, how deep and how old."""

from __future__ import annotations

import fnmatch

from ferrymq.engine import attrs as A
from ferrymq.engine.objects import QueueObject, stamp
from ferrymq.engine.qmgr import QueueManager
from ferrymq.engine.session import Connection, Handle, connection_id
from ferrymq.errors import failed
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.model import Command, Filter, Response, Value


def _pick(kind: str, wanted: tuple[int, ...], values: dict[str, Value]) -> dict[int, Value]:
    every = F.MQIACF_ALL in wanted
    out: dict[int, Value] = {}
    for attr in A.QSTATUS_ATTRS:
        if kind in attr.types and attr.name in values and (every or attr.selector in wanted):
            out[attr.selector] = values[attr.name]
    return out


def _passes(filters: list[Filter], params: dict[int, Value]) -> bool:
    return all(f.matches(params.get(f.parameter)) for f in filters)


def queue_status(qm: QueueManager, q: QueueObject) -> dict[str, Value]:
    now = qm.clock.now()
    oldest = min((m.put_at for m in q.messages.by_seq.values()), default=None)
    lget = stamp(q.last_get) if q.last_get else ("", "")
    lput = stamp(q.last_put) if q.last_put else ("", "")
    return {"CURDEPTH": q.messages.depth, "IPPROCS": q.input_count, "OPPROCS": q.output_count,
            "UNCOM": q.messages.uncommitted, "MSGAGE": -1 if oldest is None else max(0, int(now - oldest)),
            "LGETDATE": lget[0], "LGETTIME": lget[1], "LPUTDATE": lput[0], "LPUTTIME": lput[1]}


def _conn_values(qm: QueueManager, conn: Connection) -> dict[str, Value]:
    # As IBM reports a connection's type: the queue manager's own, or a user application.
    appl_type = C.MQAT_QMGR if conn.appl_type == C.MQAT_QMGR else C.MQAT_USER
    return {"APPLTAG": conn.appl_name, "APPLTYPE": appl_type, "USERID": conn.user, "CHANNEL": conn.channel,
            "CONNAME": conn.conn_name, "CONN": connection_id(qm.name, conn.hconn),
            "UOWSTATE": F.MQUOWST_ACTIVE if conn.uow is not None and len(conn.uow) else F.MQUOWST_NONE,
            "HANDLES": len(conn.handles)}


def handle_status(qm: QueueManager, h: Handle) -> dict[str, Value]:
    conn = qm.connections[h.hconn]
    yes = {True: F.MQQSO_YES, False: F.MQQSO_NO}
    values = _conn_values(qm, conn)
    values.update({
        "INPUT": {C.MQOO_INPUT_SHARED: F.MQQSO_SHARED, C.MQOO_INPUT_EXCLUSIVE: F.MQQSO_EXCLUSIVE}.get(h.input_mode, F.MQQSO_NO),
        "OUTPUT": yes[bool(h.options & C.MQOO_OUTPUT)], "BROWSE": yes[bool(h.options & C.MQOO_BROWSE)],
        "INQUIRE": yes[bool(h.options & C.MQOO_INQUIRE)], "SET": yes[bool(h.options & C.MQOO_SET)],
        "HSTATE": F.MQHSTATE_ACTIVE if any(w.handle is h for w in qm.waiters.values()) else F.MQHSTATE_INACTIVE,
    })
    return values


def inquire_q_status(qm: QueueManager, cmd: Command) -> list[Response]:
    """INQUIRE_Q_STATUS: one response per local queue (TYPE QUEUE) or per open handle."""
    name = cmd.text(C.MQCA_Q_NAME)
    kind = cmd.number(F.MQIACF_Q_STATUS_TYPE, F.MQIACF_Q_STATUS)
    if kind not in (F.MQIACF_Q_STATUS, F.MQIACF_Q_HANDLE):
        raise failed(F.MQRCCF_PARM_VALUE_ERROR, f"MQIACF_Q_STATUS_TYPE {kind} is not MQIACF_Q_STATUS or MQIACF_Q_HANDLE")
    wanted = cmd.selectors(F.MQIACF_Q_STATUS_ATTRS)
    queues = [qm.objects.queues[n] for n in qm.objects.names(name) if qm.objects.queues[n].is_local]
    if not queues:
        obj = qm.objects.find(name)
        if obj is None:
            raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, f"queue {name!r} is not defined")
        raise failed(F.MQRCCF_Q_WRONG_TYPE, f"{obj.name} is a {obj.qtype}; status is kept for local queues")
    out = []
    for q in queues:
        head: dict[int, Value] = {C.MQCA_Q_NAME: q.name, F.MQIACF_Q_STATUS_TYPE: kind}
        if kind == F.MQIACF_Q_STATUS:
            params = head | _pick(A.QSTATUS, wanted, queue_status(qm, q))
            if _passes(cmd.filters, params):
                out.append(Response(params))
            continue
        for hobj in sorted(q.handles):
            h = qm.handles.get(hobj)
            if h is None or h.hconn not in qm.connections:
                continue
            params = head | _pick(A.HANDLE, wanted, handle_status(qm, h))
            if _passes(cmd.filters, params):
                out.append(Response(params))
    return out


def inquire_connection(qm: QueueManager, cmd: Command) -> list[Response]:
    """INQUIRE_CONNECTION: one response per connection (a blank or ``*`` id means all)."""
    wanted = cmd.selectors(F.MQIACF_CONNECTION_ATTRS)
    generic = cmd.params.get(F.MQBACF_GENERIC_CONNECTION_ID, b"")
    if not isinstance(generic, bytes):
        raise failed(F.MQRCCF_CFBS_PARM_ID_ERROR, "MQBACF_GENERIC_CONNECTION_ID takes a byte string")
    kind = cmd.number(F.MQIACF_CONN_INFO_TYPE, F.MQIACF_CONN_INFO_CONN)
    out = []
    for hconn in sorted(qm.connections):
        conn = qm.connections[hconn]
        cid = connection_id(qm.name, hconn)
        if generic.strip(b"\0") and not fnmatch.fnmatchcase(cid.hex().upper(), generic.hex().upper() + "*"):
            continue
        params: dict[int, Value] = {F.MQBACF_CONNECTION_ID: cid, F.MQIACF_CONN_INFO_TYPE: F.MQIACF_CONN_INFO_CONN}
        values = _conn_values(qm, conn)
        params |= _pick(A.CONN, wanted, values)
        # A filter tests the connection's attributes, whether or not they were asked for.
        every = params | _pick(A.CONN, (F.MQIACF_ALL,), values)
        if _passes(cmd.filters, every) and kind in (F.MQIACF_CONN_INFO_CONN, F.MQIACF_CONN_INFO_ALL):
            out.append(Response(params))
        if kind in (F.MQIACF_CONN_INFO_HANDLE, F.MQIACF_CONN_INFO_ALL):
            for h in conn.handles.values():
                hp: dict[int, Value] = {F.MQBACF_CONNECTION_ID: cid, F.MQIACF_CONN_INFO_TYPE: F.MQIACF_CONN_INFO_HANDLE,
                                        F.MQCACF_OBJECT_NAME: h.name,
                                        F.MQIACF_OBJECT_TYPE: C.MQOT_Q if h.queue is not None else C.MQOT_Q_MGR}
                out.append(Response(hp))
    if not out and generic.strip(b"\0"):
        raise failed(F.MQRCCF_CONNECTION_ID_ERROR, f"no connection has id {generic.hex().upper()}")
    return out
