"""The engine's call and result types: the MQI option structures the engine reads.

These are the in-memory forms of MQOD, MQPMO and MQGMO (only the fields the queue
manager acts on); the byte layouts live in ferrymq.wire. Drivers (the server, the
in-process connection) build them from frames and return the results.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet
from ferrymq.wire.mqmd import MQMD


class Clock(Protocol):
    """Where the engine reads time: seconds since the epoch (UTC), as a float."""

    def now(self) -> float: ...


class SystemClock:
    """The wall clock, for drivers (tests pass a FakeClock instead)."""

    now = staticmethod(time.time)  # no Python frame of its own: every put reads it


class FakeClock:
    """A clock a test moves by hand."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.t = start

    def now(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


@dataclass(slots=True)
class ObjectDescriptor:
    """MQOD: what to open."""

    object_name: str = ""
    object_q_mgr_name: str = ""
    object_type: int = C.MQOT_Q
    dynamic_q_name: str = "AMQ.*"
    alternate_user_id: str = ""
    selection_string: str = ""
    # MQOD v4 ObjectString: the topic string of an MQOT_TOPIC open, combined with the
    # TOPIC object ``object_name`` names as IBM combines them (engine.topics).
    object_string: str = ""


@dataclass(slots=True)
class SubDescriptor:
    """MQSD: what to subscribe to and how (version 1 fields the queue manager acts on).

    ``object_name`` names a TOPIC object and ``object_string`` a topic string; the topic
    subscribed to is the two combined as for MQOPEN. ``sub_correl_id`` and the Pub* fields
    go into every publication the subscription receives."""

    options: int
    object_name: str = ""
    object_string: str = ""
    sub_name: str = ""
    sub_user_data: str = ""
    sub_correl_id: bytes = bytes(24)
    pub_priority: int = C.MQPRI_PRIORITY_AS_PUBLISHED
    pub_accounting_token: bytes = bytes(32)
    pub_appl_identity_data: str = ""
    selection_string: str = ""
    sub_expiry: int = C.MQEI_UNLIMITED
    sub_level: int = 1
    alternate_user_id: str = ""


@dataclass(frozen=True, slots=True)
class SubResult:
    """What MQSUB returns: the subscription handle (closed with MQCLOSE, KEEP_SUB or
    REMOVE_SUB), the object handle publications are got from (a managed queue's new
    handle, or the one the caller gave), and the fields IBM writes back into the MQSD."""

    hsub: int
    hobj: int
    queue_name: str  # the queue publications are put on (pymqi's get_sub_queue)
    res_object_string: str  # the full topic string subscribed to
    sub_correl_id: bytes  # the CorrelId publications carry (MQSO_SET_CORREL_ID: the caller's)
    comp: int = C.MQCC_OK
    reason: int = C.MQRC_NONE
    # On a resume (MQSO_RESUME, MQSO_ALTER): the subscription as MQSUB writes it back into the
    # caller's MQSD (its options, topic object, user data, Pub* fields, selector, expiry, level).
    descriptor: SubDescriptor | None = None


@dataclass(slots=True)
class PutOptions:
    """MQPMO: how to put. ``context`` is the input handle whose context is passed."""

    options: int = C.MQPMO_NONE
    context: int = 0


@dataclass(slots=True)
class GetOptions:
    """MQGMO: how to get. ``wait_interval`` is in milliseconds (MQWI_UNLIMITED = -1)."""

    options: int = C.MQGMO_NO_WAIT
    wait_interval: int = 0
    match_options: int = C.MQMO_MATCH_MSG_ID | C.MQMO_MATCH_CORREL_ID
    msg_token: bytes = bytes(16)
    # Read-ahead only: take the next message only if it is non-persistent (IBM never sends a
    # persistent message ahead, where a dropped connection would lose it); otherwise raise
    # PersistentNext and leave it on the queue.
    non_persistent_only: bool = False
    # The getter supplied a message handle (MQGMO MsgHandle): properties may be returned in
    # it rather than in an MQRFH2 (see ferrymq.engine.propctl).
    msg_handle: bool = False


class PersistentNext(MQError):
    """A read-ahead get met a persistent message next in delivery order and left it there;
    the consumer must get it with an ordinary MQGET."""

    def __init__(self, queue: str) -> None:
        super().__init__(C.MQCC_FAILED, C.MQRC_NO_MSG_AVAILABLE,
                         f"the next message on {queue} is persistent: it is not sent ahead")


@dataclass(frozen=True, slots=True)
class OpenResult:
    hobj: int
    object_name: str  # the real name: the dynamic queue's generated name after a model open
    resolved_q_name: str
    resolved_q_mgr_name: str
    res_object_string: str = ""  # MQOD ResObjectString: the full topic string of a topic open


@dataclass(slots=True)  # made per put: a plain __init__ is 4x cheaper than frozen
class PutRequest:
    """What the engine's one put entry (QueueManager.put_request) takes: an MQPUT, an MQPUT1
    (``od`` given: the object opened for this put alone) or a run of asynchronous MQPUTs on
    one handle (``datas`` given: one message each, whose descriptors are ``md`` but for
    MsgId and CorrelId, ``msg_ids``/``correl_ids``: None repeats md's).

    ``md`` is the descriptor, or the bytes of a plain one (StrucId and Version checked, all
    its bytes there) still to decode; ``properties`` are the message handle's (a
    PropertySet keeps its types; a plain mapping's are inferred)."""

    hconn: int
    hobj: int
    md: MQMD | bytes
    options: int = C.MQPMO_NONE
    context: int = 0
    data: bytes = b""
    properties: Mapping[str, object] | None = None
    od: ObjectDescriptor | None = None
    datas: Sequence[bytes] | None = None
    msg_ids: Sequence[bytes] | None = None
    correl_ids: Sequence[bytes] | None = None


@dataclass(slots=True)  # made per message: a plain __init__ is 4x cheaper than frozen
class PutResult:
    md: MQMD  # the descriptor as stored: MsgId, CorrelId, PutDate/PutTime, context filled
    resolved_q_name: str
    resolved_q_mgr_name: str
    comp: int = C.MQCC_OK  # MQCC_WARNING with e.g. MQRC_PRIORITY_EXCEEDS_MAXIMUM
    reason: int = C.MQRC_NONE
    sequence: int = 0
    # The answer this put made for a waiting get that the driver may write before anything
    # else, its own reply included (engine.handover); it is among the deliveries too.
    delivered: Delivery | None = None
    # A run of puts (PutRequest.datas): each message's outcome, None or the MQError
    # (a failure, or a warning) that MQPUT would have returned for it.
    outcomes: list[MQError | None] | None = None


@dataclass(slots=True)  # made per message: a plain __init__ is 4x cheaper than frozen
class GetResult:
    """A message returned by get (or browse).

    ``data`` is at most the caller's buffer length; ``data_length`` is the message's full
    length. ``comp``/``reason`` carry a warning (MQRC_TRUNCATED_MSG_ACCEPTED) when set.
    """

    md: MQMD
    data: bytes
    data_length: int
    msg_token: bytes
    resolved_q_name: str
    comp: int = C.MQCC_OK
    reason: int = C.MQRC_NONE
    sequence: int = 0
    queue: str = ""
    # The message handle's properties (None when the getter gave no handle).
    properties: PropertySet | None = None
    # ``md`` as a little-endian version 2 structure, when the engine had it at hand (None:
    # pack ``md``). A driver that sends the descriptor uses it instead of packing again.
    md_bytes: bytes | None = None

    def parts(self) -> MessageParts:
        """The message as a driver sends it (see MessageParts)."""
        return self.md_bytes or self.md.pack(), self.data, self.data_length, self.msg_token, self.properties


MessageParts = tuple[bytes, bytes, int, bytes, PropertySet | None]
"""A message got, as a driver sends it: its MQMD (little-endian version 2), the data
returned, DataLength, MsgToken and properties (None or empty: none)."""


@dataclass(slots=True)  # made per waiting get: a plain __init__ is 4x cheaper than frozen
class Waiting:
    """get() found nothing and the caller asked to wait: the driver owns the timer.

    ``deadline`` is absolute (Clock seconds) or None for MQWI_UNLIMITED. When a message
    arrives the engine delivers it through take_deliveries(); when the deadline passes the
    driver calls cancel_wait(), which answers MQRC_NO_MSG_AVAILABLE.
    """

    waiter_id: int
    deadline: float | None


class Delivery:
    """The answer to a waiting get: a message (``result``), or the MQError that ended the wait.

    A message handed over by a put (engine.handover) comes as the parts a driver writing
    the get's reply reads (``md_bytes``, ``data``, ``msg_token``, ``queue``; ``properties``:
    the message's own, None or empty when it has none), and its GetResult is made when
    ``result`` is first read: a driver that writes the reply from the parts
    (PutResult.delivered) never makes one. ``md_bytes`` is None for a Delivery made from a
    GetResult or an error.
    """

    __slots__ = ("_handle", "_result", "data", "error", "md", "md_bytes", "msg_token", "properties", "queue", "sequence",
                 "sync_lsn", "waiter_id", "waiting")

    def __init__(self, waiter_id: int, result: GetResult | None, error: Exception | None = None, sync_lsn: int = 0,
                 waiting: bool = False, md: MQMD | None = None, md_bytes: bytes | None = None, data: bytes = b"",
                 msg_token: bytes = b"", sequence: int = 0, queue: str = "", properties: PropertySet | None = None,
                 handle: bool = False) -> None:
        self.waiter_id = waiter_id
        self._result = result
        self.error = error
        self.sync_lsn = sync_lsn
        self.waiting = waiting  # the wait goes on after this answer (a read-ahead's: engine.handover)
        self.md = md  # the parts of a handed-over message (None: ``result`` was given)
        self.md_bytes = md_bytes
        self.data = data
        self.msg_token = msg_token
        self.sequence = sequence
        self.queue = queue
        self.properties = properties
        self._handle = handle  # the getter gave a message handle: its result carries a PropertySet

    def parts(self) -> MessageParts | None:
        """The message as a driver sends it (a read-ahead's push); None for a wait that
        ended in ``error``. A handed-over message's are its own parts: no GetResult is made,
        and its properties are the message's (a frame only reads them), not the getter's
        copy that ``result`` makes."""
        md_bytes = self.md_bytes
        if md_bytes is not None:
            data = self.data
            return md_bytes, data, len(data), self.msg_token, self.properties
        r = self.result
        return None if r is None else r.parts()

    @property
    def result(self) -> GetResult | None:
        """The message as get returns it; None for a wait that ended in ``error``."""
        r = self._result
        if r is None and self.md is not None:
            data, props = self.data, self.properties
            r = self._result = GetResult(self.md, data, len(data), self.msg_token, self.queue, C.MQCC_OK, C.MQRC_NONE,
                                         self.sequence, self.queue,
                                         props.copy() if props else PropertySet() if self._handle else None,
                                         self.md_bytes)
        return r

    def __repr__(self) -> str:
        return (f"Delivery(waiter_id={self.waiter_id}, result={self.result!r}, error={self.error!r}, "
                f"sync_lsn={self.sync_lsn}, waiting={self.waiting})")


@dataclass(slots=True)
class InquireResult:
    ints: list[int] = field(default_factory=list)
    chars: list[str] = field(default_factory=list)
    comp: int = C.MQCC_OK  # MQCC_WARNING with MQRC_SELECTOR_NOT_FOR_TYPE
    reason: int = C.MQRC_NONE
