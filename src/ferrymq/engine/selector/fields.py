"""Names a selector may use besides properties: Root.MQMD.* fields and JMS header names.

JMS headers map onto the MQMD as IBM MQ classes for JMS map them (JMSPriority = Priority,
JMSDeliveryMode 2/1 = persistent/not, JMSCorrelationID and JMSMessageID as 'ID:' + hex).
"""

from __future__ import annotations

from collections.abc import Callable

from ferrymq.engine.message import Message
from ferrymq.engine.selector.parser import Value
from ferrymq.mq import constants as C

_MQMD: dict[str, Callable[[Message], Value]] = {
    "Report": lambda m: m.md.report,
    "MsgType": lambda m: m.md.msg_type,
    "Expiry": lambda m: m.md.expiry,
    "Feedback": lambda m: m.md.feedback,
    "Encoding": lambda m: m.md.encoding,
    "CodedCharSetId": lambda m: m.md.coded_char_set_id,
    "Format": lambda m: m.md.format.rstrip(),
    "Priority": lambda m: m.priority,
    "Persistence": lambda m: m.persistence,
    "MsgId": lambda m: m.msg_id,
    "CorrelId": lambda m: m.correl_id,
    "BackoutCount": lambda m: m.md.backout_count,
    "ReplyToQ": lambda m: m.md.reply_to_q.rstrip(),
    "ReplyToQMgr": lambda m: m.md.reply_to_q_mgr.rstrip(),
    "UserIdentifier": lambda m: m.md.user_identifier.rstrip(),
    "AccountingToken": lambda m: m.md.accounting_token,
    "ApplIdentityData": lambda m: m.md.appl_identity_data.rstrip(),
    "PutApplType": lambda m: m.md.put_appl_type,
    "PutApplName": lambda m: m.md.put_appl_name.rstrip(),
    "PutDate": lambda m: m.md.put_date,
    "PutTime": lambda m: m.md.put_time,
    "ApplOriginData": lambda m: m.md.appl_origin_data.rstrip(),
    "GroupId": lambda m: m.md.group_id,
    "MsgSeqNumber": lambda m: m.md.msg_seq_number,
    "Offset": lambda m: m.md.offset,
    "MsgFlags": lambda m: m.md.msg_flags,
    "OriginalLength": lambda m: m.md.original_length,
}

FIELDS: dict[str, Callable[[Message], Value]] = {f"Root.MQMD.{k}": v for k, v in _MQMD.items()}
FIELDS.update({
    "JMSPriority": lambda m: m.priority,
    "JMSDeliveryMode": lambda m: 2 if m.persistence == C.MQPER_PERSISTENT else 1,
    "JMSCorrelationID": lambda m: "ID:" + m.correl_id.hex(),
    "JMSMessageID": lambda m: "ID:" + m.msg_id.hex(),
    "JMSTimestamp": lambda m: int(m.put_at * 1000),
    "JMSExpiration": lambda m: 0 if m.expires_at is None else int(m.expires_at * 1000),
    "JMSType": lambda m: m.properties.get("mcd.Type") if m.properties else None,
})


def message_lookup(msg: Message) -> Callable[[str], Value]:
    """The name -> typed value function a Selector evaluates a message with."""
    props = msg.properties

    def get(name: str) -> Value:
        field = FIELDS.get(name)
        if field is not None:
            return field(msg)
        if props is None:
            return None
        prop = props.find(name)
        if prop is None:  # usr.color and color are one property (properties.rules)
            if name.startswith("usr."):
                other = None if "." in name[4:] else name[4:]
            else:
                other = None if "." in name else "usr." + name
            prop = None if other is None else props.find(other)
            if prop is None:
                return None
        value = prop.value
        # A byte string is no JMS type: a selector sees it as unknown, like an absent property.
        return None if isinstance(value, (bytes, bytearray)) else value
    return get
