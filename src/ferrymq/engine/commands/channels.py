"""Channel and listener commands: CREATE/CHANGE/COPY/DELETE/INQUIRE_CHANNEL,
INQUIRE_CHANNEL_NAMES, START/STOP/RESET/RESOLVE_CHANNEL, INQUIRE_CHANNEL_STATUS, and the
same for listeners (START/STOP_CHANNEL_LISTENER, INQUIRE_LISTENER_STATUS).

Definitions follow engine.channels' rules; the commands on running channels are requests
for the channel initiator (engine.chlcontrol), answered at once as accepted, as IBM's are.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable

from ferrymq.engine import chlattrs as K
from ferrymq.engine.attrs import Attr
from ferrymq.engine.channels import ChannelObject, ListenerObject
from ferrymq.engine.chlcontrol import ChannelStatus, ListenerStatus, Ping, Request, batches_in_doubt
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import failed
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.model import Command, Filter, ParameterError, Response, Value
from ferrymq.protocol.channel import PING_DATA
from ferrymq.tls import cipherspecs

_CONTROL = {F.MQCACH_CHANNEL_NAME, F.MQIACH_CHANNEL_TYPE, F.MQIACF_REPLACE, F.MQCACF_FROM_CHANNEL_NAME,
            F.MQCACF_TO_CHANNEL_NAME, F.MQIACF_CHANNEL_ATTRS, F.MQIACF_QSG_DISPS, F.MQCACF_COMMAND_SCOPE,
            F.MQCACH_LISTENER_NAME, F.MQCACF_FROM_LISTENER_NAME, F.MQCACF_TO_LISTENER_NAME, F.MQIACF_LISTENER_ATTRS}


def _attributes(cmd: Command, table: dict[int, Attr]) -> dict[str, object]:
    """The attributes a CREATE/CHANGE/COPY carries, by keyword (their rules are applied by
    the registry, which names the parameter that broke one)."""
    out: dict[str, object] = {}
    for sel, value in cmd.params.items():
        if sel in _CONTROL:
            continue
        attr = table.get(sel)
        if attr is None or attr.readonly:
            raise ParameterError(F.MQRCCF_CFIN_PARM_ID_ERROR if isinstance(value, int) else F.MQRCCF_CFST_PARM_ID_ERROR,
                                 sel, f"parameter {sel} is not a settable attribute")
        out[attr.name] = value
    return out


def _chltype(cmd: Command, required: bool) -> str | None:
    code = cmd.params.get(F.MQIACH_CHANNEL_TYPE)
    if code is None:
        if required:
            raise ParameterError(F.MQRCCF_PARM_MISSING, F.MQIACH_CHANNEL_TYPE, "ChannelType (CHLTYPE) is required")
        return None
    if not isinstance(code, int) or code not in K.CHLTYPE_OF:
        raise ParameterError(F.MQRCCF_CHANNEL_TYPE_ERROR, F.MQIACH_CHANNEL_TYPE,
                             f"ChannelType {code!r} is not SDR (1), SVR (2), RCVR (3), RQSTR (4) or SVRCONN (7)")
    return K.CHLTYPE_OF[code]


def _create(qm: QueueManager, cmd: Command) -> list[Response]:
    chltype = _chltype(cmd, True)
    assert chltype is not None
    qm.state.channels.define(cmd.text(F.MQCACH_CHANNEL_NAME), chltype, _attributes(cmd, K.CHANNEL_BY_SELECTOR),
                             replace=cmd.replacing())
    qm.need_sync()
    return [Response()]


def _copy(qm: QueueManager, cmd: Command) -> list[Response]:
    source = qm.state.channels.require(cmd.text(F.MQCACF_FROM_CHANNEL_NAME))
    chltype = _chltype(cmd, False) or source.chltype
    qm.state.channels.define(cmd.text(F.MQCACF_TO_CHANNEL_NAME), chltype, _attributes(cmd, K.CHANNEL_BY_SELECTOR),
                             like=source.name, replace=cmd.replacing())
    qm.need_sync()
    return [Response()]


def _change(qm: QueueManager, cmd: Command) -> list[Response]:
    qm.state.channels.alter(cmd.text(F.MQCACH_CHANNEL_NAME), _chltype(cmd, False),
                            _attributes(cmd, K.CHANNEL_BY_SELECTOR))
    qm.need_sync()
    return [Response()]


def _delete(qm: QueueManager, cmd: Command) -> list[Response]:
    name = cmd.text(F.MQCACH_CHANNEL_NAME)
    qm.state.channels.delete(name)  # refused while the channel is active
    control = qm.state.channel_control
    control.stopped.discard(name.rstrip())
    control.channels.pop(name.rstrip(), None)  # its STOPPED or INACTIVE status goes with it
    qm.need_sync()
    return [Response()]


def channel_params(obj: ChannelObject, wanted: Iterable[int]) -> dict[int, Value]:
    """A channel as INQUIRE_CHANNEL answers: name, type, then the asked-for attributes of its type."""
    want = set(wanted)
    every = F.MQIACF_ALL in want or not want
    out: dict[int, Value] = {F.MQCACH_CHANNEL_NAME: obj.name, F.MQIACH_CHANNEL_TYPE: K.CHLTYPES[obj.chltype]}
    for attr in K.CHANNEL_ATTRS + K.CHANNEL_STATUS_ATTRS:
        if obj.chltype in attr.types and attr.selector not in out and (every or attr.selector in want):
            out[attr.selector] = _pcf_value(obj.get(attr.name))
    return out


def _pcf_value(value: int | str | tuple[str, ...]) -> Value:
    """An attribute as PCF carries it: an exit list of several items as an MQCFSL (a
    tuple), one of one item or none as an MQCFST, as IBM's Inquire Channel answers."""
    if isinstance(value, tuple) and len(value) < 2:
        return value[0] if value else ""
    return value


def _matching_channels(qm: QueueManager, cmd: Command) -> list[ChannelObject]:
    name = cmd.text(F.MQCACH_CHANNEL_NAME)
    chltype = _chltype(cmd, False) if cmd.params.get(F.MQIACH_CHANNEL_TYPE) != F.MQCHT_ALL else None
    reg = qm.state.channels
    found = [reg.by_name[n] for n in reg.names(name)]
    if not found and "*" not in name:
        raise failed(F.MQRCCF_CHANNEL_NOT_FOUND, f"channel {name!r} is not defined")
    return [o for o in found if chltype is None or o.chltype == chltype]


def _passes(get: Callable[[str], Value], table: dict[int, Attr], filters: list[Filter]) -> bool:
    for f in filters:
        attr = table.get(f.parameter)
        if attr is None:
            raise failed(F.MQRCCF_FILTER_ERROR, f"filter parameter {f.parameter} is not an attribute here")
        if not f.matches(get(attr.name)):
            return False
    return True


def _inquire(qm: QueueManager, cmd: Command) -> list[Response]:
    wanted = cmd.selectors(F.MQIACF_CHANNEL_ATTRS) + tuple(f.parameter for f in cmd.filters)
    return [Response(channel_params(o, wanted)) for o in _matching_channels(qm, cmd)
            if _passes(o.get, K.CHANNEL_BY_SELECTOR, cmd.filters)]


def _inquire_names(qm: QueueManager, cmd: Command) -> list[Response]:
    found = _matching_channels(qm, cmd)
    return [Response({F.MQCACH_CHANNEL_NAMES: tuple(o.name for o in found),
                      F.MQIACH_CHANNEL_TYPES: tuple(K.CHLTYPES[o.chltype] for o in found)})]


# -- running channels ------------------------------------------------------------------------------
def _start(qm: QueueManager, cmd: Command) -> list[Response]:
    obj = qm.state.channels.require(cmd.text(F.MQCACH_CHANNEL_NAME))
    control = qm.state.channel_control
    control.stopped.discard(obj.name)
    if obj.chltype == K.SVRCONN:  # clients may connect again; no instance to start
        control.channels.pop(obj.name, None)
    if obj.chltype in K.SENDING | {K.RQSTR}:
        control.request(Request("START", obj.name))
    return [Response()]


# A channel in these states is running: PING is for one that is not (retrying is allowed, as IBM's).
_RUNNING = frozenset({F.MQCHS_RUNNING, F.MQCHS_STARTING, F.MQCHS_BINDING, F.MQCHS_STOPPING, F.MQCHS_INITIALIZING,
                      F.MQCHS_REQUESTING, F.MQCHS_PAUSED})


def _ping(qm: QueueManager, cmd: Command) -> list[Response]:
    """PING CHANNEL DATALEN(n): checked here, carried out by the channel initiator, answered
    by the command server when it ends (ChannelControl.deferred): no response now.

    Raises:
        MQError: MQRCCF_CHANNEL_NOT_FOUND; MQRCCF_PING_ERROR (4030) for a channel that is
            not a sender or server; MQRCCF_PING_DATA_COUNT_ERROR (3031) for a length outside
            16..32768; MQRCCF_CHANNEL_IN_USE while it runs; MQRCCF_ALLOCATE_FAILED without a
            channel initiator (a queue manager embedded without channels).
    """
    obj = qm.state.channels.require(cmd.text(F.MQCACH_CHANNEL_NAME))
    if obj.chltype not in K.SENDING:
        raise failed(F.MQRCCF_PING_ERROR, f"channel {obj.name} is a {obj.chltype}: only a sender or server channel "
                     "is pinged (ping a receiver from its partner)")
    length = cmd.number(F.MQIACH_DATA_COUNT, 64)
    low, high = PING_DATA
    if not low <= length <= high:
        raise ParameterError(F.MQRCCF_PING_DATA_COUNT_ERROR, F.MQIACH_DATA_COUNT,
                             f"DataCount {length} is outside {low}..{high}")
    control = qm.state.channel_control
    row = control.channels.get(obj.name)
    if row is not None and row.status in _RUNNING:
        raise failed(F.MQRCCF_CHANNEL_IN_USE, f"channel {obj.name} is running; PING tests a channel that is not")
    if not control.initiator:
        raise failed(F.MQRCCF_ALLOCATE_FAILED, "no channel initiator runs in this queue manager")
    ping = Ping(obj.name, length)
    control.deferred.append(ping)
    control.request(Request("PING", obj.name, ping=ping))
    return []


def _stop(qm: QueueManager, cmd: Command) -> list[Response]:
    """STOP CHANNEL. CONNAME, QMNAME and CLIENTID stop only the instances they name, and
    leave the channel INACTIVE: IBM refuses them with STATUS(STOPPED) (a channel is not
    stopped for one partner only; MQRCCF_PARM_CONFLICT here). A server-connection channel's
    instances are its client connections: the server ends them (MODE as docs/distributed.md,
    "Stopping a server-connection channel"), and STATUS(STOPPED) refuses new ones with 2537
    until START CHANNEL."""
    obj = qm.state.channels.require(cmd.text(F.MQCACH_CHANNEL_NAME))
    mode = cmd.number(F.MQIACF_MODE, F.MQMODE_QUIESCE)
    if mode not in (F.MQMODE_QUIESCE, F.MQMODE_FORCE, F.MQMODE_TERMINATE):
        raise ParameterError(F.MQRCCF_MODE_VALUE_ERROR, F.MQIACF_MODE, f"Mode {mode} is not QUIESCE, FORCE or TERMINATE")
    conname, qmname, clientid = (_opt_text(cmd, sel) for sel in (F.MQCACH_CONNECTION_NAME, C.MQCA_Q_MGR_NAME,
                                                                    F.MQCACH_CLIENT_ID))
    filtered = bool(conname or qmname or clientid)
    status = cmd.number(F.MQIACH_CHANNEL_STATUS, F.MQCHS_INACTIVE if filtered else F.MQCHS_STOPPED)
    if status not in (F.MQCHS_STOPPED, F.MQCHS_INACTIVE):
        raise ParameterError(F.MQRCCF_PARM_VALUE_ERROR, F.MQIACH_CHANNEL_STATUS, "ChannelStatus is STOPPED or INACTIVE")
    if filtered and status == F.MQCHS_STOPPED:
        raise ParameterError(F.MQRCCF_PARM_CONFLICT, F.MQIACH_CHANNEL_STATUS,
                             "CONNAME, QMNAME or CLIENTID stop some instances: STATUS must be INACTIVE")
    control = qm.state.channel_control
    req = Request("STOP", obj.name, mode=mode, status=status, conname=conname, qmname=qmname, clientid=clientid)
    if obj.chltype == K.SVRCONN:
        ending = [c for c in qm.connections.values() if c.channel == obj.name and req.matches(c.conn_name, "", c.appl_name)]
        if not ending:  # as for any channel: nothing current to stop (4064)
            raise failed(F.MQRCCF_CHANNEL_NOT_ACTIVE, f"channel {obj.name} has no instance to stop")
        if status == F.MQCHS_STOPPED:
            control.stopped.add(obj.name)
            control.channels[obj.name] = ChannelStatus(obj.name, F.MQCHT_SVRCONN, F.MQCHS_STOPPED)
        control.request(req)
        return [Response()]
    row = control.channels.get(obj.name)
    if not control.active(obj.name) or (row is not None and not req.matches(row.conname, row.rqmname)):
        raise failed(F.MQRCCF_CHANNEL_NOT_ACTIVE, f"channel {obj.name} is not active")
    if status == F.MQCHS_STOPPED:
        control.stopped.add(obj.name)
    control.request(req)
    return [Response()]


def _opt_text(cmd: Command, selector: int) -> str:
    value = cmd.params.get(selector, "")
    return value.strip() if isinstance(value, str) else ""


def _reset(qm: QueueManager, cmd: Command) -> list[Response]:
    obj = qm.state.channels.require(cmd.text(F.MQCACH_CHANNEL_NAME))
    seq = cmd.number(F.MQIACH_MSG_SEQUENCE_NUMBER, 1)
    if not 1 <= seq <= 999_999_999:
        raise ParameterError(F.MQRCCF_MSG_SEQ_NUMBER_ERROR, F.MQIACH_MSG_SEQUENCE_NUMBER,
                             f"MsgSeqNumber {seq} is outside 1..999999999")
    if obj.chltype in K.SENDING and _in_doubt(qm, obj.name):
        raise failed(F.MQRCCF_CHANNEL_INDOUBT, f"channel {obj.name} is in doubt; RESOLVE CHANNEL first")
    qm.state.channel_control.request(Request("RESET", obj.name, seq=seq))
    return [Response()]


def _in_doubt(qm: QueueManager, name: str) -> list[bytes]:
    """The XIDs of a sending channel's prepared, unresolved batches (two with pipelining),
    in any order: RESOLVE treats them alike."""
    return [xid for xid, _ in batches_in_doubt(qm.in_doubt, name, 999_999_999)]


def _resolve(qm: QueueManager, cmd: Command) -> list[Response]:
    """RESOLVE CHANNEL ACTION(COMMIT|BACKOUT): the in-doubt batches of a sending channel that
    is not running (two with pipelining) are committed (their messages are gone from the
    transmission queue: the receiver has them) or backed out (they will be sent again). A
    channel not in doubt: nothing to do."""
    obj = qm.state.channels.require(cmd.text(F.MQCACH_CHANNEL_NAME))
    action = cmd.number(F.MQIACH_IN_DOUBT, -1)
    if action not in (F.MQIDO_COMMIT, F.MQIDO_BACKOUT):
        raise ParameterError(F.MQRCCF_INDOUBT_VALUE_ERROR, F.MQIACH_IN_DOUBT, "InDoubt is COMMIT (1) or BACKOUT (2)")
    if obj.chltype not in K.SENDING:
        raise failed(F.MQRCCF_WRONG_CHANNEL_TYPE, f"channel {obj.name} is a {obj.chltype}; only senders are in doubt")
    if qm.state.channel_control.active(obj.name):
        raise failed(F.MQRCCF_CHANNEL_IN_USE, f"channel {obj.name} is running; stop it first")
    xids = _in_doubt(qm, obj.name)
    if xids:
        hconn = qm.connect(appl_name="ferrymq resolve channel", user="ferrymq", appl_type=C.MQAT_QMGR)
        try:
            for xid in xids:
                qm.resolve(hconn, xid, action == F.MQIDO_COMMIT)
        finally:
            qm.disconnect(hconn)
        qm.need_sync()
    row = qm.state.channel_control.channels.get(obj.name)
    if row is not None:
        row.indoubt = False
    return [Response()]


def status_params(row: ChannelStatus, obj: ChannelObject | None, xqmsgsa: int, wanted: Iterable[int]) -> dict[int, Value]:
    want = set(wanted)
    every = F.MQIACF_ALL in want
    values: dict[str, Value] = {
        "STATUS": row.status, "SUBSTATE": row.substate, "CHLTYPE": row.chltype, "CONNAME": row.conname,
        "XMITQ": row.xmitq, "RQMNAME": row.rqmname, "MSGS": row.msgs, "BATCHES": row.batches,
        "BYTSSENT": row.bytes_sent, "BYTSRCVD": row.bytes_rcvd, "XQMSGSA": xqmsgsa,
        "INDOUBT": F.MQCHIDS_INDOUBT if row.indoubt else F.MQCHIDS_NOT_INDOUBT, "CURMSGS": row.cur_msgs,
        "CURSEQNO": row.cur_seq, "LSTSEQNO": row.last_seq, "LSTMSGDA": row.last_msg[0], "LSTMSGTI": row.last_msg[1],
        "CHSTADA": row.started[0], "CHSTATI": row.started[1], "BATCHSZ": row.batchsz, "HBINT": row.hbint,
        "MAXMSGL": row.maxmsgl, "NPMSPEED": row.npmspeed, "SHORTRTS": row.short_left, "LONGRTS": row.long_left,
        "STOPREQ": int(row.stop_requested), "CURSHCNV": row.cur_shcnv, "MAXSHCNV": row.max_shcnv,
        **_tls_values(row)}
    out: dict[int, Value] = {F.MQCACH_CHANNEL_NAME: row.name, F.MQIACH_CHANNEL_TYPE: row.chltype,
                             F.MQIACH_CHANNEL_STATUS: row.status}
    for attr in K.CHSTATUS_ATTRS:
        if attr.selector not in out and (every or attr.selector in want or attr.name in ("CONNAME", "XMITQ", "CURRENT")):
            if attr.name == "XMITQ" and obj is not None and obj.chltype not in K.SENDING:
                continue
            out[attr.selector] = values[attr.name]
    return out


_SECPROT = {cipherspecs.TLS12: F.MQSECPROT_TLSV12, cipherspecs.TLS13: F.MQSECPROT_TLSV13}


def _tls_values(row: ChannelStatus) -> dict[str, Value]:
    tls = row.tls
    if tls is None:
        return {"SSLPEER": "", "SSLCERTI": "", "SSLCIPH": "", "SECPROT": F.MQSECPROT_NONE}
    return {"SSLPEER": tls.dn, "SSLCERTI": tls.issuer_dn, "SSLCIPH": cipherspecs.negotiated(tls.suite),
            "SECPROT": _SECPROT.get(tls.version, F.MQSECPROT_NONE)}


def _instances(qm: QueueManager) -> list[ChannelStatus]:
    """Every current channel instance: the message channels' rows (and a STOPPED row for
    each server-connection channel STOP CHANNEL left stopped), then a row for each client
    connection on a server-connection channel (RUNNING while it is connected, STOPPING once
    STOP CHANNEL MODE(QUIESCE) named it). One conversation per connection (CURSHCNV 1,
    MAXSHCNV 1; both 0 under SHARECNV(0))."""
    rows = [qm.state.channel_control.channels[n] for n in sorted(qm.state.channel_control.channels)]
    for conn in sorted(qm.connections.values(), key=lambda c: (c.channel, c.hconn)):
        if conn.channel:
            rows.append(ChannelStatus(conn.channel, F.MQCHT_SVRCONN,
                                      F.MQCHS_STOPPING if conn.stopping else F.MQCHS_RUNNING, conname=conn.conn_name,
                                      tls=conn.tls, cur_shcnv=conn.shcnv, max_shcnv=conn.shcnv))
    return rows


def _inquire_status(qm: QueueManager, cmd: Command) -> list[Response]:
    name = cmd.text(F.MQCACH_CHANNEL_NAME) or "*"
    kind = cmd.number(F.MQIACH_CHANNEL_INSTANCE_TYPE, C.MQOT_CURRENT_CHANNEL)
    if kind not in (C.MQOT_CURRENT_CHANNEL, C.MQOT_SAVED_CHANNEL):
        raise ParameterError(F.MQRCCF_CHL_INST_TYPE_ERROR, F.MQIACH_CHANNEL_INSTANCE_TYPE,
                             "ChannelInstanceType is CURRENT or SAVED")
    wanted = cmd.selectors(F.MQIACH_CHANNEL_INSTANCE_ATTRS) + tuple(f.parameter for f in cmd.filters)
    out = []
    for row in _instances(qm):
        if not fnmatch.fnmatchcase(row.name, name.rstrip()):
            continue
        obj = qm.state.channels.find(row.name)
        q = qm.objects.find(row.xmitq) if row.xmitq else None
        depth = q.messages.depth if q is not None and q.is_local else 0
        params = status_params(row, obj, depth, wanted)

        def get(keyword: str, p: dict[int, Value] = params) -> Value:
            return p.get(K.CHSTATUS_BY_NAME[keyword].selector, "")
        if _passes(get, K.CHSTATUS_BY_SELECTOR, cmd.filters):
            out.append(Response(params))
    if not out and "*" not in name:
        raise failed(F.MQRCCF_CHL_STATUS_NOT_FOUND, f"no status for channel {name.rstrip()!r}")
    return out


# -- listeners ------------------------------------------------------------------------------------
def _create_listener(qm: QueueManager, cmd: Command) -> list[Response]:
    qm.state.listeners.define(cmd.text(F.MQCACH_LISTENER_NAME), _attributes(cmd, K.LISTENER_BY_SELECTOR),
                              replace=cmd.replacing())
    qm.need_sync()
    return [Response()]


def _copy_listener(qm: QueueManager, cmd: Command) -> list[Response]:
    source = qm.state.listeners.require(cmd.text(F.MQCACF_FROM_LISTENER_NAME))
    qm.state.listeners.define(cmd.text(F.MQCACF_TO_LISTENER_NAME), _attributes(cmd, K.LISTENER_BY_SELECTOR),
                              like=source.name, replace=cmd.replacing())
    qm.need_sync()
    return [Response()]


def _change_listener(qm: QueueManager, cmd: Command) -> list[Response]:
    qm.state.listeners.alter(cmd.text(F.MQCACH_LISTENER_NAME), _attributes(cmd, K.LISTENER_BY_SELECTOR))
    qm.need_sync()
    return [Response()]


def _delete_listener(qm: QueueManager, cmd: Command) -> list[Response]:
    qm.state.listeners.delete(cmd.text(F.MQCACH_LISTENER_NAME))
    qm.need_sync()
    return [Response()]


def listener_params(obj: ListenerObject, wanted: Iterable[int]) -> dict[int, Value]:
    want = set(wanted)
    every = F.MQIACF_ALL in want or not want
    out: dict[int, Value] = {F.MQCACH_LISTENER_NAME: obj.name}
    for attr in K.LISTENER_ATTRS:
        if every or attr.selector in want:
            out[attr.selector] = obj.get(attr.name)
    return out


def _inquire_listener(qm: QueueManager, cmd: Command) -> list[Response]:
    name = cmd.text(F.MQCACH_LISTENER_NAME)
    reg = qm.state.listeners
    found = [reg.by_name[n] for n in reg.names(name)]
    if not found and "*" not in name:
        raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, f"listener {name!r} is not defined")
    wanted = cmd.selectors(F.MQIACF_LISTENER_ATTRS) + tuple(f.parameter for f in cmd.filters)
    return [Response(listener_params(o, wanted)) for o in found if _passes(o.get, K.LISTENER_BY_SELECTOR, cmd.filters)]


def _start_listener(qm: QueueManager, cmd: Command) -> list[Response]:
    obj = qm.state.listeners.require(cmd.text(F.MQCACH_LISTENER_NAME))
    if qm.state.channel_control.listening(obj.name):
        raise failed(F.MQRCCF_OBJECT_IN_USE, f"listener {obj.name} is already running")
    qm.state.channel_control.request(Request("START_LISTENER", obj.name))
    return [Response()]


def _stop_listener(qm: QueueManager, cmd: Command) -> list[Response]:
    obj = qm.state.listeners.require(cmd.text(F.MQCACH_LISTENER_NAME))
    if not qm.state.channel_control.listening(obj.name):
        raise failed(F.MQRCCF_LISTENER_NOT_STARTED, f"listener {obj.name} is not running")
    qm.state.channel_control.request(Request("STOP_LISTENER", obj.name))
    return [Response()]


def _listener_status(row: ListenerStatus, wanted: Iterable[int]) -> dict[int, Value]:
    want = set(wanted)
    every = F.MQIACF_ALL in want or not want
    values: dict[str, Value] = {"STATUS": row.status, "PORT": row.port, "IPADDR": row.ipaddr, "BACKLOG": row.backlog,
                                "STARTDA": row.started[0], "STARTTI": row.started[1]}
    out: dict[int, Value] = {F.MQCACH_LISTENER_NAME: row.name}
    for attr in K.LSSTATUS_ATTRS:
        if every or attr.selector in want:
            out[attr.selector] = values[attr.name]
    return out


def _inquire_listener_status(qm: QueueManager, cmd: Command) -> list[Response]:
    name = (cmd.text(F.MQCACH_LISTENER_NAME) or "*").rstrip()
    rows = qm.state.channel_control.listeners
    wanted = cmd.selectors(F.MQIACF_LISTENER_STATUS_ATTRS)
    out = [Response(_listener_status(rows[n], wanted)) for n in sorted(rows) if fnmatch.fnmatchcase(n, name)]
    if not out and "*" not in name:
        raise failed(F.MQRCCF_LISTENER_NOT_STARTED, f"listener {name!r} is not running")
    return out


HANDLERS = {
    F.MQCMD_CREATE_CHANNEL: _create,
    F.MQCMD_COPY_CHANNEL: _copy,
    F.MQCMD_CHANGE_CHANNEL: _change,
    F.MQCMD_DELETE_CHANNEL: _delete,
    F.MQCMD_INQUIRE_CHANNEL: _inquire,
    F.MQCMD_INQUIRE_CHANNEL_NAMES: _inquire_names,
    F.MQCMD_START_CHANNEL: _start,
    F.MQCMD_STOP_CHANNEL: _stop,
    F.MQCMD_RESET_CHANNEL: _reset,
    F.MQCMD_PING_CHANNEL: _ping,
    F.MQCMD_RESOLVE_CHANNEL: _resolve,
    F.MQCMD_INQUIRE_CHANNEL_STATUS: _inquire_status,
    F.MQCMD_CREATE_LISTENER: _create_listener,
    F.MQCMD_COPY_LISTENER: _copy_listener,
    F.MQCMD_CHANGE_LISTENER: _change_listener,
    F.MQCMD_DELETE_LISTENER: _delete_listener,
    F.MQCMD_INQUIRE_LISTENER: _inquire_listener,
    F.MQCMD_START_CHANNEL_LISTENER: _start_listener,
    F.MQCMD_STOP_CHANNEL_LISTENER: _stop_listener,
    F.MQCMD_INQUIRE_LISTENER_STATUS: _inquire_listener_status,
}
