"""Distribution lists for the Pythonic client: one handle that puts to several queues, each
perhaps on another queue manager (IBM MQ's MQOPEN with object records; engine.distlist).

``client.open_list([("A", ""), ("B", "QM2")])`` opens them (the names as ``(queue,
queue manager)`` pairs, or plain queue names); ``put`` sends one copy to each, with
per-destination fields from ``records`` (``PutRecord``: MsgId, CorrelId, GroupId, Feedback,
AccountingToken); ``client.put1_list`` does both and closes. Every call answers a
``ListResult``: the call's CompCode and Reason (MQRC_MULTIPLE_REASONS 2136 when the
destinations' differ), the three counts and one ``Response`` per destination. A call that
failed for every destination raises ``DistributionListError`` carrying that result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from ferrymq.client import mqi
from ferrymq.client import session as S
from ferrymq.client.errors import error_for
from ferrymq.client.steps import Call, Flow
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E
from ferrymq.protocol.body import MAX_LIST
from ferrymq.wire.mqod_names import check_od_names


class _Transaction(Protocol):
    @property
    def active(self) -> bool: ...


class _Client(mqi.BlockingConversation, Protocol):
    """What a DistributionList uses of its Client (a Protocol: the client modules import this one)."""

    @property
    def _tx(self) -> _Transaction: ...


class _AsyncClient(mqi.Conversation, Protocol):
    @property
    def _tx(self) -> _Transaction: ...

    async def run(self, flow: Flow[T]) -> T: ...

ZERO24, ZERO32 = bytes(24), bytes(32)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class PutRecord:
    """A put-message record (MQPMR): the fields given replace the message's for that destination."""

    msg_id: bytes | None = None
    correl_id: bytes | None = None
    group_id: bytes | None = None
    feedback: int | None = None
    accounting_token: bytes | None = None


@dataclass(frozen=True, slots=True)
class Response:
    """One destination's outcome (MQRR) and the identifiers its copy was put with."""

    comp: int
    reason: int
    msg_id: bytes = ZERO24
    correl_id: bytes = ZERO24

    @property
    def ok(self) -> bool:
        return self.comp != C.MQCC_FAILED


@dataclass(frozen=True, slots=True)
class ListResult:
    comp: int
    reason: int
    known: int  # local queues
    unknown: int  # queues on other queue managers
    invalid: int  # destinations that failed
    responses: tuple[Response, ...]


class DistributionListError(MQError):
    """A distribution-list call that failed for every destination; ``result`` says why each."""

    def __init__(self, result: ListResult, detail: str) -> None:
        super().__init__(result.comp, result.reason, detail)
        self.result = result


def destinations(names: Sequence[str | tuple[str, str]]) -> list[tuple[str, str]]:
    """(queue, queue manager) pairs from names or pairs, checked as MQOPEN checks an MQOR.

    Raises:
        MQError: 2154 MQRC_RECS_PRESENT_ERROR for none or more than the protocol carries;
            a name's own reason (2152 ...).
    """
    pairs = [(n, "") if isinstance(n, str) else (n[0], n[1]) for n in names]
    if not 0 < len(pairs) <= MAX_LIST:
        raise error_for(C.MQCC_FAILED, C.MQRC_RECS_PRESENT_ERROR,
                        f"a distribution list names 1..{MAX_LIST} queues, not {len(pairs)}")
    for queue, qmgr in pairs:
        check_od_names(queue, qmgr, "", 0)
    return pairs


def records_of(records: Sequence[PutRecord] | None) -> tuple[int, list[tuple[bytes, bytes, bytes, int, bytes]]]:
    """PutMsgRecFields (every field any record gives) and the records as the protocol carries them.

    Raises:
        MQError: 2159 MQRC_PUT_MSG_RECORDS_ERROR for an identifier of the wrong length or a
            record that is no PutRecord.
    """
    if not records:
        return C.MQPMRF_NONE, []
    fields = 0
    out = []
    for rec in records:
        if not isinstance(rec, PutRecord):
            raise error_for(C.MQCC_FAILED, C.MQRC_PUT_MSG_RECORDS_ERROR, f"{rec!r} is not a PutRecord")
        for flag, value, size in ((C.MQPMRF_MSG_ID, rec.msg_id, 24), (C.MQPMRF_CORREL_ID, rec.correl_id, 24),
                                  (C.MQPMRF_GROUP_ID, rec.group_id, 24),
                                  (C.MQPMRF_ACCOUNTING_TOKEN, rec.accounting_token, 32)):
            if value is not None:
                if len(value) != size:
                    raise error_for(C.MQCC_FAILED, C.MQRC_PUT_MSG_RECORDS_ERROR,
                                    f"a record's field of {len(value)} bytes where {size} belong")
                fields |= flag
        if rec.feedback is not None:
            fields |= C.MQPMRF_FEEDBACK
        out.append((rec.msg_id or ZERO24, rec.correl_id or ZERO24, rec.group_id or ZERO24, rec.feedback or 0,
                    rec.accounting_token or ZERO32))
    return fields, out


def result_of(reply: E.ListReply | E.Reply) -> ListResult:
    """The ListResult of an answer; raises what failed everywhere.

    Raises:
        DistributionListError: the call failed for every destination.
        MQError: the call was refused as a whole (a generic Reply).
    """
    if isinstance(reply, E.Reply):
        raise error_for(reply.comp, reply.reason, reply.detail)
    result = ListResult(reply.comp, reply.reason, reply.known, reply.unknown, reply.invalid,
                        tuple(Response(*r) for r in reply.responses))
    if reply.comp == C.MQCC_FAILED:
        raise DistributionListError(result, f"no destination of the distribution list succeeded ({reply.reason})")
    return result


def open_list(conv: mqi.Conversation, names: Sequence[str | tuple[str, str]],
              options: int) -> Flow[tuple[E.ListReply | E.Reply, list[tuple[str, str]]]]:
    """MQOPEN of a distribution list: the answer and the destinations as sent."""
    pairs = destinations(names)
    reply: E.ListReply | E.Reply = yield Call(E.OpenList(conv.session.next_corr(), pairs, options))
    return reply, pairs


def put_list(conv: mqi.Conversation, hobj: int, objects: list[tuple[str, str]], data: bytes | str,
             records: Sequence[PutRecord] | None, in_transaction: bool, kw: dict[str, Any]) -> Flow[ListResult]:
    """MQPUT through a list's handle ``hobj``, or MQPUT1 to ``objects`` (``hobj`` 0); ``kw``:
    ``Queue.put``'s descriptor keywords (``syncpoint`` defaults to ``in_transaction``).

    Raises:
        MQError: 2159 records (see ``records_of``), 2010 data over the maximum length; the
            call's refusal. DistributionListError: no destination took it.
        TypeError: a keyword ``Queue.put`` does not take here.
    """
    fields, recs = records_of(records)
    s = conv.session
    kw = dict(kw)
    syncpoint = kw.pop("syncpoint", None)
    md = kw.pop("md", None)
    options = kw.pop("options", 0)
    properties = kw.pop("properties", None)
    correl_id, msg_id = kw.pop("correl_id", None), kw.pop("msg_id", None)
    spec = tuple(kw.pop(name, default) for name, default in _SPEC)
    if kw:
        raise TypeError(f"unexpected keywords {sorted(kw)}")
    ev, _ = S.put_event(s, s.next_corr(), hobj, data, spec, correl_id, msg_id, properties,
                        in_transaction if syncpoint is None else syncpoint, False, md, options)
    assert isinstance(ev, E.Put)
    reply = yield Call(E.PutList(ev.corr, hobj, ev.md, ev.data, ev.options, 0, fields, recs, objects,
                                 properties=ev.properties))
    return result_of(reply)


def close_list(conv: mqi.Conversation, hobj: int) -> Flow[None]:
    S.check((yield Call(E.Close(conv.session.next_corr(), hobj, C.MQCO_NONE))))


_SPEC = (("priority", None), ("persistent", None), ("expiry", None), ("reply_to_q", ""), ("reply_to_q_mgr", ""),
         ("format", None), ("msg_type", None), ("report", 0), ("feedback", 0))


class DistributionList:
    """An open distribution list (``Client.open_list``): ``put`` sends a copy to each queue;
    ``opened`` holds each queue's open outcome."""

    def __init__(self, client: _Client, reply: E.ListReply | E.Reply, names: list[tuple[str, str]]) -> None:
        self.opened = result_of(reply)  # raises when no queue opened
        assert isinstance(reply, E.ListReply)
        self.client, self.hobj, self.destinations, self.closed = client, reply.hobj, names, False

    def put(self, data: bytes | str, *, records: Sequence[PutRecord] | None = None, **kw: Any) -> ListResult:
        """MQPUT to every queue of the list; ``records``: one PutRecord per destination, in
        order (fewer: the rest use the message's own fields); other keywords as ``Queue.put``.

        Raises:
            DistributionListError: no destination took it; MQError: the call refused as a whole.
        """
        c = self.client
        return c.run(put_list(c, self.hobj, [], data, records, c._tx.active, kw))

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.client.run(close_list(self.client, self.hobj))

    def __enter__(self) -> DistributionList:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncDistributionList:
    """``DistributionList`` for an AsyncClient."""

    def __init__(self, client: _AsyncClient, reply: E.ListReply | E.Reply, names: list[tuple[str, str]]) -> None:
        self.opened = result_of(reply)
        assert isinstance(reply, E.ListReply)
        self.client, self.hobj, self.destinations, self.closed = client, reply.hobj, names, False

    async def put(self, data: bytes | str, *, records: Sequence[PutRecord] | None = None, **kw: Any) -> ListResult:
        c = self.client
        return await c.run(put_list(c, self.hobj, [], data, records, c._tx.active, kw))

    async def close(self) -> None:
        if not self.closed:
            self.closed = True
            await self.client.run(close_list(self.client, self.hobj))

    async def __aenter__(self) -> AsyncDistributionList:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
