"""The MQI verbs, one flow each, under both clients; and their blocking form for pymqi.

Each verb is a sans-IO flow (ferrymq.client.steps): it builds the request from MQI-shaped
arguments, yields it as a ``Call`` and makes the reply its result, raising failures
(MQCC_FAILED) as typed ``MQError``. ``Client``/``Queue`` and ``AsyncClient``/``AsyncQueue``
run these flows for their opens, closes, inquiries, sets, commits and backouts; the
pymqi-compatible layer calls the blocking functions (``mqopen`` ...), which take any
``BlockingConversation`` (a ``Client``), pass the application's packed MQMD, option
words, wait interval, match options and buffer length through untouched, and hand the
reply (warnings and truncation included) back for the caller to map onto its structures.
``mqget`` returns a failed ``GetReply`` (MQRC_TRUNCATED_MSG_FAILED carries data and a
descriptor) and raises only for the plain ``Reply`` failures.

Handles opened here (``mqopen``) are numbered: the application keeps the number the open
gave, and a reconnect maps it onto the handle of the new conversation (reconnect.Handles).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol, TypeVar

from ferrymq.client import pubsub
from ferrymq.client import reconnect as R
from ferrymq.client import session as S
from ferrymq.client.errors import error_for
from ferrymq.client.message import AsyncPutStatus
from ferrymq.client.steps import Call, Flow
from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet
from ferrymq.protocol import events as E

T = TypeVar("T")


class Conversation(Protocol):
    """What a flow reads of a client: the current conversation's Session (it changes at a
    reconnect: read it afresh for each request) and the handles open on it."""

    @property
    def session(self) -> S.Session: ...

    @property
    def handles(self) -> R.Handles: ...


class BlockingConversation(Conversation, Protocol):
    def run(self, flow: Flow[T]) -> T:
        """Carry a flow's steps out; its result (or its exception)."""
        ...

    def _call(self, ev: Any) -> Any:
        """Carry out one ``Call(ev)`` step (a verb of one request and no decision between):
        the reply, as ``run`` would send it into the flow."""
        ...


# -- the verbs as flows ------------------------------------------------------------------------

def open_(conv: Conversation, record: R.OpenRecord, object_type: int | None = None,
          alternate_user_id: str = "") -> Flow[E.OpenReply]:
    """MQOPEN. The reply names the object opened (the generated name for a model queue)."""
    reply: E.OpenReply = S.check((yield Call(S.open_event(conv.session.next_corr(), record, object_type,
                                                          alternate_user_id))))
    return reply


def close(conv: Conversation, obj: R.Reopenable, options: int = C.MQCO_NONE) -> Flow[None]:
    """MQCLOSE; the object is no longer re-opened, and read-ahead state kept for it goes."""
    hobj = obj.hobj
    try:
        S.check((yield Call(E.Close(conv.session.next_corr(), hobj, options))))
    finally:
        conv.handles.forget(obj)
    conv.session.consumers.pop(hobj, None)


def inquire(conv: Conversation, hobj: int, int_selectors: tuple[int, ...],
            char_selectors: tuple[int, ...]) -> Flow[E.InquireReply]:
    """MQINQ: integer and character attribute values, in selector order."""
    reply: E.InquireReply = S.check((yield Call(E.Inquire(conv.session.next_corr(), hobj, int_selectors,
                                                          char_selectors))))
    return reply


def attributes(conv: Conversation, hobj: int, selectors: tuple[int, ...]) -> Flow[dict[int, int | str]]:
    """MQINQ as ``Queue.inquire`` asks it: values by selector (MQIA_* ints, MQCA_* strings)."""
    ints = tuple(x for x in selectors if x < C.MQCA_FIRST)
    chars = tuple(x for x in selectors if x >= C.MQCA_FIRST)
    r = yield from inquire(conv, hobj, ints, chars)
    out: dict[int, int | str] = dict(zip(ints, r.ints, strict=False))
    out.update(zip(chars, r.chars, strict=False))
    return out


def set_attributes(conv: Conversation, hobj: int, attrs: dict[int, int | str]) -> Flow[None]:
    """MQSET as ``Queue.set`` asks it: ints and strings by selector."""
    ints = {k: v for k, v in attrs.items() if isinstance(v, int)}
    chars = {k: v for k, v in attrs.items() if isinstance(v, str)}
    yield from set_(conv, hobj, ints, chars)


def set_(conv: Conversation, hobj: int, ints: dict[int, int], chars: dict[int, str]) -> Flow[None]:
    """MQSET."""
    S.check((yield Call(E.Set(conv.session.next_corr(), hobj, ints, chars))))


def commit(conv: Conversation) -> Flow[None]:
    """MQCMIT; MQRC_BACKED_OUT (BackedOut) if the unit of work had to be backed out."""
    S.check((yield Call(E.Commit(conv.session.next_corr()))))


def backout(conv: Conversation) -> Flow[None]:
    """MQBACK."""
    S.check((yield Call(E.Backout(conv.session.next_corr()))))


def stat(conv: Conversation) -> Flow[AsyncPutStatus]:
    """MQSTAT: outcomes of asynchronous puts since the last call."""
    return S.stat_result((yield Call(E.Stat(conv.session.next_corr()))))


def put(conv: Conversation, hobj: int, md: bytes, data: bytes, options: int,
        properties: PropertySet | None = None) -> Flow[E.PutReply]:
    """MQPUT with a packed MQMD; MQRC_DATA_LENGTH_ERROR (2010) for data over the
    connection's maximum message length, sent nowhere."""
    s = conv.session
    S.check_length(s, len(data))
    reply: E.PutReply = S.check((yield Call(E.Put(s.next_corr(), hobj, md, data, options,
                                                  properties=properties or None))))
    return reply


def put1(conv: Conversation, name: str, md: bytes, data: bytes, options: int, *, object_q_mgr_name: str = "",
         object_type: int = C.MQOT_Q, alternate_user_id: str = "", properties: PropertySet | None = None,
         object_string: str = "") -> Flow[E.PutReply]:
    """MQPUT1: open, put and close in one call (a topic's string in ``object_string``);
    2010 as ``put``, 2425 for a topic string over 10240 characters."""
    s = conv.session
    S.check_length(s, len(data))
    alternate = options & C.MQPMO_ALTERNATE_USER_AUTHORITY and C.MQOO_ALTERNATE_USER_AUTHORITY
    S.od_names(name, object_q_mgr_name, alternate_user_id, alternate)  # as the queue manager's MQPUT1 checks them
    S.topic_string(object_string)
    reply: E.PutReply = S.check((yield Call(E.Put1(s.next_corr(), name, md, data, options, object_type,
                                                   object_q_mgr_name, alternate_user_id,
                                                   properties=properties or None, object_string=object_string))))
    return reply


def get_request(s: S.Session, hobj: int, md: bytes, options: int, wait_interval: int, match_options: int,
                buffer_length: int, msg_token: bytes = C.MQMTOK_NONE, msg_handle: bool = False) -> E.Get:
    """MQGET's request on session ``s`` with a packed MQMD (see ``mqget``): one request,
    whose reply ``got`` reads, so a blocking get is one ``Call`` carried out without a flow
    around it."""
    if buffer_length > s.max_msg_length > 0:  # S.check_length's test, inline on the hot path
        raise S.too_long(buffer_length, s.max_msg_length)
    wait = wait_interval if options & C.MQGMO_WAIT else 0
    return E.Get(s.next_corr(), hobj, md, options, wait, match_options, buffer_length, msg_token, msg_handle)


def got(reply: Any) -> E.GetReply:
    """MQGET's reply (see ``mqget``): a GetReply, also one carrying a warning or
    MQRC_TRUNCATED_MSG_FAILED with its partial data.

    Raises:
        MQError: a plain Reply's failure, or a GetReply's other than truncation.
    """
    if type(reply) is not E.GetReply:
        raise error_for(reply.comp, reply.reason, reply.detail)
    if reply.comp == C.MQCC_FAILED and reply.reason != C.MQRC_TRUNCATED_MSG_FAILED:
        raise error_for(reply.comp, reply.reason, reply.detail)
    return reply


def get_ahead(conv: Conversation, hobj: int, options: int, wait_interval: int, max_messages: int,
              max_bytes: int, buffer_length: int) -> Flow[E.GetBatchReply | E.GetReply]:
    """MQGET under syncpoint that reads ahead (GET_AHEAD): the reply holds the
    application's message first, then those read ahead into the unit of work; a
    GetReply when one message ended a wait or the next is longer than the connection
    carries (MQRC_TRUNCATED_MSG_FAILED, not taken). Each message is at most
    ``buffer_length`` bytes long: the run stops before a longer one.

    Raises:
        MQError: the get failed without a message (e.g. 2033); 2010 as ``get``.
    """
    s = conv.session
    S.check_length(s, buffer_length)
    wait = wait_interval if options & C.MQGMO_WAIT else 0
    reply: Any = yield Call(E.GetAhead(s.next_corr(), hobj, options, wait, max_messages, max_bytes, buffer_length))
    t = type(reply)
    if t is not E.GetBatchReply and (t is not E.GetReply or (reply.comp == C.MQCC_FAILED
                                                              and reply.reason != C.MQRC_TRUNCATED_MSG_FAILED)):
        raise error_for(reply.comp, reply.reason, reply.detail)
    return reply  # type: ignore[no-any-return]


def return_ahead(conv: Conversation, hobj: int, tokens: list[bytes]) -> Flow[None]:
    """RETURN_AHEAD: messages read ahead and not handed out go back on their queue."""
    S.check((yield Call(E.ReturnAhead(conv.session.next_corr(), hobj, tokens))))


def subscribe(conv: Conversation, sub: E.Sub) -> Flow[E.SubReply]:
    """MQSUB: the subscription's handle, the handle of the queue publications arrive on
    (a managed one's new handle) and what the queue manager wrote back into the MQSD.

    Raises:
        MQError: the queue manager refused (e.g. 2432 MQRC_SUB_ALREADY_EXISTS, 2428
            MQRC_NO_SUBSCRIPTION, 2429 MQRC_SUBSCRIPTION_IN_USE), or ``sub_event``'s checks.
    """
    reply: E.SubReply = S.check((yield Call(pubsub.sub_event(conv.session.next_corr(), sub))))
    return reply


def sub_request(conv: Conversation, hsub: int, action: int = C.MQSR_ACTION_PUBLICATION,
                options: int = C.MQSRO_FAIL_IF_QUIESCING) -> Flow[int]:
    """MQSUBRQ: how many retained publications were sent to the subscription.

    Raises:
        MQError: e.g. 2019 (MQRC_HOBJ_ERROR) for a handle that is no subscription's.
    """
    reply: E.SubRequestReply = S.check((yield Call(E.SubRequest(conv.session.next_corr(), hsub, action, options))))
    return reply.num_pubs


def open_topic(conv: Conversation, topic: str, options: int = pubsub.TOPIC_OPEN) -> Flow[tuple[E.OpenReply, R.OpenRecord]]:
    """MQOPEN of topic string ``topic`` (its reply names the full topic string in
    ``res_object_string``) and what re-opens it.

    Raises:
        MQError: the queue manager refused (e.g. 2425 MQRC_TOPIC_STRING_ERROR).
    """
    record = R.OpenRecord("", options, "", "", object_type=C.MQOT_TOPIC, object_string=topic)
    reply: E.OpenReply = S.check((yield Call(S.open_event(conv.session.next_corr(), record))))
    return reply, record


# -- the blocking MQI, with numbered handles (pymqi) --------------------------------------------

def max_msg_length(conv: Conversation) -> int:
    """The largest message the conversation carries (negotiated at connect)."""
    return conv.session.max_msg_length


def mqopen(conv: BlockingConversation, name: str, options: int, *, object_type: int = C.MQOT_Q,
           object_q_mgr_name: str = "", dynamic_q_name: str = "AMQ.*", alternate_user_id: str = "",
           selection_string: str = "", object_string: str = "") -> E.OpenReply:
    """MQOPEN; a queue's or a topic's handle is numbered (re-opened after a reconnect).

    Raises:
        MQError: the queue manager refused the open.
    """
    record = R.OpenRecord(name, options, object_q_mgr_name, dynamic_q_name, selection_string, object_type,
                          object_string)
    reply = conv.run(open_(conv, record, object_type, alternate_user_id))
    if object_type in (C.MQOT_Q, C.MQOT_TOPIC):
        conv.handles.add_numbered(R.reopen_name(record, reply.object_name), reply.hobj)
    return reply


def mqsub(conv: BlockingConversation, sub: E.Sub) -> E.SubReply:
    """MQSUB with the MQSD's fields in ``sub`` (``sub.hobj``: a number ``mqopen`` gave, or
    MQHO_NONE with MQSO_MANAGED). The subscription's handle and a managed queue's are
    numbered: a reconnect makes the subscription again (reconnect.resubscription).

    Raises:
        MQError: the queue manager refused (2432, 2428, 2429, 2424 ...).
    """
    given = sub.hobj
    reply = conv.run(subscribe(conv, dataclasses.replace(sub, hobj=conv.handles.current(given))))
    handles = conv.handles
    managed = R.NumberedHandle(pubsub.managed_queue_record(reply.queue_name), reply.hobj, reply.hobj)
    provided = not sub.options & C.MQSO_MANAGED
    handles.add_numbered(pubsub.subscription_record(sub), reply.hsub, handles.by_number(given) if provided else managed)
    if not provided:
        handles.keep(managed)  # after its subscription, which makes it again
    return reply


def mqsubrq(conv: BlockingConversation, hsub: int, action: int, options: int) -> int:
    """MQSUBRQ: the number of retained publications sent.

    Raises:
        MQError: e.g. 2019 for a handle that is no subscription's.
    """
    return conv.run(sub_request(conv, conv.handles.current(hsub), action, options))


def mqclose(conv: BlockingConversation, hobj: int, options: int = C.MQCO_NONE) -> None:
    """MQCLOSE (dropping any read-ahead state the client kept for the handle)."""
    conv.run(close(conv, conv.handles.by_number(hobj), options))


def mqput(conv: BlockingConversation, hobj: int, md: bytes, data: bytes, options: int,
          properties: PropertySet | None = None) -> E.PutReply:
    """MQPUT; the reply carries the descriptor as the queue manager completed it.

    Raises:
        MQError: the put failed; 2010 for data over the maximum message length.
    """
    return conv.run(put(conv, conv.handles.current(hobj), md, data, options, properties))


def mqput1(conv: BlockingConversation, name: str, md: bytes, data: bytes, options: int, *,
           object_q_mgr_name: str = "", object_type: int = C.MQOT_Q, alternate_user_id: str = "",
           properties: PropertySet | None = None, object_string: str = "") -> E.PutReply:
    """MQPUT1 (of a topic: ``object_type`` MQOT_TOPIC and its string in ``object_string``).

    Raises:
        MQError: the open or the put failed; 2010 as ``mqput``.
    """
    return conv.run(put1(conv, name, md, data, options, object_q_mgr_name=object_q_mgr_name,
                         object_type=object_type, alternate_user_id=alternate_user_id, properties=properties,
                         object_string=object_string))


def mqget(conv: BlockingConversation, hobj: int, md: bytes, options: int, wait_interval: int, match_options: int,
          buffer_length: int, msg_token: bytes = C.MQMTOK_NONE, msg_handle: bool = False) -> E.GetReply:
    """MQGET with a packed MQMD (its match fields and the version wanted back).
    ``msg_handle``: the caller has a message handle, so properties may come back in the
    reply's ``properties`` rather than as an MQRFH2 in the data (queue PROPCTL decides).

    ``wait_interval`` is in milliseconds (MQWI_UNLIMITED = -1) and counts only with
    MQGMO_WAIT in ``options``. The reply may carry a warning or MQRC_TRUNCATED_MSG_FAILED
    with the partial data: the caller decides what to raise.

    Raises:
        MQError: the get failed without a message (e.g. MQRC_NO_MSG_AVAILABLE 2033);
            MQRC_DATA_LENGTH_ERROR (2010) for a buffer over the connection's maximum
            message length, asked for nowhere.
    """
    return got(conv._call(get_request(conv.session, conv.handles.current(hobj), md, options, wait_interval,
                                      match_options, buffer_length, msg_token, msg_handle)))


def mqget_ahead(conv: BlockingConversation, hobj: int, options: int, wait_interval: int, max_messages: int,
                max_bytes: int, buffer_length: int) -> E.GetBatchReply | E.GetReply:
    """MQGET under syncpoint reading up to ``max_messages - 1`` more ahead (``get_ahead``).

    Raises:
        MQError: as ``mqget``.
    """
    return conv.run(get_ahead(conv, conv.handles.current(hobj), options, wait_interval, max_messages, max_bytes,
                              buffer_length))


def mqreturn_ahead(conv: BlockingConversation, hobj: int, tokens: list[bytes]) -> None:
    """Return messages read ahead on ``hobj`` and not handed out (``return_ahead``).

    Raises:
        MQError: 2331 when one is not read ahead in the open unit of work (nothing changed).
    """
    conv.run(return_ahead(conv, conv.handles.current(hobj), tokens))


def mqinq(conv: BlockingConversation, hobj: int, int_selectors: tuple[int, ...],
          char_selectors: tuple[int, ...]) -> E.InquireReply:
    """MQINQ: integer and character attribute values, in selector order.

    Raises:
        MQError: an unknown selector, or the object was not opened for inquire.
    """
    return conv.run(inquire(conv, conv.handles.current(hobj), int_selectors, char_selectors))


def mqset(conv: BlockingConversation, hobj: int, ints: dict[int, int], chars: dict[int, str]) -> None:
    """MQSET.

    Raises:
        MQError: the attribute cannot be set, or the object was not opened for set.
    """
    conv.run(set_(conv, conv.handles.current(hobj), ints, chars))


def mqcmit(conv: BlockingConversation) -> None:
    """MQCMIT. Raises MQError (MQRC_BACKED_OUT) if the unit of work had to be backed out."""
    conv.run(commit(conv))


def mqback(conv: BlockingConversation) -> None:
    """MQBACK."""
    conv.run(backout(conv))
