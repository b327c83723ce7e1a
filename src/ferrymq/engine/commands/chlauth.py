"""MQCMD_SET_CHLAUTH_REC and MQCMD_INQUIRE_CHLAUTH_RECS (MQSC SET CHLAUTH, DISPLAY
CHLAUTH) over the queue manager's channel authentication records (engine.chlauth), with
IBM's parameters:

| parameter                    | MQSC      | for                                         |
|------------------------------|-----------|---------------------------------------------|
| MQCACH_CHANNEL_NAME          | CHLAUTH() | the channel profile                         |
| MQIACF_CHLAUTH_TYPE          | TYPE      | MQCAUT_*                                    |
| MQIACF_ACTION                | ACTION    | MQACT_ADD (default), REPLACE, REMOVE, REMOVEALL |
| MQCACH_CONNECTION_NAME       | ADDRESS   | the address pattern                         |
| MQCACH_CONNECTION_NAME_LIST  | ADDRLIST  | BLOCKADDR                                   |
| MQCACH_MCA_USER_ID_LIST      | USERLIST  | BLOCKUSER                                   |
| MQCACH_CLIENT_USER_ID        | CLNTUSER  | USERMAP                                     |
| MQCA_REMOTE_Q_MGR_NAME       | QMNAME    | QMGRMAP                                     |
| MQCACH_SSL_PEER_NAME         | SSLPEER   | SSLPEERMAP                                  |
| MQCACH_SSL_CERT_ISSUER_NAME  | SSLCERTI  | SSLPEERMAP                                  |
| MQIACH_USER_SOURCE           | USERSRC   | MQUSRC_MAP (default), NOACCESS, CHANNEL     |
| MQCACH_MCA_USER_ID           | MCAUSER   | with USERSRC(MAP)                           |
| MQIA_CHECK_CLIENT_BINDING    | CHCKCLNT  | ADDRESSMAP, USERMAP                         |
| MQIACH_WARNING               | WARN      | MQWARN_NO, MQWARN_YES                       |
| MQCA_CHLAUTH_DESC            | DESCR     |                                             |
| MQIACH_MATCH                 | MATCH     | INQUIRE: GENERIC, RUNCHECK, EXACT, ALL      |

MATCH(RUNCHECK) names one channel (not generic) and the partner's ADDRESS (an IP address,
not a pattern), with CLNTUSER for a SVRCONN channel or QMNAME for the others (SSLPEER
optionally): it answers the record a channel with those values would meet, the one that
decides (BLOCKADDR, the mapping record, or the BLOCKUSER record that would block it), and
nothing when no record applies.
"""

from __future__ import annotations

from ferrymq.engine import chlauth as X
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import failed
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.model import Command, ParameterError, Response, Value


def _list(cmd: Command, selector: int) -> tuple[str, ...]:
    value = cmd.params.get(selector)
    if value is None:
        return ()
    if isinstance(value, str):  # one entry given as an MQCFST (pymqi's tests do so)
        return tuple(v for v in value.replace(",", " ").split() if v)
    if not isinstance(value, tuple) or not all(isinstance(v, str) for v in value):
        raise ParameterError(F.MQRCCF_CFSL_PARM_ID_ERROR, selector, "a list of strings (MQCFSL)")
    return tuple(str(v) for v in value)


def _text(cmd: Command, selector: int) -> str:
    value = cmd.params.get(selector, "")
    if not isinstance(value, str):
        raise ParameterError(F.MQRCCF_CFST_PARM_ID_ERROR, selector, "a string (MQCFST)")
    return value.strip()


def _set(qm: QueueManager, cmd: Command) -> list[Response]:
    profile = _text(cmd, F.MQCACH_CHANNEL_NAME)
    if not profile:
        raise failed(F.MQRCCF_CHLAUTH_NAME_ERROR, "name the channel profile (MQCACH_CHANNEL_NAME)")
    if F.MQIACF_CHLAUTH_TYPE not in cmd.params:
        raise failed(F.MQRCCF_CHLAUTH_TYPE_ERROR, "give the record's TYPE (MQIACF_CHLAUTH_TYPE)")
    kind = cmd.number(F.MQIACF_CHLAUTH_TYPE)
    altered = X.altered_stamp(*qm.state.stamp_put(qm.state.clock.now()))
    rec = X.Record(profile, kind, address=_text(cmd, F.MQCACH_CONNECTION_NAME),
                   clntuser=_text(cmd, F.MQCACH_CLIENT_USER_ID), qmname=_text(cmd, C.MQCA_REMOTE_Q_MGR_NAME),
                   sslpeer=_text(cmd, F.MQCACH_SSL_PEER_NAME), sslcerti=_text(cmd, F.MQCACH_SSL_CERT_ISSUER_NAME),
                   usersrc=cmd.number(F.MQIACH_USER_SOURCE, C.MQUSRC_MAP), mcauser=_text(cmd, F.MQCACH_MCA_USER_ID),
                   userlist=_list(cmd, F.MQCACH_MCA_USER_ID_LIST), addrlist=_list(cmd, F.MQCACH_CONNECTION_NAME_LIST),
                   chckclnt=cmd.number(C.MQIA_CHECK_CLIENT_BINDING, F.MQCHK_AS_Q_MGR),
                   warn=cmd.number(F.MQIACH_WARNING, C.MQWARN_NO) == C.MQWARN_YES,
                   descr=_text(cmd, C.MQCA_CHLAUTH_DESC)[:C.MQ_CHLAUTH_DESC_LENGTH], altered=altered)
    oam = qm.state.authority
    oam.chlauth.set(rec, cmd.number(F.MQIACF_ACTION, F.MQACT_ADD))
    oam.persist()
    qm.need_sync()
    return [Response()]


def response(rec: X.Record) -> Response:
    """One record as INQUIRE_CHLAUTH_RECS answers it (the parameters of its type)."""
    date, _, tod = rec.altered.partition(" ")
    params: dict[int, Value] = {F.MQCACH_CHANNEL_NAME: rec.profile, F.MQIACF_CHLAUTH_TYPE: rec.type,
                                C.MQCA_CHLAUTH_DESC: rec.descr}
    if rec.type == X.BLOCKUSER:
        params[F.MQCACH_MCA_USER_ID_LIST] = rec.userlist
    elif rec.type == X.BLOCKADDR:
        params[F.MQCACH_CONNECTION_NAME_LIST] = rec.addrlist
    else:
        params[F.MQCACH_CONNECTION_NAME] = rec.address
        if rec.type == X.USERMAP:
            params[F.MQCACH_CLIENT_USER_ID] = rec.clntuser
        elif rec.type == X.QMGRMAP:
            params[C.MQCA_REMOTE_Q_MGR_NAME] = rec.qmname
        elif rec.type == X.SSLPEERMAP:
            params[F.MQCACH_SSL_PEER_NAME] = rec.sslpeer
            params[F.MQCACH_SSL_CERT_ISSUER_NAME] = rec.sslcerti
        params[F.MQIACH_USER_SOURCE] = rec.usersrc
        params[F.MQCACH_MCA_USER_ID] = rec.mcauser
        if rec.type in (X.ADDRESSMAP, X.USERMAP):
            params[C.MQIA_CHECK_CLIENT_BINDING] = rec.chckclnt
    params[F.MQIACH_WARNING] = C.MQWARN_YES if rec.warn else C.MQWARN_NO
    params[C.MQCA_ALTERATION_DATE] = date
    params[C.MQCA_ALTERATION_TIME] = tod
    return Response(params)


def _inquire(qm: QueueManager, cmd: Command) -> list[Response]:
    name = _text(cmd, F.MQCACH_CHANNEL_NAME) or "*"
    kind = cmd.number(F.MQIACF_CHLAUTH_TYPE, F.MQCAUT_ALL)
    match = cmd.number(F.MQIACH_MATCH, F.MQMATCH_GENERIC)
    if match not in (F.MQMATCH_GENERIC, F.MQMATCH_RUNCHECK, F.MQMATCH_EXACT, F.MQMATCH_ALL):
        raise failed(F.MQRCCF_WRONG_CHLAUTH_MATCH, f"MATCH {match} is not GENERIC, RUNCHECK, EXACT or ALL")
    table = qm.state.authority.chlauth
    if match != F.MQMATCH_RUNCHECK:
        found = table.select(name, kind, match)
        if not found:  # runmqsc: AMQ8884E Channel authentication record not found
            raise failed(F.MQRCCF_CHLAUTH_NOT_FOUND, f"no channel authentication record for {name!r}")
        return [response(r) for r in found]
    return [response(r) for r in runcheck(qm, cmd, name, kind)]


def runcheck(qm: QueueManager, cmd: Command, channel: str, kind: int) -> list[X.Record]:
    """DISPLAY CHLAUTH MATCH(RUNCHECK): the record that decides for the partner described.

    Raises:
        MQError: MQRCCF_CHLAUTH_RUNCHECK_ERROR for a generic channel or address, a missing
            address, a TYPE other than ALL, or neither CLNTUSER nor QMNAME.
    """
    address = _text(cmd, F.MQCACH_CONNECTION_NAME)
    clntuser, qmname = _text(cmd, F.MQCACH_CLIENT_USER_ID), _text(cmd, C.MQCA_REMOTE_Q_MGR_NAME)
    if "*" in channel or not address or "*" in address or kind != F.MQCAUT_ALL or bool(clntuser) == bool(qmname):
        raise failed(F.MQRCCF_CHLAUTH_RUNCHECK_ERROR, "MATCH(RUNCHECK) takes one channel name (not generic), "
                     "TYPE(ALL), the partner's ADDRESS (not generic) and CLNTUSER or QMNAME")
    chltype = F.MQCHT_SVRCONN if clntuser else F.MQCHT_RECEIVER
    partner = X.Partner(channel, chltype, address, clntuser, qmname, _text(cmd, F.MQCACH_SSL_PEER_NAME),
                        _text(cmd, F.MQCACH_SSL_CERT_ISSUER_NAME))
    oam = qm.state.authority
    decision = X.resolve(oam.chlauth.records, partner, oam.is_admin, lambda mapped: mapped or clntuser)
    return [decision.record] if decision.record is not None else []


HANDLERS = {F.MQCMD_SET_CHLAUTH_REC: _set, F.MQCMD_INQUIRE_CHLAUTH_RECS: _inquire}
