"""The MQOD's name fields against the lengths of IBM's fixed fields: one rule for the
queue manager (engine.validate) and the clients, which refuse what it would refuse.

IBM's MQOD has room for 48 characters of ObjectName, ObjectQMgrName and DynamicQName and
12 of AlternateUserId, so an IBM application cannot pass a longer one; ferrymq's frame
carries up to 65535 bytes in each. A longer name cannot name anything, so it fails as a
name that names nothing does, with a detail that gives its length and the limit (never
the name itself: a reply must not grow with what a request carried).
"""

from __future__ import annotations

from ferrymq.errors import failed
from ferrymq.mq import constants as C


def check_od_names(object_name: str, object_q_mgr_name: str, alternate_user_id: str, options: int) -> None:
    """MQOPEN's (and MQPUT1's) names, before anything else is looked at.

    Raises:
        MQError: ObjectName over MQ_Q_NAME_LENGTH: MQRC_UNKNOWN_OBJECT_NAME (2085);
            ObjectQMgrName over MQ_Q_MGR_NAME_LENGTH: MQRC_UNKNOWN_OBJECT_Q_MGR (2086, the
            reason for a name that does not satisfy the naming rules); AlternateUserId over
            MQ_USER_ID_LENGTH with MQOO_ALTERNATE_USER_AUTHORITY: MQRC_NOT_AUTHORIZED (2035;
            without the option IBM ignores the field, and so does this). Trailing blanks
            do not count, as they pad IBM's fields.
    """
    if len(object_name) > C.MQ_Q_NAME_LENGTH and len(object_name.rstrip()) > C.MQ_Q_NAME_LENGTH:
        raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, _too_long("ObjectName", object_name, "MQ_Q_NAME_LENGTH",
                                                           C.MQ_Q_NAME_LENGTH))
    if len(object_q_mgr_name) > C.MQ_Q_MGR_NAME_LENGTH and len(object_q_mgr_name.rstrip()) > C.MQ_Q_MGR_NAME_LENGTH:
        raise failed(C.MQRC_UNKNOWN_OBJECT_Q_MGR, _too_long("ObjectQMgrName", object_q_mgr_name,
                                                            "MQ_Q_MGR_NAME_LENGTH", C.MQ_Q_MGR_NAME_LENGTH))
    if options & C.MQOO_ALTERNATE_USER_AUTHORITY and len(alternate_user_id.rstrip()) > C.MQ_USER_ID_LENGTH:
        raise failed(C.MQRC_NOT_AUTHORIZED, _too_long("AlternateUserId", alternate_user_id, "MQ_USER_ID_LENGTH",
                                                      C.MQ_USER_ID_LENGTH))


def check_dynamic_q_name(pattern: str) -> None:
    """DynamicQName's length (IBM looks at it only when a model queue is opened).

    Raises:
        MQError: MQRC_DYNAMIC_Q_NAME_ERROR (2011) over MQ_Q_NAME_LENGTH.
    """
    if len(pattern) > C.MQ_Q_NAME_LENGTH and len(pattern.rstrip()) > C.MQ_Q_NAME_LENGTH:
        raise failed(C.MQRC_DYNAMIC_Q_NAME_ERROR, _too_long("DynamicQName", pattern, "MQ_Q_NAME_LENGTH",
                                                            C.MQ_Q_NAME_LENGTH))


def _too_long(field: str, value: str, limit_name: str, limit: int) -> str:
    return f"{field} is {len(value.rstrip())} characters; {limit_name} is {limit}"
