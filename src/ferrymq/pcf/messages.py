"""PCF messages <-> the command model: a request's MQCFH and parameters as a Command
(``to_command``), a Command as the request a client sends (``from_command``), and the
responses a client reads back (``responses_of``). The engine's command server answers
with the same parameter mapping (``to_param``)."""

from __future__ import annotations

from ferrymq.errors import MQError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.model import Command, Filter, Response, Value
from ferrymq.wire import pcf as P


def to_command(msg: P.PCFMessage) -> Command:
    """The Command a PCF request carries.

    Raises:
        MQError: MQRCCF_CFH_TYPE_ERROR (not a command), MQRCCF_CFIN/CFST_DUPLICATE_PARM.
    """
    if msg.header.type not in (F.MQCFT_COMMAND, F.MQCFT_COMMAND_XR):
        raise MQError(C.MQCC_FAILED, F.MQRCCF_CFH_TYPE_ERROR, f"MQCFH Type {msg.header.type} is not MQCFT_COMMAND")
    cmd = Command(msg.header.command)
    for p in msg.params:
        if isinstance(p, (P.CFIF, P.CFSF)):
            cmd.filters.append(Filter(p.parameter, p.operator, p.value))
            continue
        if isinstance(p, P.CFGR):
            raise MQError(C.MQCC_FAILED, F.MQRCCF_CFGR_PARM_ID_ERROR, f"group parameter {p.parameter} is not used by command {msg.header.command}")
        if p.parameter in cmd.params:
            dup = F.MQRCCF_CFIN_DUPLICATE_PARM if isinstance(p, P.CFIN) else F.MQRCCF_CFST_DUPLICATE_PARM
            raise MQError(C.MQCC_FAILED, dup, f"parameter {p.parameter} appears twice")
        cmd.params[p.parameter] = _value(p)
    if len(cmd.filters) > 1:
        raise MQError(C.MQCC_FAILED, F.MQRCCF_TOO_MANY_FILTERS, "one filter (WHERE) per command")
    return cmd


def _value(p: P.Param) -> Value:
    if isinstance(p, (P.CFIN, P.CFIN64)):
        return p.value
    if isinstance(p, P.CFST):
        return p.value
    if isinstance(p, (P.CFIL, P.CFSL)):
        return p.values
    assert isinstance(p, P.CFBS)
    return p.value


def to_param(selector: int, value: Value) -> P.Param:
    if isinstance(value, int):
        return P.CFIN(selector, int(value))
    if isinstance(value, str):
        return P.CFST(selector, value)
    if isinstance(value, bytes):
        return P.CFBS(selector, value)
    if all(isinstance(v, int) for v in value):
        return P.CFIL(selector, tuple(int(v) for v in value))
    return P.CFSL(selector, tuple(str(v) for v in value))


def from_command(cmd: Command) -> P.PCFMessage:
    """The PCF request for a Command (what PCFExecute and runmqsc -c send)."""
    params: list[P.Param] = [to_param(s, v) for s, v in cmd.params.items()]
    for f in cmd.filters:
        params.append(P.CFIF(f.parameter, f.operator, f.value) if isinstance(f.value, int)
                      else P.CFSF(f.parameter, f.operator, f.value))
    return P.PCFMessage(P.CFH(F.MQCFT_COMMAND, cmd.command, parameter_count=len(params), version=F.MQCFH_VERSION_3),
                        tuple(params))


def responses_of(messages: list[P.PCFMessage]) -> list[Response]:
    """Responses decoded by a client back into the model."""
    return [Response({p.parameter: _value(p) for p in m.params if not isinstance(p, (P.CFGR, P.CFIF, P.CFSF))},
                     m.header.comp_code, m.header.reason) for m in messages]

