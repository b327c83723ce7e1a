"""Publish/subscribe on the client side, once for both clients: the MQSUB request and its
checks, the options the Pythonic ``publish``/``subscribe`` stand for, and their flows.

A topic is opened like a queue (MQOPEN of an MQOT_TOPIC with its string in ObjectString)
and published to with MQPUT; the Pythonic clients keep one output handle per topic
(``TopicHandles``) so that ``publish`` opens a topic once. ``subscribe`` makes a managed
subscription (MQSO_MANAGED: the queue manager makes the queue its publications arrive
on and returns its handle); a durable one is created or resumed by name. Both are
re-made after a reconnect (ferrymq.client.reconnect). The MQSUB, MQSUBRQ and topic-open
flows are MQI verbs (ferrymq.client.mqi).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

from ferrymq.client import reconnect as R
from ferrymq.client import session as S
from ferrymq.client.errors import error_for
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E

WILDCARDS = {"topic": C.MQSO_WILDCARD_TOPIC, "char": C.MQSO_WILDCARD_CHAR}
"""``subscribe(wildcards=...)``: "topic" — whole levels, ``#`` and ``+`` (MQSO_WILDCARD_TOPIC);
"char" — characters, ``*`` and ``?`` (MQSO_WILDCARD_CHAR, IBM's default for MQSUB)."""

TOPIC_OPEN = C.MQOO_OUTPUT | C.MQOO_FAIL_IF_QUIESCING
"""How ``publish`` opens a topic."""

TOPIC_HANDLES = 256
"""Topics a client keeps open for ``publish``; the least recently used is closed beyond."""

# An MQCHARV field over MQ_TOPIC_STR_LENGTH (10240, IBM's bound for each of these) is
# refused here with the reason the queue manager gives for that field: the frame would not
# carry it.
_CHARV_REASONS = (("object_string", C.MQRC_TOPIC_STRING_ERROR), ("sub_name", C.MQRC_SUB_NAME_ERROR),
                  ("sub_user_data", C.MQRC_SUB_USER_DATA_ERROR), ("selection_string", C.MQRC_SELECTION_STRING_ERROR))


def sub_event(corr: int, sub: E.Sub) -> E.Sub:
    """The SUB frame for an MQSUB (``sub`` with the correlation id ``corr``).

    Raises:
        MQError: an MQCHARV field longer than 10240 characters (2425 for the topic string,
            2440 SubName, 2431 SubUserData, 2519 SelectionString); 2424 (MQRC_SD_ERROR)
            for a SubCorrelId or PubAccountingToken of the wrong length; a name longer
            than its MQSD field, with the queue manager's reason.
    """
    for attr, reason in _CHARV_REASONS:
        S.topic_string(getattr(sub, attr), reason)
    if len(sub.sub_correl_id) != 24 or len(sub.pub_accounting_token) != 32:
        raise error_for(C.MQCC_FAILED, C.MQRC_SD_ERROR, "SubCorrelId is 24 bytes and PubAccountingToken 32")
    if len(sub.pub_appl_identity_data) > C.MQ_APPL_IDENTITY_DATA_LENGTH:
        raise error_for(C.MQCC_FAILED, C.MQRC_SD_ERROR,
                        f"PubApplIdentityData holds {C.MQ_APPL_IDENTITY_DATA_LENGTH} characters")
    S.od_names(sub.object_name, "", sub.alternate_user_id, sub.options & C.MQSO_ALTERNATE_USER_AUTHORITY
               and C.MQOO_ALTERNATE_USER_AUTHORITY)
    sub.corr = corr
    return sub


def sub_options(*, durable: bool, wildcards: str, new_only: bool) -> int:
    """The MQSO options of a Pythonic ``subscribe``: a managed subscription, created (a
    durable one resumed when it exists), with the wildcard scheme asked for.

    Raises:
        ValueError: ``wildcards`` is not "topic" or "char".
    """
    scheme = WILDCARDS.get(wildcards)
    if scheme is None:
        raise ValueError(f"wildcards must be one of {sorted(WILDCARDS)}, not {wildcards!r}")
    options = C.MQSO_CREATE | C.MQSO_MANAGED | C.MQSO_FAIL_IF_QUIESCING | scheme
    if durable:
        options |= C.MQSO_DURABLE | C.MQSO_RESUME
    if new_only:
        options |= C.MQSO_NEW_PUBLICATIONS_ONLY
    return options


def subscription_request(topic: str, *, durable: bool, name: str | None, selector: str | None, wildcards: str,
                         new_only: bool) -> E.Sub:
    """The MQSUB a Pythonic ``subscribe`` makes (sent by ``subscribe``)."""
    return E.Sub(0, sub_options(durable=durable, wildcards=wildcards, new_only=new_only), object_string=topic,
                 sub_name=name or "", selection_string=selector or "")


def managed_queue_record(queue_name: str) -> R.OpenRecord:
    """The record of a managed subscription's queue (made again by its subscription)."""
    return R.OpenRecord(queue_name, 0, "", "", managed=True)


def subscription_record(sub: E.Sub) -> R.OpenRecord:
    """The record that makes a subscription again after a reconnect."""
    return R.OpenRecord(sub.sub_name, 0, "", "", object_string=sub.object_string, sub=sub)


def close_options(durable: bool, remove: bool | None) -> int:
    """MQCLOSE's options for a subscription: a non-durable one always ends; a durable one
    is kept unless ``remove``."""
    return C.MQCO_REMOVE_SUB if remove or (remove is None and not durable) else C.MQCO_NONE


Q = TypeVar("Q")


class TopicHandles(Generic[Q]):
    """The topics ``publish`` keeps open, least recently used first (at most TOPIC_HANDLES)."""

    __slots__ = ("_open",)

    def __init__(self) -> None:
        self._open: OrderedDict[str, Q] = OrderedDict()

    def get(self, topic: str) -> Q | None:
        q = self._open.get(topic)
        if q is not None:
            self._open.move_to_end(topic)
        return q

    def add(self, topic: str, q: Q) -> Q | None:
        """Keep ``q``; the handle to close when that makes too many (else None)."""
        self._open[topic] = q
        if len(self._open) > TOPIC_HANDLES:
            return self._open.popitem(last=False)[1]
        return None

    def drop(self, topic: str) -> None:
        self._open.pop(topic, None)
