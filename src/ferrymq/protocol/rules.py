"""The conversation's rules, written once (h11's state table): for each event, which side
sends it, when it may, and what it changes.

``CLIENT_SENDS`` holds a rule for every event a client sends, ``SERVER_SENDS`` for every
event a server sends. Both machines keep the same state (a ``Conversation``) and use the
same two tables: a client checks its own sends with CLIENT_SENDS and what it receives with
SERVER_SENDS, a server the other way round. A rule raises ``LocalProtocolError``; the
machine that applies it to what it received turns that into ``RemoteProtocolError`` (the
peer broke the rule), as h11 does.

The rules: CONNECT comes first and once, and nothing else is sent before it is answered;
nothing is sent after DISCONNECT or ENDING but the answers still owed; a request's
correlation id is positive and unique among the requests unanswered; every reply answers an
outstanding request with a reply of the right kind (REPLY answers any); pushed messages
come only for a handle that is consuming, and a handle consumes once; batch frames and
message lengths keep to what CONNECT agreed; the frames a version added are sent only on
a conversation that agreed that version.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, TypeVar, cast

from ferrymq.protocol import columnframes, seqframes
from ferrymq.protocol import events as E
from ferrymq.protocol.errors import LocalProtocolError

HANDSHAKE_LIMIT = 64 * 1024
"""Largest packet accepted before CONNECT has negotiated the maximum message length."""
FRAME_OVERHEAD = 64 * 1024
"""Room for headers, names and properties on top of the maximum message length."""


class State(enum.Enum):
    IDLE = "IDLE"  # before CONNECT
    CONNECTING = "CONNECTING"  # CONNECT sent / received, reply outstanding
    CONNECTED = "CONNECTED"
    CLOSED = "CLOSED"  # disconnected, ended, or the peer hung up
    ERROR = "ERROR"


# The states as plain names: an Enum member looked up through its class costs several times
# a global's lookup, and every frame's rule reads one.
_IDLE, _CONNECTING, _CONNECTED, _CLOSED = State.IDLE, State.CONNECTING, State.CONNECTED, State.CLOSED

# Which reply types may answer which request (Reply answers all of them).
_GENERIC_REPLY = E.Reply
ANSWERS: dict[type, tuple[type, ...]] = {
    E.Connect: (E.ConnectReply,),
    E.Open: (E.OpenReply,),
    E.Put: (E.PutReply,),
    E.Put1: (E.PutReply,),
    E.OpenList: (E.ListReply,),
    E.PutList: (E.ListReply,),
    E.Get: (E.GetReply,),
    E.GetBatch: (E.GetBatchReply, E.GetReply),  # GetReply: one message ended a wait
    E.GetAhead: (E.GetBatchReply, E.GetReply),
    E.Inquire: (E.InquireReply,),
    E.Stat: (E.StatReply,),
    E.Heartbeat: (E.HeartbeatReply,),
    E.Sub: (E.SubReply,),
    E.SubRequest: (E.SubRequestReply,),
    **seqframes.ANSWERS,
    E.Disconnect: (), E.Close: (), E.Commit: (), E.Backout: (), E.Set: (), E.Consume: (),  # answered by Reply only
    E.ReturnAhead: (),
}
_ANSWER_CHANGES = frozenset({E.Connect, E.Close, E.Consume})
"""The requests whose answer changes more than the outstanding requests."""


class CrossedInFlight(LocalProtocolError):
    """A breach that a frame crossing the other side's in flight explains (a Credit sent
    before its Consume's end arrived): an error to send, no error to receive."""


class Conversation:
    """The state the rules read and change; both machines are one."""

    def __init__(self) -> None:
        self.state = State.IDLE
        self.version = 0  # the protocol version agreed at Connect
        self.max_msg_length = 0  # agreed at Connect (0 until then)
        self.max_packet = HANDSHAKE_LIMIT
        self._proposed = 0  # the maximum message length the client asked for
        self._outstanding: dict[int, type] = {}  # corr of a request unanswered -> its class
        self._consuming: set[int] = set()
        self._consume_req: dict[int, int] = {}  # corr of an outstanding Consume -> its hobj
        self._closing: dict[int, int] = {}  # corr of an outstanding Close -> its hobj

    @property
    def outstanding(self) -> int:
        """Requests sent and not yet answered."""
        return len(self._outstanding)

    def is_consuming(self, hobj: int) -> bool:
        return hobj in self._consuming

    def batch_limit(self) -> int:
        """Payload bytes a batch frame may carry (0: batches not agreed on this connection)."""
        return self.max_msg_length if self.version >= E.BATCH_VERSION else 0

    def _negotiated(self, max_msg_length: int, version: int) -> None:
        """CONNECT's answer agreed these (a machine also raises its reader's limit)."""
        self.version = version
        self.max_msg_length = max_msg_length
        self.max_packet = max_msg_length + FRAME_OVERHEAD


Rule = Callable[[Conversation, Any], None]
"""A rule: checks an event against the conversation and applies it (LocalProtocolError if
it may not be sent now). Each is written for its event's class: the tables dispatch by it."""

R = TypeVar("R", bound=Callable[..., None])

CLIENT_SENDS: dict[type, Rule] = {}
"""The rule of every event a client sends."""
SERVER_SENDS: dict[type, Rule] = {}
"""The rule of every event a server sends."""


def _rule(table: dict[type, Rule], *events: type) -> Callable[[R], R]:
    """Register the decorated rule for these event classes (the rule is typed on them)."""

    def register(fn: R) -> R:
        for t in events:
            table[t] = fn
        return fn
    return register


USUAL: dict[Rule, tuple[tuple[str, ...], dict[str, object]]] = {}
"""The usual case of a rule as code: rule -> the lines of its usual case and the names they
use. The lines read ``c`` (the conversation) and ``e`` (the event), and have ``{unusual}``
where they find the case is not the usual one, having changed nothing: the rule runs the
whole rule there (``_full``, which applies any other case or raises). A machine's taker of
a frame (layout.Frame.taker) and its sender (layout.Frame.sender) have these lines inline,
after the frame's decoding or packing: one step decodes a reply and matches it, one packs a
request and makes it outstanding."""


def _usual(lines: tuple[str, ...], full: Rule, names: dict[str, object] | None = None) -> Rule:
    """The rule that runs ``lines`` (its usual case, see USUAL) and ``full``, the whole
    rule, for any other case; registered in USUAL."""
    names = {**(names or {}), "_full": full, "_CONNECTED": _CONNECTED}
    ns = dict(names)
    body = "".join(f"    {line.format(unusual='_full(c, e)')}\n" for line in lines)
    exec(f"def rule(c, e):\n{body}", ns)  # our own lines: the rule the takers and senders inline
    rule = cast(Rule, ns["rule"])
    USUAL[rule] = (lines, names)
    return rule


# -- what a client sends -------------------------------------------------------------------


def _connected(c: Conversation, t: type) -> None:
    """Every client frame but CONNECT: only once CONNECT has been answered, and not after the end."""
    state = c.state
    if state is not _CONNECTED:
        if state is _IDLE:
            raise LocalProtocolError(f"{t.__name__} before Connect")
        if state is _CONNECTING:
            raise LocalProtocolError(f"{t.__name__} before the Connect was answered")
        raise LocalProtocolError(f"{t.__name__} after the conversation ended ({state.value})")


def _request(c: Conversation, corr: int, t: type) -> None:
    """A request: a positive correlation id, not in use; the request is then outstanding."""
    if corr <= 0 or corr in c._outstanding:
        raise LocalProtocolError(f"correlation id {corr} is not positive or is still in use")
    c._outstanding[corr] = t


def _length(c: Conversation, data: bytes) -> None:
    if len(data) > c.max_msg_length > 0:
        raise LocalProtocolError(f"message of {len(data)} bytes exceeds the negotiated maximum {c.max_msg_length}")


def _batch_version(c: Conversation, t: type, needed: int = E.BATCH_VERSION) -> None:
    """A frame a protocol version added: only on a conversation that agreed it."""
    if c.version < needed:
        raise LocalProtocolError(f"{t.__name__} needs protocol version {needed}; version {c.version} was agreed")


@_rule(CLIENT_SENDS, E.Connect)
def _connect(c: Conversation, ev: E.Connect) -> None:
    if c.state is not _IDLE:
        raise LocalProtocolError("a second Connect")
    _request(c, ev.corr, E.Connect)
    c._proposed = ev.max_msg_length
    c.state = State.CONNECTING


def _put_full(c: Conversation, ev: E.Put | E.Put1) -> None:
    if c.state is not _CONNECTED:
        _connected(c, type(ev))
    if len(ev.data) > c.max_msg_length > 0:
        _length(c, ev.data)
    if ev.reply:  # else asynchronous (MQPMO_ASYNC_RESPONSE): nothing answers it
        _request(c, ev.corr, type(ev))


_PUT = (
    "if (c.state is not _CONNECTED or len(e.data) > c.max_msg_length > 0"
    " or e.reply and (e.corr <= 0 or e.corr in c._outstanding)):",
    "    {unusual}",
    "elif e.reply:",
    "    c._outstanding[e.corr] = type(e)",
)
"""A put's usual case: on a conversation connected, within the agreed length; a
synchronous one is then outstanding, an asynchronous one (MQPMO_ASYNC_RESPONSE) is not."""
_rule(CLIENT_SENDS, E.Put, E.Put1)(_usual(_PUT, _put_full))


@_rule(CLIENT_SENDS, E.PutList)
def _put_list(c: Conversation, ev: E.PutList) -> None:
    _connected(c, E.PutList)
    _length(c, ev.data)
    _request(c, ev.corr, E.PutList)


def _plain_request_full(c: Conversation, ev: E.Get | E.Open | E.OpenList | E.Commit | E.Backout | E.Inquire | E.Set
                        | E.Stat | E.Sub | E.SubRequest | seqframes.SeqRequest) -> None:
    if c.state is not _CONNECTED:
        _connected(c, type(ev))
    _request(c, ev.corr, type(ev))


_PLAIN_REQUEST = (
    "corr = e.corr",
    "if c.state is not _CONNECTED or corr <= 0 or corr in c._outstanding:",
    "    {unusual}",
    "else:",
    "    c._outstanding[corr] = type(e)",
)
"""A request's usual case: on a conversation connected, a new positive correlation id,
then outstanding."""
_rule(CLIENT_SENDS, E.Get, E.Open, E.OpenList, E.Commit, E.Backout, E.Inquire, E.Set, E.Stat, E.Sub, E.SubRequest,
      seqframes.SeqRange, seqframes.BrowseRange, seqframes.BrowseColumns, seqframes.RemoveUpto, seqframes.Readers,
      seqframes.Prepare, seqframes.Resolve, seqframes.InDoubt)(_usual(_PLAIN_REQUEST, _plain_request_full))


@_rule(CLIENT_SENDS, E.GetBatch)
def _get_batch(c: Conversation, ev: E.GetBatch) -> None:
    _connected(c, E.GetBatch)
    _batch_version(c, E.GetBatch)
    _request(c, ev.corr, E.GetBatch)


@_rule(CLIENT_SENDS, E.GetAhead, E.ReturnAhead)
def _ahead(c: Conversation, ev: E.GetAhead | E.ReturnAhead) -> None:
    """Gets read ahead under syncpoint, and their return: frames of version 5."""
    t = type(ev)
    _connected(c, t)
    _batch_version(c, t, E.AHEAD_VERSION)
    _request(c, ev.corr, t)


@_rule(CLIENT_SENDS, E.Close)
def _close(c: Conversation, ev: E.Close) -> None:
    _connected(c, E.Close)
    _request(c, ev.corr, E.Close)
    c._closing[ev.corr] = ev.hobj


@_rule(CLIENT_SENDS, E.Disconnect)
def _disconnect(c: Conversation, ev: E.Disconnect) -> None:
    _connected(c, E.Disconnect)
    _request(c, ev.corr, E.Disconnect)
    c.state = State.CLOSED  # nothing more from the client; the answer is still owed


@_rule(CLIENT_SENDS, E.Consume)
def _consume(c: Conversation, ev: E.Consume) -> None:
    _connected(c, E.Consume)
    if ev.hobj in c._consuming:
        raise LocalProtocolError(f"a second Consume on handle {ev.hobj}, which is already consuming")
    _request(c, ev.corr, E.Consume)
    c._consume_req[ev.corr] = ev.hobj  # outstanding while the server pushes: its reply ends it
    c._consuming.add(ev.hobj)


@_rule(CLIENT_SENDS, E.Credit)
def _credit(c: Conversation, ev: E.Credit) -> None:
    _connected(c, E.Credit)
    if ev.hobj not in c._consuming:  # received, it may have crossed the Consume's end: the server ignores it
        raise CrossedInFlight(f"Credit for handle {ev.hobj}, which is not consuming")


@_rule(CLIENT_SENDS, E.PutBatch, columnframes.PutColumns)
def _put_batch(c: Conversation, ev: E.PutBatch | columnframes.PutColumns) -> None:
    _connected(c, type(ev))
    _batch_version(c, type(ev))
    if isinstance(ev, columnframes.PutColumns):
        try:
            columnframes.check(ev)
        except ValueError as exc:
            raise LocalProtocolError(f"PutColumns: {exc}") from None
        longest = columnframes.largest(ev)
    else:
        longest = max((len(d) for _, d in ev.items), default=0)
    if longest > c.max_msg_length:
        raise LocalProtocolError(f"message of {longest} bytes exceeds the negotiated maximum {c.max_msg_length}")


@_rule(CLIENT_SENDS, E.Heartbeat)
def _client_heartbeat(c: Conversation, ev: E.Heartbeat) -> None:
    _connected(c, E.Heartbeat)
    if ev.reply:  # a probe the server answers
        _request(c, ev.corr, E.Heartbeat)


@_rule(CLIENT_SENDS, E.HeartbeatReply)
def _client_heartbeat_reply(c: Conversation, ev: E.HeartbeatReply) -> None:
    _connected(c, E.HeartbeatReply)  # the server's probes are not tracked: any answer will do


# -- what a server sends -------------------------------------------------------------------


@_rule(SERVER_SENDS, E.ConnectReply, E.OpenReply, E.ListReply, E.PutReply, E.GetReply, E.GetBatchReply, E.InquireReply,
       E.StatReply, E.HeartbeatReply, E.SubReply, E.SubRequestReply, E.Reply, seqframes.SeqRangeReply, seqframes.BrowseRangeReply,
       seqframes.BrowseColumnsReply, seqframes.RemoveUptoReply, seqframes.ReadersReply, seqframes.PrepareReply,
       seqframes.ResolveReply, seqframes.InDoubtReply)
def _reply(c: Conversation, ev: E.ReplyEvent | seqframes.SeqReply) -> None:
    t = type(ev)
    corr = ev.corr
    req = c._outstanding.get(corr)
    if req is None:
        raise LocalProtocolError(f"{t.__name__} answers correlation id {corr}, which is not outstanding")
    if t not in ANSWERS[req] and t is not _GENERIC_REPLY:
        raise LocalProtocolError(f"{t.__name__} cannot answer {req.__name__}")
    if req not in _ANSWER_CHANGES:  # a Get, Put, Open ... : answered, and that is all
        del c._outstanding[corr]
        return
    if req is E.Connect:
        ok = isinstance(ev, E.ConnectReply) and ev.comp != 2
        if isinstance(ev, E.ConnectReply) and ok:
            if ev.max_msg_length > c._proposed:
                raise LocalProtocolError(f"the server raised the maximum message length to {ev.max_msg_length}")
            c._negotiated(ev.max_msg_length, ev.version)
        c.state = State.CONNECTED if ok else State.CLOSED
    elif req is E.Close:
        c._closing.pop(corr)
    elif req is E.Consume:  # its reply ends the read-ahead: no pushes after it
        c._consuming.discard(c._consume_req.pop(corr))
    del c._outstanding[corr]


_ANSWERED = (
    "corr = e.corr",
    "req = c._outstanding.pop(corr, None)",
    "if req not in _simple:",
    "    if req is not None:",
    "        c._outstanding[corr] = req",
    "    {unusual}",
)
"""A reply's usual case: it answers an outstanding request whose answer changes nothing
but the outstanding requests (a Get's, a Put's ...), and is applied with one ``pop``."""


def _answer(t: type) -> Rule:
    """``_reply`` for replies of class ``t``, its usual case (``_ANSWERED``) made from ANSWERS."""
    return _usual(_ANSWERED, _reply, {"_simple": frozenset(
        req for req, answers in ANSWERS.items() if (t in answers or t is _GENERIC_REPLY) and req not in _ANSWER_CHANGES)})


SERVER_SENDS.update((t, _answer(t)) for t, rule in list(SERVER_SENDS.items()) if rule is _reply)


@_rule(SERVER_SENDS, E.Pushed, E.PersistentNext, E.PushedBatch)
def _pushed(c: Conversation, ev: E.Pushed | E.PersistentNext | E.PushedBatch) -> None:
    if type(ev) is E.PushedBatch:
        _batch_version(c, E.PushedBatch)
    if ev.hobj not in c._consuming:
        raise LocalProtocolError(f"{type(ev).__name__} for handle {ev.hobj}, which is not consuming")


@_rule(SERVER_SENDS, E.Ending)
def _ending(c: Conversation, ev: E.Ending) -> None:
    c.state = State.CLOSED


@_rule(SERVER_SENDS, E.Heartbeat)
def _server_heartbeat(c: Conversation, ev: E.Heartbeat) -> None:
    """A probe (reply=True: the client answers; the server's idle deadline): always allowed."""
