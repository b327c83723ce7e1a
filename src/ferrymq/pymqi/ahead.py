"""What pymqi's ``Queue`` and ``QueueManager`` do without waiting for the queue manager, as
IBM's client does: asynchronous put responses (MQPMO_ASYNC_RESPONSE, or the queue's DEFPRESP
for MQPMO_RESPONSE_AS_Q_DEF), read-ahead gets (MQOO_READ_AHEAD, or the queue's DEFREADA for
MQOO_READ_AHEAD_AS_Q_DEF) and MQSTAT, which collects the asynchronous puts' outcomes.

Both ride the client's one path for them: an asynchronous put is the client's own buffered
put (``Client._put_async``: PutBatch frames, sent ahead of the next request, commit and
disconnect included), and a read-ahead get is ``ferrymq.client.sync.Queue.get`` on the
same handle (pushed messages, credit, the fall back to an ordinary get before a persistent
message). What is left here is the MQI's rules around them.

IBM's rules for read-ahead gets ("MQGET options and read ahead"): the first MQGET on the
handle decides. Options read-ahead cannot serve on that first get turn it off for the
handle (every get then goes to the queue manager); on a later get they fail with
MQRC_OPTIONS_ERROR (2046), and a change to the options that must stay the same fails
with MQRC_OPTIONS_CHANGED (2457). Gets selecting by MsgId or CorrelId, and browses, go
to the queue manager.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from ferrymq.client import mqi, sync
from ferrymq.client import reconnect as R
from ferrymq.client import session as S
from ferrymq.client.errors import NoMessageAvailable
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.properties import rfh2map
from ferrymq.properties.model import PropertySet
from ferrymq.protocol import events as E
from ferrymq.pymqi.errors import MQMIError
from ferrymq.pymqi.structs import CORREL_ID_AT, MD, MSG_ID_AT, PMO, STS, as_bytes, set_id

if TYPE_CHECKING:
    from ferrymq.client.message import Message
    from ferrymq.client.sync import Client

WINDOW = 500
"""Messages the queue manager may push ahead of a read-ahead handle's gets."""

NOT_PERMITTED = (C.MQGMO_SYNCPOINT | C.MQGMO_MARK_SKIP_BACKOUT | C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_LOCK
                 | C.MQGMO_UNLOCK | C.MQGMO_LOGICAL_ORDER | C.MQGMO_COMPLETE_MSG | C.MQGMO_ALL_MSGS_AVAILABLE
                 | C.MQGMO_ALL_SEGMENTS_AVAILABLE | C.MQGMO_SET_SIGNAL)
"""MQGMO options read-ahead cannot serve (IBM's table)."""

FIXED = C.MQGMO_SYNCPOINT_IF_PERSISTENT | C.MQGMO_NO_SYNCPOINT | C.MQGMO_ACCEPT_TRUNCATED_MSG | C.MQGMO_CONVERT
"""MQGMO options a read-ahead handle's gets must keep as the first get had them."""

NOT_HERE = C.MQGMO_SYNCPOINT_IF_PERSISTENT | C.MQGMO_CONVERT
"""Options IBM reads ahead with that ferrymq's read-ahead does not serve (a persistent
message's fall-back get is outside syncpoint; pushed messages are not converted): on a
first get they turn read-ahead off, as NOT_PERMITTED do."""

_PROPERTY_OPTIONS = (C.MQGMO_PROPERTIES_AS_Q_DEF | C.MQGMO_PROPERTIES_IN_HANDLE | C.MQGMO_NO_PROPERTIES
                     | C.MQGMO_PROPERTIES_FORCE_MQRFH2 | C.MQGMO_PROPERTIES_COMPATIBILITY)
_BROWSE = C.MQGMO_BROWSE_FIRST | C.MQGMO_BROWSE_NEXT | C.MQGMO_BROWSE_MSG_UNDER_CURSOR
_NO_ID = bytes(24)


# -- the queue's defaults (DEFPRESP, DEFREADA) -----------------------------------------------

def queue_defaults(client: Client, cache: dict[str, tuple[int, int, int]], name: str) -> tuple[int, int, int]:
    """The queue's (DEFPRESP, DEFREADA, PROPCTL), asked once per connection and queue name.

    IBM's client learns them at MQOPEN; here an MQINQ on a handle of its own (the
    application's may not be open for inquire) asks the first time a put or get needs
    them. A queue that cannot be inquired (not authorised, a remote queue's DEFREADA)
    counts as DEFPRESP(SYNC) and DEFREADA(NO).
    """
    got = cache.get(name)
    if got is not None:
        return got
    values = {C.MQIA_DEF_PUT_RESPONSE_TYPE: C.MQPRT_SYNC_RESPONSE, C.MQIA_DEF_READ_AHEAD: C.MQREADA_NO,
              C.MQIA_PROPERTY_CONTROL: C.MQPROP_COMPATIBILITY}
    try:
        opened = mqi.mqopen(client, name, C.MQOO_INQUIRE | C.MQOO_FAIL_IF_QUIESCING)
    except MQError:
        opened = None
    if opened is not None:
        try:
            for selector in values:
                with contextlib.suppress(MQError):
                    values[selector] = mqi.mqinq(client, opened.hobj, (selector,), ()).ints[0]
        finally:
            with contextlib.suppress(MQError):
                mqi.mqclose(client, opened.hobj)
    got = cache[name] = (values[C.MQIA_DEF_PUT_RESPONSE_TYPE], values[C.MQIA_DEF_READ_AHEAD],
                         values[C.MQIA_PROPERTY_CONTROL])
    return got


def wants_async(options: int, client: Client, cache: dict[str, tuple[int, int, int]], name: str) -> bool:
    """Whether a put with PMO ``options`` to ``name`` is to be sent without waiting."""
    if options & C.MQPMO_ASYNC_RESPONSE:
        return True
    if options & C.MQPMO_SYNC_RESPONSE:
        return False
    return queue_defaults(client, cache, name)[0] == C.MQPRT_ASYNC_RESPONSE


def reads_ahead(open_options: int, client: Client, cache: dict[str, tuple[int, int, int]], name: str) -> bool:
    """Whether a handle opened for input with ``open_options`` reads ahead (DEFREADA(DISABLED)
    refuses even MQOO_READ_AHEAD, as IBM's queue manager does)."""
    if open_options & C.MQOO_NO_READ_AHEAD or not open_options & (C.MQOO_INPUT_AS_Q_DEF | C.MQOO_INPUT_SHARED
                                                                  | C.MQOO_INPUT_EXCLUSIVE):
        return False
    if client._redial is not None:
        # MQCNO_RECONNECT: the client's read-ahead retries a get after a reconnect on the
        # handle it holds, which the reconnect renumbers: such handles get from the queue
        # manager instead (a known limit, docs/pymqi.md)
        return False
    if not open_options & C.MQOO_READ_AHEAD:  # MQOO_READ_AHEAD_AS_Q_DEF
        return queue_defaults(client, cache, name)[1] == C.MQREADA_YES
    return queue_defaults(client, cache, name)[1] != C.MQREADA_DISABLED


# -- asynchronous puts -------------------------------------------------------------------------

def put_async(client: Client, target: int | str, md: MD, data: bytes, pmo: PMO, props: PropertySet | None,
              put1: dict[str, Any] | None = None) -> None:
    """MQPUT (``target``: the handle) or MQPUT1 (``target``: the name, ``put1`` the OD's other
    fields) with MQPMO_ASYNC_RESPONSE: buffered on the client's asynchronous path, the MD
    given the MsgId (and, with MQPMO_NEW_CORREL_ID, the CorrelId) the client chose, as
    IBM's client does for asynchronous puts. A failure shows in MQSTAT.

    Raises:
        MQMIError: 2010 (MQRC_DATA_LENGTH_ERROR) for data over the connection's maximum.
    """
    s = client._s  # client.session, without the property's call
    if len(data) > s.max_msg_length > 0:
        exc = S.too_long(len(data), s.max_msg_length)
        raise MQMIError(exc.comp, exc.reason, detail=exc.detail)
    options = pmo.Options | C.MQPMO_ASYNC_RESPONSE
    packed: bytes | None = None
    if options & C.MQPMO_NEW_MSG_ID or md.MsgId == _NO_ID:
        packed = set_id(md, "MsgId", MSG_ID_AT, s.new_msg_id())
        options &= ~C.MQPMO_NEW_MSG_ID
    if options & C.MQPMO_NEW_CORREL_ID:
        packed = set_id(md, "CorrelId", CORREL_ID_AT, s.new_msg_id())
        options &= ~C.MQPMO_NEW_CORREL_ID
    if packed is None:
        packed = md.wire()
    ev: E.Put | E.Put1
    if isinstance(target, int):
        ev = E.Put(s.next_corr(), target, packed, data, options, 0, props, False)
    else:
        ev = E.Put1(s.next_corr(), target, packed, data, options, properties=props, reply=False, **(put1 or {}))
    client._put_async(ev)


def stat(client: Client, stat_type: int = C.MQSTAT_TYPE_ASYNC_ERROR, sts: STS | None = None) -> STS:
    """MQSTAT: the asynchronous puts' outcomes since the last MQSTAT (buffered puts are sent
    first), in an STS: counts, and the first failure's CompCode and Reason.

    Raises:
        MQMIError: 2046 (MQRC_OPTIONS_ERROR... MQRC_STAT_TYPE_ERROR) for a type other than
            MQSTAT_TYPE_ASYNC_ERROR / RECONNECTION / RECONNECTION_ERROR.
    """
    sts = STS() if sts is None else sts
    if stat_type == C.MQSTAT_TYPE_ASYNC_ERROR:
        status = client.stat()
        first = status.first_error
        sts.CompCode = getattr(first, "comp", C.MQCC_OK)
        sts.Reason = getattr(first, "reason", C.MQRC_NONE)
        sts.PutSuccessCount, sts.PutWarningCount = status.successes, status.warnings
        sts.PutFailureCount = status.failures
    elif stat_type in (C.MQSTAT_TYPE_RECONNECTION, C.MQSTAT_TYPE_RECONNECTION_ERROR):
        sts.CompCode, sts.Reason = C.MQCC_OK, C.MQRC_NONE
        sts.PutSuccessCount = sts.PutWarningCount = sts.PutFailureCount = 0
    else:
        raise MQMIError(C.MQCC_FAILED, C.MQRC_STAT_TYPE_ERROR)
    return sts


def without_handle(msg: Message, options: int, propctl: int) -> tuple[bytes, bytes]:
    """The data and MQMD bytes a getter without a message handle receives of a message the
    client holds (pushed, or read ahead under syncpoint). The queue manager sends its
    properties apart (as to a handle); they go into an MQRFH2 in front of the data by the
    queue's PROPCTL, as its own get without a handle gives them: ALL, or COMPAT when one is
    in mcd, jms, usr or mqext; none under NONE or with MQGMO_NO_PROPERTIES. (PROPCTL(FORCE)
    puts them in the data at the queue manager already.)"""
    props = msg._properties
    data, raw = msg.data, msg.md_bytes
    if not props:
        return data, raw
    chosen = options & _PROPERTY_OPTIONS
    if chosen == C.MQGMO_NO_PROPERTIES or chosen == C.MQGMO_PROPERTIES_IN_HANDLE:
        return data, raw
    if chosen == C.MQGMO_PROPERTIES_FORCE_MQRFH2 or propctl == C.MQPROP_ALL:
        wanted = True
    elif chosen == C.MQGMO_PROPERTIES_COMPATIBILITY or propctl in (C.MQPROP_COMPATIBILITY, C.MQPROP_V6COMPAT):
        wanted = any(rfh2map.is_compat_name(n) for n in props)
    else:
        wanted = False
    if not wanted:
        return data, raw
    md = msg.md
    written, _ = rfh2map.carriable(props)
    body, fmt = rfh2map.with_rfh2(written, data, md.format, md.encoding, md.coded_char_set_id)
    return body, md.replace(format=fmt).pack()


# -- read-ahead gets ---------------------------------------------------------------------------

class ReadAhead:
    """One read-ahead handle's state: the client queue whose ``get`` serves it, and the
    options its first get fixed (None until then; ``off`` once a first get turned it off)."""

    __slots__ = ("fixed", "name", "off", "propctl", "view")

    def __init__(self, client: Client, hobj: int, name: str, propctl: int) -> None:
        self.view = sync.Queue(client, hobj, name, WINDOW, False, R.OpenRecord(name, 0, "", ""))
        self.name = name
        self.fixed: int | None = None
        self.off = False
        self.propctl = propctl  # the queue's PROPCTL, for a getter without a message handle

    def next(self, handles: R.Handles, number: int, options: int, match: int, md: MD,
             wait_interval: int) -> Message | None:
        """The next message, pushed or (before a persistent one) got outside syncpoint; None
        when this get is not one read-ahead serves (ask the queue manager). One call per get,
        the check and the take together: the get path is hot.

        Raises:
            MQMIError: 2046 for an option read-ahead does not permit on a later get; 2457
                for a change to the options the first get fixed.
            MQError: 2033 when none came within the wait, or what the get met.
        """
        if self.off:
            return None
        if self.fixed is None:
            if options & (NOT_PERMITTED | NOT_HERE):
                self.off = True
                return None
            self.fixed = options & FIXED
        elif options & NOT_PERMITTED:
            raise MQMIError(C.MQCC_FAILED, C.MQRC_OPTIONS_ERROR,
                            detail="an option read-ahead does not permit, on a read-ahead handle")
        elif options & FIXED != self.fixed:
            raise MQMIError(C.MQCC_FAILED, C.MQRC_OPTIONS_CHANGED)
        if options & _BROWSE or ((match & C.MQMO_MATCH_MSG_ID and md.MsgId != _NO_ID)
                                 or (match & C.MQMO_MATCH_CORREL_ID and md.CorrelId != _NO_ID)):
            return None
        view = self.view
        view.hobj = handles.current(number)  # a reconnect renumbers the conversation's handles
        wait: float | None = 0.0
        if options & C.MQGMO_WAIT:
            wait = None if wait_interval == C.MQWI_UNLIMITED else wait_interval / 1000 if wait_interval > 0 else 0.0
        if wait:
            return view.get(wait, syncpoint=False)
        try:
            return view.get(0.0, syncpoint=False)
        except NoMessageAvailable:
            # Nothing pushed yet is not "nothing on the queue": a round trip brings what the
            # queue manager pushed before answering it (it answers in order), then look again.
            view.client.ping()
            return view.get(0.0, syncpoint=False)

    def put_back(self, msg: Message) -> None:
        """A message too long for the get's buffer stays first, as in IBM's read-ahead buffer."""
        consumer = self.view.client.session.consumers.get(self.view.hobj)
        if consumer is not None:
            consumer.buffer.appendleft((msg.md_bytes, msg.data, msg.data_length, msg.msg_token, msg._properties))

    def buffered(self) -> int:
        """Messages pushed ahead and not yet taken."""
        consumer = self.view.client.session.consumers.get(self.view.hobj)
        return 0 if consumer is None else len(consumer.buffer)


__all__ = ["STS", "ReadAhead", "as_bytes", "put_async", "queue_defaults", "reads_ahead", "stat", "wants_async",
           "without_handle"]
