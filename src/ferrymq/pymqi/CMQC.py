"""pymqi's CMQC: every IBM MQ constant (cmqc.h), character constants as bytes as pymqi has them.

Built at import from ferrymq.mq.constants — the one table of MQ constants — rather than
kept as a second generated copy: pymqi compares MQFMT_*, StrucIds and other character
constants with the bytes fields of MD, GMO ..., so each ``str`` constant becomes ``bytes``.
"""

from __future__ import annotations

from typing import Any

from ferrymq.mq import cfc as _F
from ferrymq.mq import constants as _C

_values: dict[str, Any] = {
    name: value.encode("latin-1") if isinstance(value, str) else value
    for name, value in vars(_C).items()
    if name.startswith("MQ")
}
# cmqc.h's values that ferrymq keeps with the PCF constants (mq.cfc): event recording, and
# the channel types and channel-authentication words pymqi's CMQC has too (its test_tls.py
# builds a SVRCONN channel and CHLAUTH records with CMQC.MQCHT_SVRCONN, MQUSRC_MAP, MQWARN_NO).
_values.update({name: value for name, value in vars(_F).items()
                if name.startswith(("MQEVR_", "MQCHT_", "MQUSRC_", "MQWARN_"))})
globals().update(_values)


def __getattr__(name: str) -> Any:
    # Only reached for names that are not constants; lets type checkers accept CMQC.<anything>.
    raise AttributeError(f"CMQC has no constant {name!r}")


def __dir__() -> list[str]:
    return sorted(_values)
