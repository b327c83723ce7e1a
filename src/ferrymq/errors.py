"""L0: the one error tree of ferrymq.

Every failure a caller can see is a FerryError. MQI failures are MQError with IBM's
completion code and reason; malformed bytes are DecodeError (structure and offset);
a broken conversation is ProtocolError; the store's own failures are StoreError.
"""

from __future__ import annotations

from ferrymq.mq import constants as C
from ferrymq.mq.enums import MQRC


class FerryError(Exception):
    """Root of every ferrymq error."""


def reason_name(reason: int) -> str:
    """IBM's name for a reason code (``MQRC_Q_FULL``), or the number if unknown."""
    try:
        return "MQRC_" + MQRC(reason).name
    except ValueError:
        return str(reason)


class MQError(FerryError):
    """An MQI call failed or warned: ``comp`` is the MQCC_*, ``reason`` the MQRC_*.

    ``detail`` names the rule or limit that refused the request (with its value), so
    that a person reading the error knows what to change.
    """

    def __init__(self, comp: int, reason: int, detail: str = "") -> None:
        self.comp = comp
        self.reason = reason
        self.detail = detail
        text = f"MQI error. Comp: {comp}, Reason {reason}: {reason_name(reason)}"
        super().__init__(f"{text} ({detail})" if detail else text)

    @property
    def reason_name(self) -> str:
        return reason_name(self.reason)

    def __reduce__(self) -> tuple[type[MQError], tuple[int, int, str]]:
        return (type(self), (self.comp, self.reason, self.detail))


def failed(reason: int, detail: str = "") -> MQError:
    """Shorthand for an MQCC_FAILED error, the common case."""
    return MQError(C.MQCC_FAILED, reason, detail)


class DecodeError(FerryError):
    """Bytes that do not form a valid structure: names the structure and the offset."""

    def __init__(self, structure: str, offset: int, message: str) -> None:
        self.structure = structure
        self.offset = offset
        super().__init__(f"{structure} at offset {offset}: {message}")


class ProtocolError(FerryError):
    """The peer broke the conversation's rules; the connection is ended."""


class StoreError(FerryError):
    """The store cannot do what was asked (damaged data directory, disk failure)."""


class JournalFull(StoreError):
    """A journal write found no space (ENOSPC, EDQUOT): nothing of it counts, and the same
    batch may be written again once space is freed (store/journal.py)."""
