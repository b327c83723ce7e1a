"""pymqi's CMQCFC: the PCF constants (cmqcfc.h), kept once in ferrymq.mq.cfc."""

from ferrymq.mq.cfc import *  # noqa: F403
