"""Typed exceptions for the reasons applications handle most, all subclasses of MQError.

``error_for(comp, reason, detail)`` picks the most specific class, so ``except
ferrymq.client.NoMessageAvailable`` and ``except MQError as e: e.reason == 2033`` both work.
"""

from __future__ import annotations

from ferrymq.errors import MQError
from ferrymq.mq import constants as C


class NoMessageAvailable(MQError):
    """MQRC_NO_MSG_AVAILABLE (2033): nothing matched within the wait interval."""


class UnknownObjectName(MQError):
    """MQRC_UNKNOWN_OBJECT_NAME (2085): no such queue (or object) is defined."""


class ObjectInUse(MQError):
    """MQRC_OBJECT_IN_USE (2042): opened exclusively by another application."""


class QueueFull(MQError):
    """MQRC_Q_FULL (2053): the queue holds MAXDEPTH messages already."""


class MessageTooBig(MQError):
    """MQRC_MSG_TOO_BIG_FOR_Q (2030), _Q_MGR (2031) or _CHANNEL (2218)."""


class NotAuthorized(MQError):
    """MQRC_NOT_AUTHORIZED (2035)."""


class Inhibited(MQError):
    """MQRC_PUT_INHIBITED (2051) or MQRC_GET_INHIBITED (2016)."""


class Truncated(MQError):
    """MQRC_TRUNCATED_MSG_FAILED (2080): the buffer was too small; the message stays on
    the queue. ``message`` holds the truncated data and the descriptor."""

    message: object = None


class BackedOut(MQError):
    """MQRC_BACKED_OUT (2003): the unit of work was backed out (e.g. the connection was
    lost and re-established in the middle of it)."""


class ConnectionBroken(MQError):
    """MQRC_CONNECTION_BROKEN (2009): the conversation with the queue manager ended."""


class QueueManagerUnavailable(MQError):
    """MQRC_Q_MGR_NOT_AVAILABLE (2059) / MQRC_HOST_NOT_AVAILABLE (2538): nothing answered
    at any of the connection names."""


def local_unavailable(qmgr: str, exc: BaseException) -> QueueManagerUnavailable:
    """2059 for a local (bindings) connection whose queue manager's socket did not answer."""
    return QueueManagerUnavailable(C.MQCC_FAILED, C.MQRC_Q_MGR_NOT_AVAILABLE,
                                   f"queue manager {qmgr.strip()} is not running ({exc!r})")


class Quiescing(MQError):
    """MQRC_Q_MGR_QUIESCING (2161), _STOPPING (2162), or the connection's (2202, 2203)."""


class HandleError(MQError):
    """MQRC_HOBJ_ERROR (2019) / MQRC_HCONN_ERROR (2018): the handle is closed or unknown."""


class InvalidSelector(MQError):
    """A selection string refused on open: MQRC_SELECTOR_SYNTAX_ERROR (2459),
    _SELECTOR_ALWAYS_FALSE (2504), _SELECTOR_INVALID_FOR_TYPE (2516) or
    _SELECTION_STRING_ERROR (2519); ``detail`` names the rule and the position."""


_BY_REASON: dict[int, type[MQError]] = {
    C.MQRC_NO_MSG_AVAILABLE: NoMessageAvailable,
    C.MQRC_UNKNOWN_OBJECT_NAME: UnknownObjectName,
    C.MQRC_OBJECT_IN_USE: ObjectInUse,
    C.MQRC_Q_FULL: QueueFull,
    C.MQRC_MSG_TOO_BIG_FOR_Q: MessageTooBig,
    C.MQRC_MSG_TOO_BIG_FOR_Q_MGR: MessageTooBig,
    C.MQRC_MSG_TOO_BIG_FOR_CHANNEL: MessageTooBig,
    C.MQRC_NOT_AUTHORIZED: NotAuthorized,
    C.MQRC_PUT_INHIBITED: Inhibited,
    C.MQRC_GET_INHIBITED: Inhibited,
    C.MQRC_TRUNCATED_MSG_FAILED: Truncated,
    C.MQRC_BACKED_OUT: BackedOut,
    C.MQRC_CONNECTION_BROKEN: ConnectionBroken,
    C.MQRC_Q_MGR_NOT_AVAILABLE: QueueManagerUnavailable,
    C.MQRC_HOST_NOT_AVAILABLE: QueueManagerUnavailable,
    C.MQRC_Q_MGR_QUIESCING: Quiescing,
    C.MQRC_Q_MGR_STOPPING: Quiescing,
    C.MQRC_CONNECTION_QUIESCING: Quiescing,
    C.MQRC_CONNECTION_STOPPING: Quiescing,
    C.MQRC_HOBJ_ERROR: HandleError,
    C.MQRC_HCONN_ERROR: HandleError,
    C.MQRC_SELECTOR_SYNTAX_ERROR: InvalidSelector,
    C.MQRC_SELECTOR_ALWAYS_FALSE: InvalidSelector,
    C.MQRC_SELECTOR_INVALID_FOR_TYPE: InvalidSelector,
    C.MQRC_SELECTION_STRING_ERROR: InvalidSelector,
}


def error_for(comp: int, reason: int, detail: str = "") -> MQError:
    """The most specific MQError subclass for a reason code."""
    return _BY_REASON.get(reason, MQError)(comp, reason, detail)


def broken(detail: str) -> ConnectionBroken:
    return ConnectionBroken(C.MQCC_FAILED, C.MQRC_CONNECTION_BROKEN, detail)
