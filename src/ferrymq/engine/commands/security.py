"""Security administration commands, and the authority every command needs.

SET_AUTH_REC, DELETE_AUTH_REC, INQUIRE_AUTH_RECS, INQUIRE_ENTITY_AUTH (MQSC SET/DELETE/
DISPLAY AUTHREC, DISPLAY ENTAUTH), CHANGE_AUTH_INFO and INQUIRE_AUTH_INFO(_NAMES) over
the OAM (engine.authority), and ``check_command``: the authority a command needs from
the user who sent it (IBM's: dsp to display, chg to alter, crt/dlt/clr on the object;
ctrl to stop a connection; chg on the queue manager to change authority records).
"""

from __future__ import annotations

from typing import cast

from ferrymq.engine.authority import (
    DEFAULT_AUTHINFO,
    GROUP,
    PRINCIPAL,
    Authorities,
    is_generic,
)
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import failed
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.model import Command, ParameterError, Response, Value

_QM = (C.MQOT_Q_MGR, 0)  # the queue manager object itself (no name parameter)
# command -> (object type, the parameter naming the object, the authority)
NEEDS: dict[int, tuple[int, int, int]] = {
    F.MQCMD_CREATE_Q: (C.MQOT_Q, C.MQCA_Q_NAME, F.MQAUTH_CREATE),
    F.MQCMD_COPY_Q: (C.MQOT_Q, F.MQCACF_TO_Q_NAME, F.MQAUTH_CREATE),
    F.MQCMD_CHANGE_Q: (C.MQOT_Q, C.MQCA_Q_NAME, F.MQAUTH_CHANGE),
    F.MQCMD_DELETE_Q: (C.MQOT_Q, C.MQCA_Q_NAME, F.MQAUTH_DELETE),
    F.MQCMD_CLEAR_Q: (C.MQOT_Q, C.MQCA_Q_NAME, F.MQAUTH_CLEAR),
    F.MQCMD_INQUIRE_Q: (C.MQOT_Q, C.MQCA_Q_NAME, F.MQAUTH_DISPLAY),
    F.MQCMD_INQUIRE_Q_NAMES: (C.MQOT_Q, C.MQCA_Q_NAME, F.MQAUTH_DISPLAY),
    F.MQCMD_INQUIRE_Q_STATUS: (C.MQOT_Q, C.MQCA_Q_NAME, F.MQAUTH_DISPLAY),
    F.MQCMD_CREATE_TOPIC: (C.MQOT_TOPIC, C.MQCA_TOPIC_NAME, F.MQAUTH_CREATE),
    F.MQCMD_COPY_TOPIC: (C.MQOT_TOPIC, F.MQCACF_TO_TOPIC_NAME, F.MQAUTH_CREATE),
    F.MQCMD_CHANGE_TOPIC: (C.MQOT_TOPIC, C.MQCA_TOPIC_NAME, F.MQAUTH_CHANGE),
    F.MQCMD_DELETE_TOPIC: (C.MQOT_TOPIC, C.MQCA_TOPIC_NAME, F.MQAUTH_DELETE),
    F.MQCMD_INQUIRE_TOPIC: (C.MQOT_TOPIC, C.MQCA_TOPIC_NAME, F.MQAUTH_DISPLAY),
    F.MQCMD_INQUIRE_TOPIC_NAMES: (C.MQOT_TOPIC, C.MQCA_TOPIC_NAME, F.MQAUTH_DISPLAY),
    F.MQCMD_CREATE_NAMELIST: (C.MQOT_NAMELIST, C.MQCA_NAMELIST_NAME, F.MQAUTH_CREATE),
    F.MQCMD_COPY_NAMELIST: (C.MQOT_NAMELIST, F.MQCACF_TO_NAMELIST_NAME, F.MQAUTH_CREATE),
    F.MQCMD_CHANGE_NAMELIST: (C.MQOT_NAMELIST, C.MQCA_NAMELIST_NAME, F.MQAUTH_CHANGE),
    F.MQCMD_DELETE_NAMELIST: (C.MQOT_NAMELIST, C.MQCA_NAMELIST_NAME, F.MQAUTH_DELETE),
    F.MQCMD_INQUIRE_NAMELIST: (C.MQOT_NAMELIST, C.MQCA_NAMELIST_NAME, F.MQAUTH_DISPLAY),
    F.MQCMD_INQUIRE_NAMELIST_NAMES: (C.MQOT_NAMELIST, C.MQCA_NAMELIST_NAME, F.MQAUTH_DISPLAY),
    F.MQCMD_INQUIRE_Q_MGR: (*_QM, F.MQAUTH_DISPLAY),
    F.MQCMD_PING_Q_MGR: (*_QM, F.MQAUTH_DISPLAY),
    F.MQCMD_INQUIRE_CONNECTION: (*_QM, F.MQAUTH_DISPLAY),
    F.MQCMD_INQUIRE_SUBSCRIPTION: (*_QM, F.MQAUTH_DISPLAY),
    F.MQCMD_INQUIRE_SUB_STATUS: (*_QM, F.MQAUTH_DISPLAY),
    F.MQCMD_INQUIRE_TOPIC_STATUS: (*_QM, F.MQAUTH_DISPLAY),
    F.MQCMD_INQUIRE_AUTH_INFO: (*_QM, F.MQAUTH_DISPLAY),
    F.MQCMD_INQUIRE_AUTH_INFO_NAMES: (*_QM, F.MQAUTH_DISPLAY),
    F.MQCMD_INQUIRE_AUTH_RECS: (*_QM, F.MQAUTH_DISPLAY),
    F.MQCMD_INQUIRE_ENTITY_AUTH: (*_QM, F.MQAUTH_DISPLAY),
    F.MQCMD_CHANGE_Q_MGR: (*_QM, F.MQAUTH_CHANGE),
    F.MQCMD_CHANGE_AUTH_INFO: (*_QM, F.MQAUTH_CHANGE),
    F.MQCMD_SET_AUTH_REC: (*_QM, F.MQAUTH_CHANGE),
    F.MQCMD_DELETE_AUTH_REC: (*_QM, F.MQAUTH_CHANGE),
    F.MQCMD_SET_CHLAUTH_REC: (*_QM, F.MQAUTH_CHANGE),
    F.MQCMD_INQUIRE_CHLAUTH_RECS: (*_QM, F.MQAUTH_DISPLAY),
    F.MQCMD_STOP_CONNECTION: (*_QM, F.MQAUTH_CONTROL),
}


# What a DISPLAY with a generic name answers per object: the parameter naming it, or the
# list of names (INQUIRE_*_NAMES).
_NAMED_BY = {C.MQOT_Q: (C.MQCA_Q_NAME, F.MQCACF_Q_NAMES), C.MQOT_TOPIC: (C.MQCA_TOPIC_NAME, F.MQCACF_TOPIC_NAMES),
             C.MQOT_NAMELIST: (C.MQCA_NAMELIST_NAME, F.MQCACF_NAMELIST_NAMES)}


def check_command(qm: QueueManager, cmd: Command, user: str) -> bool:
    """Raises MQError 2035 unless ``user`` may run ``cmd`` (nothing is checked while the OAM
    is off). A command not in the table is for administrators only. True for a DISPLAY of a
    generic name (``APP.*``): it runs, and ``displayable`` keeps the objects the user may
    display, as IBM's command server does."""
    oam = qm.state.authority
    if not oam.enabled or oam.is_admin(user):
        return False
    need = NEEDS.get(cmd.command)
    if need is None:
        oam.check(user, C.MQOT_Q_MGR, qm.name, (F.MQAUTH_SYSTEM,), f"run command {cmd.command} on")
        return False
    objtype, selector, auth = need
    name = qm.name if selector == 0 else str(cmd.params.get(selector, "")).strip()
    if auth == F.MQAUTH_DISPLAY and objtype in _NAMED_BY and is_generic(name):
        return True
    oam.check(user, objtype, name, (auth,), "administer")
    return False


def displayable(qm: QueueManager, cmd: Command, user: str, responses: list[Response]) -> list[Response]:
    """The answers of a generic DISPLAY that ``user`` may see (dsp on each object)."""
    objtype = NEEDS[cmd.command][0]
    one, many = _NAMED_BY[objtype]
    oam = qm.state.authority

    def may(name: object) -> bool:
        return F.MQAUTH_DISPLAY in oam.granted(user, objtype, str(name).strip())

    out = []
    for r in responses:
        if many in r.params and isinstance(r.params[many], tuple):
            names = r.params[many]
            assert isinstance(names, tuple)
            keep = [i for i, n in enumerate(names) if may(n)]
            params: dict[int, Value] = {}
            for k, v in r.params.items():  # the names and the lists beside them (their types)
                params[k] = cast(Value, tuple(v[i] for i in keep)) if isinstance(v, tuple) and len(v) == len(names) else v
            out.append(Response(params, r.comp, r.reason, r.detail))
        elif one not in r.params or may(r.params[one]):
            out.append(r)
    return out


def _entities(cmd: Command, required: bool) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for selector, kind in ((F.MQCACF_PRINCIPAL_ENTITY_NAMES, PRINCIPAL), (F.MQCACF_GROUP_ENTITY_NAMES, GROUP)):
        value = cmd.params.get(selector)
        if value is None:
            continue
        names = (value,) if isinstance(value, str) else value
        if not isinstance(names, tuple):
            raise ParameterError(F.MQRCCF_CFSL_PARM_ID_ERROR, selector, "entity names are a string list (MQCFSL)")
        out.extend((kind, str(n).strip()) for n in names if str(n).strip())
    if required and not out:
        raise failed(F.MQRCCF_ENTITY_NAME_MISSING, "name a principal (MQCACF_PRINCIPAL_ENTITY_NAMES) or a group "
                     "(MQCACF_GROUP_ENTITY_NAMES)")
    return out


def _auths(cmd: Command, selector: int) -> tuple[int, ...]:
    value = cmd.params.get(selector, ())
    if isinstance(value, int):
        return (value,)
    if not isinstance(value, tuple) or not all(isinstance(v, int) for v in value):
        raise ParameterError(F.MQRCCF_CFIL_PARM_ID_ERROR, selector, "authorities are an integer list (MQCFIL)")
    return tuple(int(v) for v in value)


def _objtype(cmd: Command, default: int | None = None) -> int:
    return cmd.number(F.MQIACF_OBJECT_TYPE, default)


def _profile(qm: QueueManager, cmd: Command, objtype: int) -> str:
    """The record's profile: for the queue manager object it may be left out (IBM: the
    profile is then the queue manager's name); any other type requires it."""
    if objtype == C.MQOT_Q_MGR and not str(cmd.params.get(F.MQCACF_AUTH_PROFILE_NAME, "")).strip():
        return qm.name
    return cmd.text(F.MQCACF_AUTH_PROFILE_NAME)


def _set_rec(qm: QueueManager, cmd: Command) -> list[Response]:
    add, remove = _auths(cmd, F.MQIACF_AUTH_ADD_AUTHS), _auths(cmd, F.MQIACF_AUTH_REMOVE_AUTHS)
    if not add and not remove:
        raise failed(F.MQRCCF_AUTH_VALUE_MISSING, "give MQIACF_AUTH_ADD_AUTHS or MQIACF_AUTH_REMOVE_AUTHS")
    objtype = _objtype(cmd)
    qm.state.authority.set_record(_profile(qm, cmd, objtype), objtype, _entities(cmd, True), add, remove)
    qm.need_sync()
    return [Response()]


def _delete_rec(qm: QueueManager, cmd: Command) -> list[Response]:
    objtype = _objtype(cmd)
    qm.state.authority.delete_record(_profile(qm, cmd, objtype), objtype, _entities(cmd, True))
    qm.need_sync()
    return [Response()]


def _record(profile: str, objtype: int, kind: str, name: str, auths: frozenset[int]) -> Response:
    return Response({F.MQCACF_AUTH_PROFILE_NAME: profile, F.MQIACF_OBJECT_TYPE: objtype,
                     F.MQIACF_ENTITY_TYPE: 1 if kind == PRINCIPAL else 2, F.MQCACF_ENTITY_NAME: name,
                     F.MQIACF_AUTHORIZATION_LIST: tuple(sorted(auths)) or (F.MQAUTH_NONE,)})


def _one_entity(cmd: Command) -> tuple[str, str] | None:
    name = str(cmd.params.get(F.MQCACF_ENTITY_NAME, "")).strip()
    if not name:
        return None
    return (GROUP if cmd.number(F.MQIACF_ENTITY_TYPE, 1) == 2 else PRINCIPAL, name)


def _inquire_recs(qm: QueueManager, cmd: Command) -> list[Response]:
    profile = str(cmd.params.get(F.MQCACF_AUTH_PROFILE_NAME, "")).strip()
    return [_record(p.name, p.objtype, e[0], e[1], auths)
            for p, e, auths in qm.state.authority.records(profile, _objtype(cmd, C.MQOT_ALL), _one_entity(cmd))]


def _inquire_entity(qm: QueueManager, cmd: Command) -> list[Response]:
    """DISPLAY ENTAUTH: what one principal may do to one object (its groups and the
    queue manager's administrators counted, as the checks count them)."""
    entity = _one_entity(cmd)
    if entity is None:
        raise failed(F.MQRCCF_ENTITY_NAME_MISSING, "DISPLAY ENTAUTH needs MQCACF_ENTITY_NAME")
    objtype = _objtype(cmd)
    name = str(cmd.params.get(C.MQCA_Q_MGR_NAME if objtype == C.MQOT_Q_MGR else F.MQCACF_AUTH_PROFILE_NAME,
                              qm.name if objtype == C.MQOT_Q_MGR else "")).strip()
    if not name or is_generic(name):
        raise failed(F.MQRCCF_PROFILE_NAME_ERROR, "DISPLAY ENTAUTH names one object, not a generic profile")
    oam: Authorities = qm.state.authority
    if entity[0] == GROUP:
        granted = frozenset().union(*(a for p, e, a in oam.records("", objtype, entity) if p.pattern.fullmatch(name)))
    else:
        granted = oam.granted(entity[1], objtype, name)
    return [_record(name, objtype, entity[0], entity[1], granted)]


# -- AUTHINFO (one IDPWOS object, the one CONNAUTH names) --------------------------------------

def _authinfo_params(oam: Authorities) -> dict[int, Value]:
    a = oam.authinfo
    return {C.MQCA_AUTH_INFO_NAME: a.name, C.MQIA_AUTH_INFO_TYPE: C.MQAIT_IDPW_OS,
            C.MQCA_AUTH_INFO_DESC: a.descr, C.MQIA_CHECK_CLIENT_BINDING: a.chckclnt,
            C.MQIA_CHECK_LOCAL_BINDING: a.chcklocl, C.MQIA_ADOPT_CONTEXT: int(a.adoptctx),
            C.MQIA_AUTHENTICATION_FAIL_DELAY: a.faildelay}


def _require_authinfo(qm: QueueManager, cmd: Command) -> None:
    name = cmd.text(C.MQCA_AUTH_INFO_NAME).strip()
    if name != qm.state.authority.authinfo.name and not (is_generic(name) and name.rstrip("*") == ""):
        raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, f"AUTHINFO {name!r} is not defined (there is {DEFAULT_AUTHINFO})")


def _inquire_authinfo(qm: QueueManager, cmd: Command) -> list[Response]:
    _require_authinfo(qm, cmd)
    kind = cmd.number(C.MQIA_AUTH_INFO_TYPE, C.MQAIT_ALL)
    if kind not in (C.MQAIT_ALL, C.MQAIT_IDPW_OS):
        return []
    return [Response(_authinfo_params(qm.state.authority))]


def _inquire_authinfo_names(qm: QueueManager, cmd: Command) -> list[Response]:
    return [Response({F.MQCACF_AUTH_INFO_NAMES: (qm.state.authority.authinfo.name,)})]


def _change_authinfo(qm: QueueManager, cmd: Command) -> list[Response]:
    _require_authinfo(qm, cmd)
    p = cmd.params
    adopt = p.get(C.MQIA_ADOPT_CONTEXT)
    descr = p.get(C.MQCA_AUTH_INFO_DESC)
    qm.state.authority.alter_authinfo(
        chckclnt=_int_or_none(p.get(C.MQIA_CHECK_CLIENT_BINDING)), chcklocl=_int_or_none(p.get(C.MQIA_CHECK_LOCAL_BINDING)),
        adoptctx=None if adopt is None else bool(adopt), faildelay=_int_or_none(p.get(C.MQIA_AUTHENTICATION_FAIL_DELAY)),
        descr=None if descr is None else str(descr))
    qm.need_sync()
    return [Response()]


def _int_or_none(value: object) -> int | None:
    return None if value is None else int(value)  # type: ignore[call-overload]


HANDLERS = {
    F.MQCMD_SET_AUTH_REC: _set_rec,
    F.MQCMD_DELETE_AUTH_REC: _delete_rec,
    F.MQCMD_INQUIRE_AUTH_RECS: _inquire_recs,
    F.MQCMD_INQUIRE_ENTITY_AUTH: _inquire_entity,
    F.MQCMD_INQUIRE_AUTH_INFO: _inquire_authinfo,
    F.MQCMD_INQUIRE_AUTH_INFO_NAMES: _inquire_authinfo_names,
    F.MQCMD_CHANGE_AUTH_INFO: _change_authinfo,
}
