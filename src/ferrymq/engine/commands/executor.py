"""The one implementation of each administration command (PCF codes, MQSC verbs map here).

``execute(qm, command)`` runs a Command against a QueueManager and returns its responses,
one per object; a refused command raises MQError with IBM's reason (MQRC_ or MQRCCF_).
The object rules themselves stay in ObjectRegistry and the attribute catalog (attrs.py);
this module only maps parameters to them and objects back to parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ferrymq.engine import attrs as A
from ferrymq.engine.commands import channels, chlauth, namelists, processes, security, subs, topics
from ferrymq.engine.commands.params import settable
from ferrymq.engine.commands.status import inquire_connection, inquire_q_status
from ferrymq.engine.objects import QueueObject
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError, failed
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.messages import from_command, to_param
from ferrymq.pcf.model import Command, Filter, Response, Value
from ferrymq.wire import pcf as P

QTYPE_OF = {C.MQQT_LOCAL: A.QLOCAL, C.MQQT_ALIAS: A.QALIAS, C.MQQT_MODEL: A.QMODEL, C.MQQT_REMOTE: A.QREMOTE}
QTYPE_CODE = {v: k for k, v in QTYPE_OF.items()}
# Parameters a command reads itself: never treated as object attributes.
_CONTROL = {C.MQCA_Q_NAME, C.MQIA_Q_TYPE, F.MQIACF_REPLACE, F.MQIACF_PURGE, F.MQIACF_FORCE, F.MQCACF_FROM_Q_NAME,
            F.MQCACF_TO_Q_NAME, F.MQIACF_Q_ATTRS, F.MQIACF_Q_MGR_ATTRS, F.MQIACF_QSG_DISPS, F.MQCACF_COMMAND_SCOPE}


def execute(qm: QueueManager, cmd: Command, user: str | None = None) -> list[Response]:
    """Run one command; ``user``: who sent it, whose authority it needs (None: the queue
    manager's own caller, an embedded program's, is not checked).

    Raises:
        MQError: MQRCCF_CFH_COMMAND_ERROR for a command this queue manager does not serve,
            and the reason of whatever rule refused it (nothing is changed then).
    """
    handler = _HANDLERS.get(cmd.command)
    if handler is None:
        raise failed(F.MQRCCF_CFH_COMMAND_ERROR, f"PCF command {cmd.command} is not supported by ferrymq")
    try:
        generic = user is not None and security.check_command(qm, cmd, user)
    except MQError as exc:
        if exc.reason == C.MQRC_NOT_AUTHORIZED and user is not None:
            qm.events.not_authorized(F.MQRQ_CMD_NOT_AUTHORIZED, user, command=cmd.command)
        raise
    watched = cmd.command in _CONFIGURING and qm.events.on("CONFIGEV")
    before = _described(qm, cmd, cmd.command) if watched else None
    out = handler(qm, cmd)
    if cmd.command not in _INQUIRIES:  # a channel or queue defined, altered, deleted...
        qm.state.channel_control.changed()
    if watched:
        _configured(qm, cmd, before)
    if qm.events.on("CMDEV"):
        qm.events.commanded(cmd.command, from_command(cmd).params, cmd.command in _INQUIRIES)
    if generic:
        assert user is not None
        return security.displayable(qm, cmd, user, out)
    return out


# Configuration events (engine.events): the commands that create, change or delete a queue
# or a process, and whether the object is named by the command's own or its TO parameter.
_CONFIGURING = {F.MQCMD_CREATE_Q: C.MQRC_CONFIG_CREATE_OBJECT, F.MQCMD_COPY_Q: C.MQRC_CONFIG_CREATE_OBJECT,
                F.MQCMD_CHANGE_Q: C.MQRC_CONFIG_CHANGE_OBJECT, F.MQCMD_DELETE_Q: C.MQRC_CONFIG_DELETE_OBJECT,
                F.MQCMD_CREATE_PROCESS: C.MQRC_CONFIG_CREATE_OBJECT, F.MQCMD_COPY_PROCESS: C.MQRC_CONFIG_CREATE_OBJECT,
                F.MQCMD_CHANGE_PROCESS: C.MQRC_CONFIG_CHANGE_OBJECT,
                F.MQCMD_DELETE_PROCESS: C.MQRC_CONFIG_DELETE_OBJECT}
_INQUIRIES = frozenset(v for k, v in vars(F).items() if k.startswith("MQCMD_INQUIRE_"))


def _object_of(cmd: Command) -> tuple[int, int, str]:
    """(MQOT_*, name parameter, name) of the object a configuring command is about."""
    if cmd.command in (F.MQCMD_CREATE_PROCESS, F.MQCMD_COPY_PROCESS, F.MQCMD_CHANGE_PROCESS, F.MQCMD_DELETE_PROCESS):
        name = cmd.text(F.MQCACF_TO_PROCESS_NAME if cmd.command == F.MQCMD_COPY_PROCESS else C.MQCA_PROCESS_NAME)
        return C.MQOT_PROCESS, C.MQCA_PROCESS_NAME, name.strip()
    name = cmd.text(F.MQCACF_TO_Q_NAME if cmd.command == F.MQCMD_COPY_Q else C.MQCA_Q_NAME)
    return C.MQOT_Q, C.MQCA_Q_NAME, name.strip()


def _described(qm: QueueManager, cmd: Command, command: int) -> list[P.Param] | None:
    """The object's attributes as a configuration event carries them (None: no such object)."""
    kind, _, name = _object_of(cmd)
    if kind == C.MQOT_PROCESS:
        process = qm.state.processes.find(name)
        values = processes.process_params(process, (F.MQIACF_ALL,)) if process is not None else None
    else:
        queue = qm.objects.find(name)
        values = queue_params(queue, (F.MQIACF_ALL,)) if queue is not None else None
    return None if values is None else [to_param(k, v) for k, v in values.items()]


def _configured(qm: QueueManager, cmd: Command, before: list[P.Param] | None) -> None:
    reason = _CONFIGURING[cmd.command]
    kind, param, name = _object_of(cmd)
    if reason == C.MQRC_CONFIG_DELETE_OBJECT:
        qm.events.configured(reason, kind, param, name, before or [])
        return
    after = _described(qm, cmd, cmd.command) or []
    if reason == C.MQRC_CONFIG_CHANGE_OBJECT:
        qm.events.configured(reason, kind, param, name, after, before or [])
    else:
        qm.events.configured(reason, kind, param, name, after)


def queue_type(cmd: Command, required: bool) -> str | None:
    code = cmd.params.get(C.MQIA_Q_TYPE)
    if code is None or code == C.MQQT_ALL:
        if required:
            raise failed(F.MQRCCF_PARM_MISSING, "MQIA_Q_TYPE (queue type) is required by this command")
        return None
    if code not in QTYPE_OF:
        raise failed(F.MQRCCF_Q_TYPE_ERROR, f"queue type {code!r} is not local (1), model (2), alias (3) or remote (6)")
    return QTYPE_OF[int(code)]


def attributes(qtype: str, cmd: Command) -> dict[str, object]:
    """The definition attributes a CREATE/CHANGE/COPY carries, as catalog names."""
    table = A.QMGR_BY_SELECTOR if qtype == A.QMGR else A.QUEUE_BY_SELECTOR

    def lookup(sel: int) -> A.Attr | None:
        attr = A.QUEUE_BY_NAME["DEFTYPE"] if sel == C.MQIA_DEFINITION_TYPE and qtype == A.QMODEL else table.get(sel)
        return attr if attr is not None and qtype in attr.types else None

    return settable(cmd, lookup, _CONTROL, qtype)


def _create(qm: QueueManager, cmd: Command) -> list[Response]:
    qtype = queue_type(cmd, True)
    assert qtype is not None
    replace = cmd.replacing()
    qm.objects.define(qtype, cmd.text(C.MQCA_Q_NAME), attributes(qtype, cmd), replace=replace)
    qm.need_sync()
    return [Response()]


def _copy(qm: QueueManager, cmd: Command) -> list[Response]:
    qtype = queue_type(cmd, True)
    assert qtype is not None
    source = qm.objects.require(cmd.text(F.MQCACF_FROM_Q_NAME))
    if source.qtype != qtype:
        raise failed(F.MQRCCF_LIKE_OBJECT_WRONG_TYPE, f"{source.name} is a {source.qtype}, not a {qtype}")
    replace = cmd.replacing()
    qm.objects.define(qtype, cmd.text(F.MQCACF_TO_Q_NAME), attributes(qtype, cmd), like=source.name, replace=replace)
    qm.need_sync()
    return [Response()]


def _target(qm: QueueManager, cmd: Command) -> QueueObject:
    """The queue MQCA_Q_NAME names, of MQIA_Q_TYPE when given."""
    qtype = queue_type(cmd, False)
    obj = qm.objects.require(cmd.text(C.MQCA_Q_NAME))
    if qtype is not None and obj.qtype != qtype:
        raise failed(F.MQRCCF_OBJECT_WRONG_TYPE, f"{obj.name} is a {obj.qtype}, not a {qtype}")
    return obj


def _change(qm: QueueManager, cmd: Command) -> list[Response]:
    obj = _target(qm, cmd)
    changes = attributes(obj.qtype, cmd)
    qm.objects.alter(obj.name, changes)
    qm.altered(obj, changes)
    qm.need_sync()
    return [Response()]


def _delete(qm: QueueManager, cmd: Command) -> list[Response]:
    obj = _target(qm, cmd)
    purge = cmd.number(F.MQIACF_PURGE, F.MQPO_NO) == F.MQPO_YES
    if purge and obj.is_local:
        _check_clearable(obj)
        _discard_all(qm, obj)
    qm.objects.delete(obj.name, purge=purge)
    qm.need_sync()
    return [Response()]


def _check_clearable(obj: QueueObject) -> None:
    if obj.handles:
        raise failed(C.MQRC_OBJECT_IN_USE, f"{obj.name} is open by {len(obj.handles)} handles")
    if obj.messages.uncommitted:
        raise failed(C.MQRC_OBJECT_IN_USE, f"{obj.name} has {obj.messages.uncommitted} uncommitted messages")


def _discard_all(qm: QueueManager, obj: QueueObject) -> None:
    for msg in list(obj.messages.by_seq.values()):
        qm.discard_expired(obj, msg)  # removes it from the queue and the journal


def _clear(qm: QueueManager, cmd: Command) -> list[Response]:
    obj = qm.objects.require(cmd.text(C.MQCA_Q_NAME))
    if not obj.is_local:
        raise failed(F.MQRCCF_Q_WRONG_TYPE, f"{obj.name} is a {obj.qtype}; only local queues are cleared")
    _check_clearable(obj)
    purged = obj.messages.depth
    _discard_all(qm, obj)
    qm.monitor.purged(obj, purged)  # PurgeCount of the statistics messages
    qm.need_sync()
    return [Response()]


def queue_params(obj: QueueObject, wanted: Iterable[int]) -> dict[int, Value]:
    """A queue as INQUIRE_Q answers: name, type, then the asked-for attributes."""
    want = set(wanted)
    every = F.MQIACF_ALL in want
    out: dict[int, Value] = {C.MQCA_Q_NAME: obj.name, C.MQIA_Q_TYPE: QTYPE_CODE[obj.qtype]}
    for attr in A.QUEUE_ATTRS + A.QUEUE_STATUS_ATTRS:
        if obj.qtype not in attr.types or attr.selector in out or (attr.name == "QDEFTYPE" and obj.qtype != A.QLOCAL):
            continue
        if attr.name == "DEFTYPE" and obj.qtype != A.QMODEL:
            continue
        if every or attr.selector in want:
            value = obj.status(attr.name)
            out[attr.selector] = value if isinstance(value, str) else int(value)
    return out


def _matching(qm: QueueManager, cmd: Command) -> list[QueueObject]:
    name = cmd.text(C.MQCA_Q_NAME)
    qtype = queue_type(cmd, False)
    objs = [qm.objects.queues[n] for n in qm.objects.names(name, qtype)]
    if not objs:
        raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, f"queue {name!r} is not defined" + (f" as {qtype}" if qtype else ""))
    return objs


def _inquire(qm: QueueManager, cmd: Command) -> list[Response]:
    # As IBM: the attribute a filter tests is returned whether or not it was asked for.
    wanted = cmd.selectors(F.MQIACF_Q_ATTRS) + tuple(f.parameter for f in cmd.filters)
    out = []
    for obj in _matching(qm, cmd):
        params = queue_params(obj, wanted)
        if all(_passes(obj, f) for f in cmd.filters):
            out.append(Response(params))
    return out


def _passes(obj: QueueObject, f: Filter) -> bool:
    """A queue without the filtered attribute (MAXDEPTH of an alias) never matches, as in IBM."""
    name = _name_of(obj, f.parameter)
    return name is not None and f.matches(obj.status(name))


def _name_of(obj: QueueObject, selector: int) -> str | None:
    if selector == C.MQCA_Q_NAME:
        return "QUEUE"
    attr = A.QUEUE_BY_SELECTOR.get(selector)
    if selector == C.MQIA_DEFINITION_TYPE and obj.qtype == A.QMODEL:
        return "DEFTYPE"
    if attr is None:
        raise failed(F.MQRCCF_FILTER_ERROR, f"filter parameter {selector} is not a queue attribute")
    return attr.name if obj.qtype in attr.types else None


def _inquire_names(qm: QueueManager, cmd: Command) -> list[Response]:
    name = cmd.text(C.MQCA_Q_NAME)
    qtype = queue_type(cmd, False)
    names = qm.objects.names(name, qtype)
    types = tuple(QTYPE_CODE[qm.objects.queues[n].qtype] for n in names)
    return [Response({F.MQCACF_Q_NAMES: tuple(names), F.MQIACF_Q_TYPES: types})]


def qmgr_params(qm: QueueManager, wanted: Iterable[int]) -> dict[int, Value]:
    want = set(wanted)
    every = F.MQIACF_ALL in want
    out: dict[int, Value] = {}
    for attr in A.QMGR_ATTRS:
        if every or attr.selector in want or attr.selector == C.MQCA_Q_MGR_NAME:
            value = qm.objects.qmgr_status(attr.name)
            out[attr.selector] = value if isinstance(value, str) else int(value)
    return out


def _inquire_qmgr(qm: QueueManager, cmd: Command) -> list[Response]:
    return [Response(qmgr_params(qm, cmd.selectors(F.MQIACF_Q_MGR_ATTRS)))]


def _change_qmgr(qm: QueueManager, cmd: Command) -> list[Response]:
    qm.objects.alter_qmgr(attributes(A.QMGR, cmd))
    qm.need_sync()
    return [Response()]


def _ping(qm: QueueManager, cmd: Command) -> list[Response]:
    return [Response()]


def _reset_qmgr(qm: QueueManager, cmd: Command) -> list[Response]:
    """RESET QMGR TYPE(STATISTICS): this interval's statistics written now, a new one begun
    (engine.monitoring); the log and publish/subscribe actions are not ferrymq's."""
    action = cmd.number(F.MQIACF_ACTION)
    if action != F.MQACT_COLLECT_STATISTICS:
        raise failed(F.MQRCCF_PARM_VALUE_ERROR, f"RESET QMGR action {action}: only TYPE(STATISTICS) "
                     f"(MQACT_COLLECT_STATISTICS) is supported")
    qm.monitor.collect(qm.clock.now())
    return [Response()]


_HANDLERS: dict[int, Callable[[QueueManager, Command], list[Response]]] = {
    F.MQCMD_CREATE_Q: _create,
    F.MQCMD_COPY_Q: _copy,
    F.MQCMD_CHANGE_Q: _change,
    F.MQCMD_DELETE_Q: _delete,
    F.MQCMD_CLEAR_Q: _clear,
    F.MQCMD_INQUIRE_Q: _inquire,
    F.MQCMD_INQUIRE_Q_NAMES: _inquire_names,
    F.MQCMD_INQUIRE_Q_STATUS: inquire_q_status,
    F.MQCMD_INQUIRE_Q_MGR: _inquire_qmgr,
    F.MQCMD_CHANGE_Q_MGR: _change_qmgr,
    F.MQCMD_PING_Q_MGR: _ping,
    F.MQCMD_RESET_Q_MGR: _reset_qmgr,
    F.MQCMD_INQUIRE_CONNECTION: inquire_connection,
    **topics.HANDLERS,  # TOPIC objects, DISPLAY TPSTATUS, CLEAR TOPICSTR
    **subs.HANDLERS,  # DEFINE/ALTER/DELETE/DISPLAY SUB, DISPLAY SBSTATUS
    **namelists.HANDLERS,  # DEFINE/ALTER/DELETE/DISPLAY NAMELIST
    **channels.HANDLERS,  # CHANNEL and LISTENER objects, channel control, CHSTATUS, LSSTATUS
    **processes.HANDLERS,  # DEFINE/ALTER/DELETE/DISPLAY PROCESS
    **security.HANDLERS,  # SET/DELETE/DISPLAY AUTHREC, DISPLAY ENTAUTH, ALTER/DISPLAY AUTHINFO
    **chlauth.HANDLERS,  # SET/DISPLAY CHLAUTH
}
