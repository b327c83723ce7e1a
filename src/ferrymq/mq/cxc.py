"""Channel-exit constants (IBM cmqxc.h): exit identifiers, reasons, responses.

mq-constants.json (cmqc.h) holds none of these; the values are IBM's cmqxc.h ones, which
a channel exit written for IBM MQ compares against. pymqi.CMQXC re-exports them.
"""

from typing import Final

# MQCXP StrucId and versions
MQCXP_STRUC_ID: Final[str] = "CXP "
MQCXP_VERSION_9: Final[int] = 9
MQCXP_CURRENT_VERSION: Final[int] = 9

# ExitId: which kind of exit is called
MQXT_CHANNEL_SEC_EXIT: Final[int] = 11
MQXT_CHANNEL_MSG_EXIT: Final[int] = 12
MQXT_CHANNEL_SEND_EXIT: Final[int] = 13
MQXT_CHANNEL_RCV_EXIT: Final[int] = 14
MQXT_CHANNEL_MSG_RETRY_EXIT: Final[int] = 15
MQXT_CHANNEL_AUTO_DEF_EXIT: Final[int] = 16

# ExitReason: why it is called
MQXR_INIT: Final[int] = 11
MQXR_TERM: Final[int] = 12
MQXR_MSG: Final[int] = 13
MQXR_XMIT: Final[int] = 14
MQXR_SEC_MSG: Final[int] = 15
MQXR_INIT_SEC: Final[int] = 16
MQXR_RETRY: Final[int] = 17
MQXR_END_BATCH: Final[int] = 25
MQXR_ACK_RECEIVED: Final[int] = 26
MQXR_SEC_PARMS: Final[int] = 29

# ExitResponse: what the agent does next
MQXCC_OK: Final[int] = 0
MQXCC_SUPPRESS_FUNCTION: Final[int] = -1
MQXCC_SKIP_FUNCTION: Final[int] = -2
MQXCC_SEND_AND_REQUEST_SEC_MSG: Final[int] = -3
MQXCC_SEND_SEC_MSG: Final[int] = -4
MQXCC_SUPPRESS_EXIT: Final[int] = -5
MQXCC_CLOSE_CHANNEL: Final[int] = -6
MQXCC_REQUEST_ACK: Final[int] = -7
MQXCC_FAILED: Final[int] = -8

# ExitResponse2 flags
MQXR2_PUT_WITH_DEF_ACTION: Final[int] = 0
MQXR2_PUT_WITH_DEF_USERID: Final[int] = 1
MQXR2_PUT_WITH_MSG_USERID: Final[int] = 2
MQXR2_USE_AGENT_BUFFER: Final[int] = 0
MQXR2_USE_EXIT_BUFFER: Final[int] = 4
MQXR2_DEFAULT_CONTINUATION: Final[int] = 0
MQXR2_CONTINUE_CHAIN: Final[int] = 8
MQXR2_SUPPRESS_CHAIN: Final[int] = 16

# ExitUserArea's initial value
MQXUA_NONE: Final[bytes] = bytes(16)
