"""pymqi's exceptions: ``MQMIError`` for MQI failures, ``PYIFError`` for misuse of the interface.

``MQMIError`` is also a ``ferrymq.errors.MQError``, so code mixing the two APIs can catch
either. Like pymqi, extra keyword arguments become attributes (``original_length`` and
``message`` on a truncated get).
"""

from __future__ import annotations

from typing import Any

from ferrymq.errors import MQError, reason_name
from ferrymq.mq import constants as C


class Error(Exception):
    """Root of the pymqi-compatible exceptions."""


class MQMIError(Error, MQError):
    """An MQI call completed with a warning or failed: ``comp`` (MQCC_*) and ``reason`` (MQRC_*)."""

    def __init__(self, comp: int, reason: int, **kw: Any) -> None:
        detail = str(kw.pop("detail", ""))
        MQError.__init__(self, comp, reason, detail)
        for name, value in kw.items():
            setattr(self, name, value)

    def errorAsString(self) -> str:  # pymqi's name
        """``OK``, or ``WARNING: MQRC_...`` / ``FAILED: MQRC_...``."""
        if self.comp == C.MQCC_OK:
            return "OK"
        prefix = "WARNING" if self.comp == C.MQCC_WARNING else "FAILED"
        return f"{prefix}: {reason_name(self.reason)}"

    def __str__(self) -> str:
        return f"MQI Error. Comp: {self.comp}, Reason {self.reason}: {self.errorAsString()}"

    def __reduce__(self) -> Any:
        return (_rebuild, (self.comp, self.reason, dict(self.__dict__)))


def _rebuild(comp: int, reason: int, attrs: dict[str, Any]) -> MQMIError:
    err = MQMIError(comp, reason)
    err.__dict__.update(attrs)
    return err


class PYIFError(Error):
    """The interface was used wrongly (not connected, queue not open, bad argument)."""

    def __init__(self, e: object) -> None:
        super().__init__(e)
        self.error = e

    def __str__(self) -> str:
        return f"PYMQI Error: {self.error}"


def from_mq_error(exc: MQError, **kw: Any) -> MQMIError:
    """The MQMIError for a ferrymq client error (its detail is kept as ``detail``)."""
    if isinstance(exc, MQMIError):
        return exc
    return MQMIError(exc.comp, exc.reason, detail=exc.detail, **kw)
