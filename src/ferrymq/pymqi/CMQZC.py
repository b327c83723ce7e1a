"""pymqi's CMQZC: the installable-services constants (IBM cmqzc.h) programs use, chiefly
the MQZAO_* authority bits of the object authority manager and the MQZAET_* entity types.

ferrymq has no installable services; these are the values, for programs that name them.
"""

from typing import Final

# Structure identifiers and versions
MQZED_STRUC_ID: Final[bytes] = b"ZED "
MQZED_VERSION_1: Final[int] = 1
MQZED_VERSION_2: Final[int] = 2
MQZED_CURRENT_VERSION: Final[int] = 2
MQZAC_STRUC_ID: Final[bytes] = b"ZAC "
MQZAC_VERSION_1: Final[int] = 1
MQZAC_CURRENT_VERSION: Final[int] = 1
MQZAC_LENGTH_1: Final[int] = 84
MQZAC_CURRENT_LENGTH: Final[int] = 84
MQZAD_STRUC_ID: Final[bytes] = b"ZAD "
MQZAD_VERSION_1: Final[int] = 1
MQZAD_VERSION_2: Final[int] = 2
MQZAD_CURRENT_VERSION: Final[int] = 2
MQZFP_STRUC_ID: Final[bytes] = b"ZFP "
MQZFP_VERSION_1: Final[int] = 1
MQZFP_CURRENT_VERSION: Final[int] = 1
MQZIC_STRUC_ID: Final[bytes] = b"ZIC "
MQZIC_VERSION_1: Final[int] = 1
MQZIC_CURRENT_VERSION: Final[int] = 1
MQZIC_LENGTH_1: Final[int] = 84
MQZIC_CURRENT_LENGTH: Final[int] = 84

# Authentication types
MQZAT_INITIAL_CONTEXT: Final[int] = 0
MQZAT_CHANGE_CONTEXT: Final[int] = 1

# Initialization, termination and continuation
MQZIO_PRIMARY: Final[int] = 0
MQZIO_SECONDARY: Final[int] = 1
MQZTO_PRIMARY: Final[int] = 0
MQZTO_SECONDARY: Final[int] = 1
MQZCI_DEFAULT: Final[int] = 0
MQZCI_CONTINUE: Final[int] = 0
MQZCI_STOP: Final[int] = 1

# Authority service interface versions
MQZAS_VERSION_1: Final[int] = 1
MQZAS_VERSION_2: Final[int] = 2
MQZAS_VERSION_3: Final[int] = 3
MQZAS_VERSION_4: Final[int] = 4
MQZAS_VERSION_5: Final[int] = 5
MQZAS_VERSION_6: Final[int] = 6

# Authorizations
MQZAO_NONE: Final[int] = 0x00000000
MQZAO_CONNECT: Final[int] = 0x00000001
MQZAO_BROWSE: Final[int] = 0x00000002
MQZAO_INPUT: Final[int] = 0x00000004
MQZAO_OUTPUT: Final[int] = 0x00000008
MQZAO_INQUIRE: Final[int] = 0x00000010
MQZAO_SET: Final[int] = 0x00000020
MQZAO_PASS_IDENTITY_CONTEXT: Final[int] = 0x00000040
MQZAO_PASS_ALL_CONTEXT: Final[int] = 0x00000080
MQZAO_SET_IDENTITY_CONTEXT: Final[int] = 0x00000100
MQZAO_SET_ALL_CONTEXT: Final[int] = 0x00000200
MQZAO_ALTERNATE_USER_AUTHORITY: Final[int] = 0x00000400
MQZAO_PUBLISH: Final[int] = 0x00000800
MQZAO_SUBSCRIBE: Final[int] = 0x00001000
MQZAO_RESUME: Final[int] = 0x00002000
MQZAO_ALL_MQI: Final[int] = 0x00003FFF
MQZAO_CREATE: Final[int] = 0x00010000
MQZAO_DELETE: Final[int] = 0x00020000
MQZAO_DISPLAY: Final[int] = 0x00040000
MQZAO_CHANGE: Final[int] = 0x00080000
MQZAO_CLEAR: Final[int] = 0x00100000
MQZAO_CONTROL: Final[int] = 0x00200000
MQZAO_CONTROL_EXTENDED: Final[int] = 0x00400000
MQZAO_AUTHORIZE: Final[int] = 0x00800000
MQZAO_ALL_ADMIN: Final[int] = 0x00FE0000
MQZAO_REMOVE: Final[int] = 0x01000000
MQZAO_SYSTEM: Final[int] = 0x02000000
MQZAO_ALL: Final[int] = 0x02FE3FFF
MQZAO_CREATE_ONLY: Final[int] = 0x04000000

# Entity types
MQZAET_NONE: Final[int] = 0x00000000
MQZAET_PRINCIPAL: Final[int] = 0x00000001
MQZAET_GROUP: Final[int] = 0x00000002
MQZAET_UNKNOWN: Final[int] = 0x00000003

# Enumeration and selector indicators
MQZSE_START: Final[int] = 1
MQZSE_CONTINUE: Final[int] = 0
MQZSL_NOT_RETURNED: Final[int] = 0
MQZSL_RETURNED: Final[int] = 1

# Name and user-id service interface versions
MQZNS_VERSION_1: Final[int] = 1
MQZUS_VERSION_1: Final[int] = 1
