"""How the command server answers a PCF request (the message mapping is ferrymq.pcf.messages).

``answer(qm, request_bytes, encoding)`` decodes an MQCFH command, executes it and returns
the response messages as IBM lays them out: one per object, MsgSeqNumber counting from 1,
MQCFC_LAST on the final one, CompCode/Reason in each header. An error is one response
with MQCC_FAILED and the reason (MQRC_ values the PCF interface reports with its own
MQRCCF_ code are translated, e.g. 2100 -> 4001 MQRCCF_OBJECT_ALREADY_EXISTS).
"""

from __future__ import annotations

from ferrymq.engine import attrs as A
from ferrymq.engine import chlattrs as K
from ferrymq.engine.commands.executor import execute
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import DecodeError, MQError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.messages import to_command, to_param
from ferrymq.pcf.model import Command, ParameterError, Response, Value
from ferrymq.wire import pcf as P

PCF_REASON = {
    C.MQRC_OBJECT_ALREADY_EXISTS: F.MQRCCF_OBJECT_ALREADY_EXISTS,
    C.MQRC_OBJECT_TYPE_ERROR: F.MQRCCF_OBJECT_WRONG_TYPE,
    C.MQRC_OBJECT_NAME_ERROR: F.MQRCCF_OBJECT_NAME_ERROR,
    C.MQRC_INHIBIT_VALUE_ERROR: F.MQRCCF_ATTR_VALUE_ERROR,
    C.MQRC_CHAR_ATTR_LENGTH_ERROR: F.MQRCCF_ATTR_VALUE_ERROR,
    C.MQRC_OBJECT_IN_USE: F.MQRCCF_OBJECT_OPEN,
    C.MQRC_SUB_ALREADY_EXISTS: F.MQRCCF_SUB_ALREADY_EXISTS,
    C.MQRC_SUBSCRIPTION_IN_USE: F.MQRCCF_SUBSCRIPTION_IN_USE,
    C.MQRC_DURABILITY_NOT_ALLOWED: F.MQRCCF_DURABILITY_NOT_ALLOWED,
}


# IBM's command server answers character attributes blank-padded to their MQCHARn length.
# Topic strings, selectors and user data are MQCHARV fields: returned as they are.
PADDED = {a.selector: a.length for a in A.QUEUE_ATTRS + A.QUEUE_STATUS_ATTRS + A.QMGR_ATTRS + A.QSTATUS_ATTRS
          + A.TOPIC_ATTRS + A.TOPIC_STATUS_ATTRS + A.TPSTATUS_ATTRS + A.SUB_ATTRS + A.SUB_STATUS_ATTRS + A.PROCESS_ATTRS
          if a.kind == "str" and a.length <= 264}
# An exit list's items (kind "strings") each padded to its field: MQ_EXIT_NAME_LENGTH, MQ_EXIT_DATA_LENGTH.
PADDED.update({a.selector: a.length for a in K.CHANNEL_ATTRS + K.LISTENER_ATTRS if a.kind in ("str", "strings")})
PADDED[F.MQCACF_Q_NAMES] = C.MQ_Q_NAME_LENGTH
PADDED[F.MQCACH_CHANNEL_NAME] = PADDED[F.MQCACH_CHANNEL_NAMES] = C.MQ_CHANNEL_NAME_LENGTH
PADDED[F.MQCACF_TOPIC_NAMES] = C.MQ_TOPIC_NAME_LENGTH
PADDED[F.MQCACF_OBJECT_NAME] = C.MQ_OBJECT_NAME_LENGTH


def padded(selector: int, value: Value) -> Value:
    width = PADDED.get(selector)
    if width is None:
        return value
    if isinstance(value, str):
        return value.ljust(width)
    if isinstance(value, tuple) and all(isinstance(v, str) for v in value):
        return tuple(str(v).ljust(width) for v in value)
    return value


def run(qm: QueueManager, cmd: Command, user: str | None = None) -> list[Response]:
    """Execute (with ``user``'s authority), turning a refusal into the single failed
    response PCF sends."""
    try:
        return execute(qm, cmd, user)
    except MQError as exc:
        params: dict[int, Value] = {}
        if isinstance(exc, ParameterError):
            params[F.MQIACF_PARAMETER_ID] = exc.parameter
        return [Response(params, C.MQCC_FAILED, PCF_REASON.get(exc.reason, exc.reason), exc.detail)]


def answer(qm: QueueManager, request: bytes, encoding: int, user: str | None = None) -> list[bytes]:
    """The response messages to a PCF request (see the module docstring); ``user``: the
    request's UserIdentifier, whose authority it needs."""
    command, version = F.MQCMD_NONE, F.MQCFH_VERSION_1
    try:
        msg = P.PCFMessage.unpack(request, encoding)
        command, version = msg.header.command, msg.header.version
        responses = run(qm, to_command(msg), user)
    except DecodeError as exc:
        responses = [Response({}, C.MQCC_FAILED, F.MQRCCF_STRUCTURE_TYPE_ERROR, str(exc))]
    except MQError as exc:
        responses = [Response({}, C.MQCC_FAILED, exc.reason, exc.detail)]
    if not responses:  # a generic INQUIRE that matched nothing still gets its final reply
        responses = [Response()]
    out = []
    for i, r in enumerate(responses, 1):
        params = tuple(to_param(s, padded(s, v)) for s, v in r.params.items())
        hdr = P.CFH(F.MQCFT_RESPONSE, command, i, F.MQCFC_LAST if i == len(responses) else F.MQCFC_NOT_LAST,
                    r.comp, r.reason, len(params), version)
        out.append(P.PCFMessage(hdr, params).pack(encoding))
    return out
