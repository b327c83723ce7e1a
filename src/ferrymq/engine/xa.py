"""Prepared units of work resolved by a global transaction id (XA-like two-phase commit).

A connection ``prepare``s its open unit of work under an XID: the journal records the
prepare, the unit leaves the connection (which may disconnect or die) and waits in
``in_doubt``. Any connection then commits or backs it out by XID (``resolve``). A
restart rebuilds every unit the journal still holds as prepared (``restore``): its puts
stay invisible and its gets stay out of their queues until the XID is resolved. This is
what lets the Spark driver commit, atomically and once, what its executors staged.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ferrymq.engine.message import KIND_MESSAGE, Message, decode_message
from ferrymq.engine.session import UnitOfWork
from ferrymq.errors import DecodeError, failed
from ferrymq.mq import constants as C

if TYPE_CHECKING:
    from ferrymq.engine.qmgr import QueueManager
    from ferrymq.engine.state import EngineState
    from ferrymq.store.journal import PreparedTx

log = logging.getLogger("ferrymq.engine")

MAX_XID = 128  # bytes: XA's gtrid (64) plus bqual (64)


def _check_xid(xid: bytes) -> None:
    if not 1 <= len(xid) <= MAX_XID:
        raise failed(C.MQRC_OPTIONS_ERROR, f"XID must be 1..{MAX_XID} bytes, got {len(xid)}")


def prepare(qm: EngineState, hconn: int, xid: bytes) -> int:
    """Phase one: the connection's unit of work becomes in-doubt under ``xid``.

    Returns how many operations it holds (0: there was nothing to do; the XID is still
    registered so that resolving it succeeds). Durable before the reply.

    Raises:
        MQError: MQRC_OPTIONS_ERROR for a bad XID; MQRC_UOW_NOT_AVAILABLE when ``xid``
            is already in doubt (nothing changes).
    """
    _check_xid(xid)
    conn = qm.conn(hconn)
    if xid in qm.in_doubt:
        raise failed(C.MQRC_UOW_NOT_AVAILABLE, f"XID {xid.hex()} is already prepared and in doubt")
    uow, conn.uow = conn.uow, None
    if uow is None:
        uow = UnitOfWork(qm.new_txid())
    if uow.journaled:
        qm.journal.prepare(uow.txid, xid)
        qm.need_sync()
    qm.in_doubt[xid] = uow
    return len(uow)


def resolve(qm: QueueManager, hconn: int, xid: bytes, commit: bool) -> bool:
    """Phase two by XID from any connection: commit or back out; False if not in doubt.

    Unknown XIDs are not an error: a coordinator that crashed after resolving asks again,
    and that must be harmless (idempotent resolution).
    """
    _check_xid(xid)
    conn = qm.conn(hconn)
    uow = qm.in_doubt.pop(xid, None)
    if uow is None:
        return False
    # The engine's commit/backout work on a connection's unit: lend this one for the call.
    own, conn.uow = conn.uow, uow
    try:
        if commit:
            qm.commit(hconn)
        else:
            qm.backout(hconn)
    finally:
        conn.uow = own
    return True


def restore(qm: EngineState, prepared: list[PreparedTx]) -> None:
    """Recovery: rebuild each prepared transaction as an in-doubt unit of work."""
    if not prepared:
        return
    by_record: dict[int, tuple[str, Message]] = {}
    for q in qm.objects.queues.values():
        if q.is_local:
            for msg in q.messages.by_seq.values():
                if msg.record_id:
                    by_record[msg.record_id] = (q.name, msg)
    fifo_of = {name: q.fifo for name, q in qm.objects.queues.items()}
    for tx in prepared:
        uow = UnitOfWork(tx.txid, journaled=True)
        for rec in tx.adds:
            if rec.kind != KIND_MESSAGE:
                continue
            try:
                msg = decode_message(rec.payload, fifo_of)
            except DecodeError as exc:
                log.error("event=unreadable_prepared_message record_id=%d error=%s", rec.record_id, exc)
                continue
            target = qm.objects.find(msg.queue)
            if target is None or not target.is_local:
                log.error("event=orphan_prepared_message queue=%s xid=%s", msg.queue, tx.xid.hex())
                continue
            msg.record_id = rec.record_id
            target.next_seq = max(target.next_seq, msg.seq + 1)
            target.messages.uncommitted += 1
            uow.puts.append((target, msg))
        for rid in tx.deletes:
            found = by_record.get(rid)
            if found is None:
                continue
            q = qm.objects.require(found[0])
            record = found[1].fetch()  # its record changes with this unit's end
            q.messages.remove(found[1])
            found[1].restore(record)
            q.messages.uncommitted += 1
            uow.gets.append((q, found[1]))
        qm.in_doubt[tx.xid] = uow
        log.warning("event=in_doubt_unit xid=%s puts=%d gets=%d", tx.xid.hex(), len(uow.puts), len(uow.gets))
