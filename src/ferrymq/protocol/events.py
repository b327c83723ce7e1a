"""The events of ferrymq's client protocol: one class per frame, requests and replies.

Requests flow client → server and carry ``corr``, the correlation id the reply echoes
(so requests can be pipelined and replies may come back in any order). Server-initiated
frames (``Pushed``, ``Ending``, ``Heartbeat``) carry ``corr=0`` unless answering.
``Reply`` is the generic answer: every request that fails is answered by a ``Reply``
with ``comp``/``reason``/``detail``; requests without a result body are answered by one
on success too. The packet type numbers and body layouts are in docs/protocol.md and
ferrymq.protocol.codec.

Events are facts and nobody changes one after it is made, but they are not frozen
dataclasses: a frozen __init__ sets each field through object.__setattr__, four times the
cost of a plain one, and several of these are made for every message.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet
from ferrymq.wire.mqmd import MQMD

PROTOCOL_VERSION = 5
"""2 added the batch frames and carries typed message properties in the payload of PUT,
PUT1, GET_REPLY and PUSHED; 3 added publish/subscribe: a topic string in OPEN, OPEN_REPLY
and PUT1 (their layouts changed) and the SUB and SUBRQ frames; 4 gives each PUSHED_BATCH
item its properties (a publication's copies carry them), as GET_BATCH_REPLY's have. A
peer of an older version is refused at CONNECT (its frames have the old layout), so every
conversation speaks 4 or 5. 5 adds GET_AHEAD and RETURN_AHEAD (gets read ahead into a
unit of work, and their return) and changes no layout: a version 4 peer is still served,
and those two frames are a protocol error on its conversation."""
MIN_PROTOCOL_VERSION = 4
BATCH_VERSION = 2
AHEAD_VERSION = 5

Properties = PropertySet  # typed message properties (a plain mapping is accepted when sending)


@dataclass(slots=True)
class Connect:
    corr: int
    qmgr_name: str = ""
    appl_name: str = ""
    user: str = ""
    appl_type: int = C.MQAT_DEFAULT
    min_version: int = MIN_PROTOCOL_VERSION
    max_version: int = PROTOCOL_VERSION
    max_msg_length: int = 4 * 1024 * 1024
    heartbeat_ms: int = 30_000
    options: int = 0  # MQCNO_* the client wants the server to know of (e.g. MQCNO_RECONNECT)
    # MQCSP's password (with ``user``): never in a repr, a log line or an error message.
    password: str = field(default="", repr=False)
    # The SVRCONN channel the client names (MQCD ChannelName); blank: SYSTEM.DEF.SVRCONN.
    channel: str = ""
    pid: int = 0  # the client's process and thread (accounting's ApplicationPid/Tid)
    tid: int = 0


@dataclass(slots=True)
class ConnectReply:
    corr: int
    comp: int = C.MQCC_OK
    reason: int = C.MQRC_NONE
    detail: str = ""
    version: int = PROTOCOL_VERSION
    max_msg_length: int = 4 * 1024 * 1024
    heartbeat_ms: int = 30_000
    qmgr_name: str = ""
    connection_id: bytes = bytes(24)


@dataclass(slots=True)
class Disconnect:
    corr: int


@dataclass(slots=True)
class Open:
    corr: int
    object_name: str
    options: int
    object_type: int = C.MQOT_Q
    object_q_mgr_name: str = ""
    dynamic_q_name: str = "AMQ.*"
    alternate_user_id: str = ""
    selection_string: str = ""
    object_string: str = ""  # MQOD ObjectString: a topic string (MQOT_TOPIC)


@dataclass(slots=True)
class OpenReply:
    corr: int
    hobj: int
    object_name: str
    resolved_q_name: str = ""
    resolved_q_mgr_name: str = ""
    comp: int = C.MQCC_OK
    reason: int = C.MQRC_NONE
    detail: str = ""
    res_object_string: str = ""  # MQOD ResObjectString: the full topic string of a topic open


@dataclass(slots=True)
class Close:
    corr: int
    hobj: int
    options: int = C.MQCO_NONE


@dataclass(slots=True)
class Put:
    """MQPUT. With ``reply=False`` (MQPMO_ASYNC_RESPONSE) the server sends no answer at
    all; failures are counted and reported by ``Stat``."""

    corr: int
    hobj: int
    md: MQMD | bytes  # bytes: an MQMD already packed (the client's fast path); decoded: MQMD
    data: bytes
    options: int = C.MQPMO_NONE
    context: int = 0
    properties: Properties | None = None
    reply: bool = True


@dataclass(slots=True)
class PutBatch:
    """Several asynchronous MQPUTs on one handle that differ only in MsgId and data:
    one descriptor and one set of options for all (the client coalesces them; the server
    treats each item as the Put it stands for, counting failures for ``Stat``)."""

    hobj: int
    md: MQMD | bytes  # the descriptor of every item, but for MsgId
    items: list[tuple[bytes, bytes]]  # (MsgId, data) in put order
    options: int = C.MQPMO_NONE
    context: int = 0


@dataclass(slots=True)
class Put1:
    corr: int
    object_name: str
    md: MQMD | bytes
    data: bytes
    options: int = C.MQPMO_NONE
    object_type: int = C.MQOT_Q
    object_q_mgr_name: str = ""
    alternate_user_id: str = ""
    context: int = 0
    properties: Properties | None = None
    reply: bool = True
    object_string: str = ""  # MQOD ObjectString: a topic string (MQOT_TOPIC)


@dataclass(slots=True)
class OpenList:
    """MQOPEN of a distribution list: one (ObjectName, ObjectQMgrName) per object record."""

    corr: int
    objects: list[tuple[str, str]]
    options: int = C.MQOO_OUTPUT
    alternate_user_id: str = ""


@dataclass(slots=True)
class PutList:
    """MQPUT through a distribution list's handle, or MQPUT1 to ``objects`` (``hobj`` 0).
    ``records``: the put-message records, each (MsgId, CorrelId, GroupId, Feedback,
    AccountingToken); ``fields`` (PutMsgRecFields) says which of them count."""

    corr: int
    hobj: int
    md: MQMD | bytes
    data: bytes
    options: int = C.MQPMO_NONE
    context: int = 0
    fields: int = C.MQPMRF_NONE
    records: list[tuple[bytes, bytes, bytes, int, bytes]] = field(default_factory=list)
    objects: list[tuple[str, str]] = field(default_factory=list)
    alternate_user_id: str = ""
    properties: Properties | None = None


@dataclass(slots=True)
class ListReply:
    """The answer to OpenList and PutList: the call's status, the list's handle (an open
    that succeeded anywhere), the three counts and one response per object record:
    (CompCode, Reason, MsgId, CorrelId) — the identifiers as put, zeros where nothing was."""

    corr: int
    hobj: int = 0
    known: int = 0
    unknown: int = 0
    invalid: int = 0
    responses: list[tuple[int, int, bytes, bytes]] = field(default_factory=list)
    comp: int = C.MQCC_OK
    reason: int = C.MQRC_NONE
    detail: str = ""


@dataclass(slots=True)
class PutReply:
    corr: int
    md: MQMD | bytes  # decoded as the packed bytes (the client decodes lazily)
    resolved_q_name: str = ""
    resolved_q_mgr_name: str = ""
    comp: int = C.MQCC_OK
    reason: int = C.MQRC_NONE
    detail: str = ""


@dataclass(slots=True)
class Get:
    corr: int
    hobj: int
    md: MQMD | bytes  # the match fields (MsgId, CorrelId, GroupId, ...) and the version wanted back
    options: int = C.MQGMO_NO_WAIT
    wait_interval: int = 0  # milliseconds; MQWI_UNLIMITED = -1
    match_options: int = C.MQMO_MATCH_MSG_ID | C.MQMO_MATCH_CORREL_ID
    buffer_length: int = 4 * 1024 * 1024
    msg_token: bytes = bytes(16)
    msg_handle: bool = False  # the getter has a message handle (MQGMO MsgHandle) for the properties


@dataclass(slots=True)
class GetBatch:
    """Up to ``max_messages`` destructive gets in one request (about ``max_bytes`` of data),
    each taken as MQGET takes it with ``options``; no match options. Answered by a
    GetBatchReply, by a GetReply when the request waited and one message ended the wait,
    or by a Reply with the reason when nothing could be got."""

    corr: int
    hobj: int
    options: int = C.MQGMO_NO_WAIT
    wait_interval: int = 0
    max_messages: int = 100
    max_bytes: int = 1024 * 1024
    buffer_length: int = 4 * 1024 * 1024


@dataclass(slots=True)
class GetAhead(GetBatch):
    """A syncpoint get that reads ahead: the first message is the application's MQGET
    (taken with ``options``, which include MQGMO_SYNCPOINT; it may wait), and up to
    ``max_messages - 1`` more that are there already are taken into the same unit of work
    as *read ahead*: the client hands them to its next MQGETs, and returns those it did
    not hand out with RETURN_AHEAD before it commits, backs out or closes. A read-ahead
    get's delete is journaled only when the unit commits, so a return undoes it whole.
    The run stops before any message whose get the queue manager would have to decide
    at delivery (expiry, a confirmation of delivery, properties to re-form, a lock).
    Answered as GetBatch is."""


@dataclass(slots=True)
class ReturnAhead:
    """Put messages read ahead on ``hobj`` (named by their MsgTokens) back on their queue,
    out of the unit of work, where and as they were (BackoutCount unchanged). Answered by
    a Reply: MQRC_NONE, or a failure that changed nothing."""

    corr: int
    hobj: int
    tokens: list[bytes] = field(default_factory=list)


@dataclass(slots=True)
class GetBatchReply:
    """The messages a GetBatch got, in delivery order."""

    corr: int
    items: list[tuple[bytes, bytes, int, bytes, Properties | None]]  # (MQMD, data, length, MsgToken, properties)


@dataclass(slots=True)
class GetReply:
    """A message. ``md_bytes`` is the MQMD exactly as sent, for lazy decoding."""

    corr: int
    md_bytes: bytes
    data: bytes
    data_length: int
    msg_token: bytes = bytes(16)
    resolved_q_name: str = ""
    properties: Properties | None = None
    comp: int = C.MQCC_OK
    reason: int = C.MQRC_NONE
    detail: str = ""


@dataclass(slots=True)
class Commit:
    corr: int


@dataclass(slots=True)
class Backout:
    corr: int


@dataclass(slots=True)
class Inquire:
    corr: int
    hobj: int
    int_selectors: tuple[int, ...] = ()
    char_selectors: tuple[int, ...] = ()


@dataclass(slots=True)
class InquireReply:
    corr: int
    ints: tuple[int, ...] = ()
    chars: tuple[str, ...] = ()
    comp: int = C.MQCC_OK
    reason: int = C.MQRC_NONE
    detail: str = ""


@dataclass(slots=True)
class Set:
    corr: int
    hobj: int
    ints: dict[int, int] = field(default_factory=dict)
    chars: dict[int, str] = field(default_factory=dict)


@dataclass(slots=True)
class Heartbeat:
    """A liveness probe; ``reply=True`` asks the peer for a ``HeartbeatReply``."""

    corr: int = 0
    reply: bool = False


@dataclass(slots=True)
class HeartbeatReply:
    corr: int


@dataclass(slots=True)
class Stat:
    """MQSTAT: the asynchronous-put results since the last Stat (the server resets them)."""

    corr: int
    stat_type: int = C.MQSTAT_TYPE_ASYNC_ERROR


@dataclass(slots=True)
class StatReply:
    corr: int
    put_success: int = 0
    put_warning: int = 0
    put_failure: int = 0
    first_comp: int = C.MQCC_OK  # the first warning or failure among them
    first_reason: int = C.MQRC_NONE
    first_detail: str = ""
    comp: int = C.MQCC_OK
    reason: int = C.MQRC_NONE
    detail: str = ""


@dataclass(slots=True)
class Sub:
    """MQSUB: the MQSD's fields the queue manager acts on, and ``hobj``, the caller's open
    queue for the publications (MQHO_NONE with MQSO_MANAGED)."""

    corr: int
    options: int
    hobj: int = C.MQHO_NONE
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


@dataclass(slots=True)
class SubReply:
    """What MQSUB returns: the subscription handle, the handle publications are got from
    (a managed queue's new one, or the one given), and what IBM writes back into the MQSD:
    always the full topic string and the CorrelId publications carry; after a resume
    (``described``) the subscription's other fields too."""

    corr: int
    hsub: int
    hobj: int
    queue_name: str = ""
    res_object_string: str = ""
    sub_correl_id: bytes = bytes(24)
    comp: int = C.MQCC_OK  # a warning travels here
    reason: int = C.MQRC_NONE
    detail: str = ""
    # A resume's write-back (``described``): the subscription's MQSD fields as it is.
    described: bool = False
    options: int = 0
    object_name: str = ""
    sub_user_data: str = ""
    pub_priority: int = C.MQPRI_PRIORITY_AS_PUBLISHED
    pub_accounting_token: bytes = bytes(32)
    pub_appl_identity_data: str = ""
    selection_string: str = ""
    sub_expiry: int = C.MQEI_UNLIMITED
    sub_level: int = 1


@dataclass(slots=True)
class SubRequest:
    """MQSUBRQ: ``action`` (MQSR_ACTION_PUBLICATION) on subscription ``hsub``."""

    corr: int
    hsub: int
    action: int = C.MQSR_ACTION_PUBLICATION
    options: int = 0  # MQSRO_*


@dataclass(slots=True)
class SubRequestReply:
    """MQSUBRQ's MQSRO NumPubs: the retained publications sent to the subscription."""

    corr: int
    num_pubs: int = 0
    comp: int = C.MQCC_OK
    reason: int = C.MQRC_NONE
    detail: str = ""


MAX_WINDOW = 10_000
"""The largest read-ahead window (messages pushed ahead of the application's gets) a
server accepts in a Consume; clients ask for no more (docs/limits.md)."""


@dataclass(slots=True)
class Consume:
    """Start read-ahead on ``hobj``: the server pushes up to ``window`` messages (Pushed)
    taken with ``options`` (MQGMO_*, no syncpoint) and keeps pushing as credit returns."""

    corr: int
    hobj: int
    window: int
    options: int = C.MQGMO_NO_SYNCPOINT


@dataclass(slots=True)
class Credit:
    """The client consumed ``count`` pushed messages of ``hobj``: the window reopens."""

    hobj: int
    count: int


@dataclass(slots=True)
class Pushed:
    """A message the server sent ahead to a read-ahead consumer (no request, corr 0)."""

    hobj: int
    md_bytes: bytes
    data: bytes
    data_length: int
    msg_token: bytes = bytes(16)
    properties: Properties | None = None


@dataclass(slots=True)
class PushedBatch:
    """Several messages sent ahead at once, in delivery order."""

    hobj: int
    # (packed MQMD, data, data length, MsgToken, properties or None), as GetBatchReply's
    items: list[tuple[bytes, bytes, int, bytes, Properties | None]]


@dataclass(slots=True)
class PersistentNext:
    """Read-ahead on ``hobj`` has paused: the next message is persistent, and a persistent
    message is never sent ahead. The client gets it with an ordinary Get; the server
    resumes pushing after that Get."""

    hobj: int


@dataclass(slots=True)
class Ending:
    """The server is ending the conversation: quiescing (2161), stopping (2162) or
    refusing the peer's bytes (2009 with the rule in ``detail``)."""

    reason: int
    detail: str = ""


@dataclass(slots=True)
class Reply:
    """The generic answer: status only."""

    corr: int
    comp: int = C.MQCC_OK
    reason: int = C.MQRC_NONE
    detail: str = ""


Request = (Connect | Disconnect | Open | OpenList | Close | Put | Put1 | PutList | Get | GetBatch | GetAhead | ReturnAhead | Commit | Backout
           | Inquire | Set | Stat | Consume | Sub | SubRequest)
ReplyEvent = (ConnectReply | OpenReply | ListReply | PutReply | GetReply | GetBatchReply | InquireReply | StatReply | HeartbeatReply
              | SubReply | SubRequestReply | Reply)
ClientEvent = Request | PutBatch | Heartbeat | HeartbeatReply | Credit
ServerEvent = ReplyEvent | Pushed | PushedBatch | PersistentNext | Ending | Heartbeat
Event = ClientEvent | ServerEvent
