"""The MQI-shaped call surface of a blocking ``Client``: one function per MQI verb.

``Client``/``Queue`` build requests from Pythonic arguments; the pymqi-compatible layer
needs the verbs themselves, with the application's own packed MQMD, option words, wait
interval, match options and buffer length passed through untouched, and the reply
(warnings and truncation included) handed back for the caller to map onto its
structures. These functions send the request frame over the client's conversation and
return the reply event; failures (MQCC_FAILED) are raised as typed ``MQError`` as
everywhere else in the client, except for ``mqget``, which returns a failed
``GetReply`` (MQRC_TRUNCATED_MSG_FAILED carries data and a descriptor) and raises only
for the plain ``Reply`` failures.
"""

from __future__ import annotations

from ferrymq.client import reconnect as R
from ferrymq.client import session as S
from ferrymq.client.errors import error_for
from ferrymq.client.sync import Client
from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet
from ferrymq.protocol import events as E


def max_msg_length(client: Client) -> int:
    """The largest message the conversation carries (negotiated at connect)."""
    return client._s.max_msg_length


def mqopen(client: Client, name: str, options: int, *, object_type: int = C.MQOT_Q, object_q_mgr_name: str = "",
           dynamic_q_name: str = "AMQ.*", alternate_user_id: str = "", selection_string: str = "") -> E.OpenReply:
    """MQOPEN. The reply names the object opened (the generated name for a model queue).

    Raises:
        MQError: the queue manager refused the open.
    """
    record = R.OpenRecord(name, options, object_q_mgr_name, dynamic_q_name, selection_string)
    reply: E.OpenReply = S.check(client._call(S.open_event(client._s.next_corr(), record, object_type,
                                                           alternate_user_id)))
    if object_type == C.MQOT_Q:
        client._track(reply.hobj, R.reopen_name(record, reply.object_name))
    return reply


def mqclose(client: Client, hobj: int, options: int = C.MQCO_NONE) -> None:
    """MQCLOSE (dropping any read-ahead state the client kept for the handle)."""
    current = client._current(hobj)
    try:
        S.check(client._call(E.Close(client._s.next_corr(), current, options)))
    finally:
        client._untrack(hobj)
    client._s.consumers.pop(current, None)


def mqput(client: Client, hobj: int, md: bytes, data: bytes, options: int,
          properties: PropertySet | None = None) -> E.PutReply:
    """MQPUT with a packed MQMD and the message handle's properties; the reply carries the
    descriptor as the queue manager completed it.

    Raises:
        MQError: the put failed; MQRC_DATA_LENGTH_ERROR (2010) for data over the
            connection's maximum message length, sent nowhere.
    """
    S.check_length(client._s, len(data))
    ev = E.Put(client._s.next_corr(), client._current(hobj), md, data, options, properties=properties or None)
    reply: E.PutReply = S.check(client._call(ev))
    return reply


def mqput1(client: Client, name: str, md: bytes, data: bytes, options: int, *, object_q_mgr_name: str = "",
           object_type: int = C.MQOT_Q, alternate_user_id: str = "",
           properties: PropertySet | None = None) -> E.PutReply:
    """MQPUT1: open, put and close in one call.

    Raises:
        MQError: the open or the put failed; 2010 as ``mqput``.
    """
    S.check_length(client._s, len(data))
    alternate = options & C.MQPMO_ALTERNATE_USER_AUTHORITY and C.MQOO_ALTERNATE_USER_AUTHORITY
    S.od_names(name, object_q_mgr_name, alternate_user_id, alternate)  # as the queue manager's MQPUT1 checks them
    ev = E.Put1(client._s.next_corr(), name, md, data, options, object_type, object_q_mgr_name, alternate_user_id,
                properties=properties or None)
    reply: E.PutReply = S.check(client._call(ev))
    return reply


def mqget(client: Client, hobj: int, md: bytes, options: int, wait_interval: int, match_options: int,
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
    S.check_length(client._s, buffer_length)
    wait = wait_interval if options & C.MQGMO_WAIT else 0
    ev = E.Get(client._s.next_corr(), client._current(hobj), md, options, wait, match_options, buffer_length, msg_token,
               msg_handle)
    reply = client._call(ev)
    if type(reply) is not E.GetReply:
        raise error_for(reply.comp, reply.reason, reply.detail)
    if reply.comp == C.MQCC_FAILED and reply.reason != C.MQRC_TRUNCATED_MSG_FAILED:
        raise error_for(reply.comp, reply.reason, reply.detail)
    return reply


def mqinq(client: Client, hobj: int, int_selectors: tuple[int, ...],
          char_selectors: tuple[int, ...]) -> E.InquireReply:
    """MQINQ: integer and character attribute values, in selector order.

    Raises:
        MQError: an unknown selector, or the object was not opened for inquire.
    """
    reply: E.InquireReply = S.check(client._call(E.Inquire(client._s.next_corr(), client._current(hobj), int_selectors,
                                                           char_selectors)))
    return reply


def mqset(client: Client, hobj: int, ints: dict[int, int], chars: dict[int, str]) -> None:
    """MQSET.

    Raises:
        MQError: the attribute cannot be set, or the object was not opened for set.
    """
    S.check(client._call(E.Set(client._s.next_corr(), client._current(hobj), ints, chars)))


def mqcmit(client: Client) -> None:
    """MQCMIT. Raises MQError (MQRC_BACKED_OUT) if the unit of work had to be backed out."""
    client.commit()


def mqback(client: Client) -> None:
    """MQBACK."""
    client.backout()
