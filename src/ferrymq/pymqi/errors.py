"""pymqi's exceptions: ``MQMIError`` for MQI failures, ``PYIFError`` for misuse of the interface.

``MQMIError`` is also a ``ferrymq.errors.MQError``, so code mixing the two APIs can catch
either. Like pymqi, extra keyword arguments become attributes (``original_length`` and
``message`` on a truncated get).
"""

from __future__ import annotations

from typing import Any

from ferrymq.errors import MQError, reason_name
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C

# The PCF reasons (MQRCCF_*) by value, for reasons that are not MQRC_ ones.
_PCF_REASONS = {v: k for k, v in reversed(vars(F).items()) if k.startswith("MQRCCF_") and isinstance(v, int)}


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
        """``OK``, or ``WARNING: MQRC_...`` / ``FAILED: MQRCCF_...``, or, for a reason with
        no name, ``FAILED: Error code N not defined``, as pymqi words it."""
        if self.comp == C.MQCC_OK:
            return "OK"
        prefix = "WARNING" if self.comp == C.MQCC_WARNING else "FAILED"
        name = reason_name(self.reason)
        if name.isdigit():
            name = _PCF_REASONS.get(self.reason, f"Error code {self.reason} not defined")
        return f"{prefix}: {name}"

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

    @property
    def message(self) -> str:
        """The error's text without the "PYMQI Error: " prefix."""
        return str(self.error)

    def __str__(self) -> str:
        return f"PYMQI Error: {self.error}"


def from_mq_error(exc: MQError, **kw: Any) -> MQMIError:
    """The MQMIError for a ferrymq client error (its detail is kept as ``detail``)."""
    if isinstance(exc, MQMIError):
        return exc
    return MQMIError(exc.comp, exc.reason, detail=exc.detail, **kw)
