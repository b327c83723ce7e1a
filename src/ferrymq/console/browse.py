"""The message browser's MQI calls: browse a queue, look at one message, take one.

Each call is one connection of the signed-in user to the engine, made, used and ended
within one step of the event loop, so the user's own authority is what is checked (CONNECT
at connect, BROWSE or GET at open) and no other connection sees it. A destructive get is
outside syncpoint and matched by MsgId: exactly the message the user confirmed, or
MQRC_NO_MSG_AVAILABLE when somebody took it first.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ferrymq.engine.api import GetOptions, GetResult, ObjectDescriptor
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD

APPL_NAME = "ferrymq web console"
LIST_BYTES = 256  # of each body in a listing: enough for its first characters
SHOW_BYTES = 65536  # of a body shown whole; longer ones are shown cut, with their length
_NOW = C.MQGMO_NO_WAIT | C.MQGMO_ACCEPT_TRUNCATED_MSG | C.MQGMO_FAIL_IF_QUIESCING


@contextmanager
def _opened(qm: QueueManager, user: str, queue: str, options: int) -> Iterator[tuple[int, int]]:
    hconn = qm.connect(appl_name=APPL_NAME, user=user)
    try:
        hobj = qm.open(hconn, ObjectDescriptor(object_name=queue), options | C.MQOO_FAIL_IF_QUIESCING).hobj
        yield hconn, hobj
    finally:
        qm.disconnect(hconn)


def _get(qm: QueueManager, hconn: int, hobj: int, md: MQMD, options: int, match: int, size: int) -> GetResult | None:
    try:
        got = qm.get(hconn, hobj, md, GetOptions(options, 0, match, msg_handle=True), size)
    except MQError as exc:
        if exc.reason == C.MQRC_NO_MSG_AVAILABLE:
            return None
        raise
    assert isinstance(got, GetResult)  # never waits: MQGMO_NO_WAIT
    return got


def listing(qm: QueueManager, user: str, queue: str, limit: int) -> list[GetResult]:
    """The first ``limit`` messages in the order a getter would take them (bodies cut).

    Raises:
        MQError: the connect or open refused (2035 without authority, 2085 no such queue ...).
    """
    out: list[GetResult] = []
    with _opened(qm, user, queue, C.MQOO_BROWSE) as (hconn, hobj):
        options = C.MQGMO_BROWSE_FIRST
        while len(out) < limit:
            got = _get(qm, hconn, hobj, MQMD(), options | _NOW, C.MQMO_NONE, LIST_BYTES)
            if got is None:
                break
            out.append(got)
            options = C.MQGMO_BROWSE_NEXT
    return out


def one(qm: QueueManager, user: str, queue: str, msg_id: bytes) -> GetResult | None:
    """The message with ``msg_id`` (browsed, first ``SHOW_BYTES`` of its body); None: gone.

    Raises:
        MQError: the connect or open refused.
    """
    with _opened(qm, user, queue, C.MQOO_BROWSE) as (hconn, hobj):
        return _get(qm, hconn, hobj, MQMD(msg_id=msg_id), C.MQGMO_BROWSE_FIRST | _NOW, C.MQMO_MATCH_MSG_ID,
                    SHOW_BYTES)


def take(qm: QueueManager, user: str, queue: str, msg_id: bytes) -> GetResult | None:
    """Remove the message with ``msg_id`` (a destructive get outside syncpoint); None: gone.
    The caller must wait for the journal before saying it is done.

    Raises:
        MQError: the connect or open refused, or the get (2016 GET(DISABLED) ...).
    """
    with _opened(qm, user, queue, C.MQOO_INPUT_SHARED) as (hconn, hobj):
        return _get(qm, hconn, hobj, MQMD(msg_id=msg_id), C.MQGMO_NO_SYNCPOINT | _NOW, C.MQMO_MATCH_MSG_ID,
                    SHOW_BYTES)
