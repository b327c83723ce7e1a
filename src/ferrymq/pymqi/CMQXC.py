"""pymqi's CMQXC: channel-definition constants (cmqxc.h) for ``CD`` and client connections.

mq-constants.json (cmqc.h) carries none of these, so the values used with ``pymqi.CD``
are listed here from IBM's cmqxc.h.
"""

from typing import Final

# MQCD versions
MQCD_VERSION_1: Final[int] = 1
MQCD_VERSION_2: Final[int] = 2
MQCD_VERSION_3: Final[int] = 3
MQCD_VERSION_4: Final[int] = 4
MQCD_VERSION_5: Final[int] = 5
MQCD_VERSION_6: Final[int] = 6
MQCD_VERSION_7: Final[int] = 7
MQCD_VERSION_8: Final[int] = 8
MQCD_VERSION_9: Final[int] = 9
MQCD_VERSION_10: Final[int] = 10
MQCD_VERSION_11: Final[int] = 11
MQCD_VERSION_12: Final[int] = 12
MQCD_CURRENT_VERSION: Final[int] = 12

# Channel types
MQCHT_SENDER: Final[int] = 1
MQCHT_SERVER: Final[int] = 2
MQCHT_RECEIVER: Final[int] = 3
MQCHT_REQUESTER: Final[int] = 4
MQCHT_ALL: Final[int] = 5
MQCHT_CLNTCONN: Final[int] = 6
MQCHT_SVRCONN: Final[int] = 7
MQCHT_CLUSRCVR: Final[int] = 8
MQCHT_CLUSSDR: Final[int] = 9
MQCHT_MQTT: Final[int] = 10
MQCHT_AMQP: Final[int] = 11

# Transport types
MQXPT_ALL: Final[int] = -1
MQXPT_LOCAL: Final[int] = 0
MQXPT_LU62: Final[int] = 1
MQXPT_TCP: Final[int] = 2
MQXPT_NETBIOS: Final[int] = 3
MQXPT_SPX: Final[int] = 4
MQXPT_DECNET: Final[int] = 5
MQXPT_UDP: Final[int] = 6

# Put authority
MQPA_DEFAULT: Final[int] = 1
MQPA_CONTEXT: Final[int] = 2
MQPA_ONLY_MCA: Final[int] = 3
MQPA_ALTERNATE_OR_MCA: Final[int] = 4

# Data conversion
MQCDC_NO_SENDER_CONVERSION: Final[int] = 0
MQCDC_SENDER_CONVERSION: Final[int] = 1

# MCA types
MQMCAT_PROCESS: Final[int] = 1
MQMCAT_THREAD: Final[int] = 2

# Non-persistent message speed
MQNPMS_NORMAL: Final[int] = 1
MQNPMS_FAST: Final[int] = 2

# TLS client authentication
MQSCA_REQUIRED: Final[int] = 0
MQSCA_OPTIONAL: Final[int] = 1
MQSCA_NEVER_REQUIRED: Final[int] = 2

# Compression
MQCOMPRESS_NOT_AVAILABLE: Final[int] = -1
MQCOMPRESS_NONE: Final[int] = 0
MQCOMPRESS_RLE: Final[int] = 1
MQCOMPRESS_ZLIBFAST: Final[int] = 2
MQCOMPRESS_ZLIBHIGH: Final[int] = 4
MQCOMPRESS_SYSTEM: Final[int] = 8
MQCOMPRESS_ANY: Final[int] = 0x0FFFFFFF

# Keep-alive and connection affinity
MQKAI_AUTO: Final[int] = -1
MQCAFTY_NONE: Final[int] = 0
MQCAFTY_PREFERRED: Final[int] = 1

# Channel exits: MQXT_, MQXR_, MQXCC_, MQXR2_, MQXUA_NONE (ferrymq's channel agents call them)
from ferrymq.mq.cxc import *  # noqa: E402, F403
