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

from ferrymq.engine.message import KIND_MESSAGE, KIND_MESSAGE_DATA, Message, decode_message
from ferrymq.engine.session import Connection, UnitOfWork
from ferrymq.engine.state import EngineState
from ferrymq.engine.units import Units
from ferrymq.errors import DecodeError, failed
from ferrymq.mq import constants as C
from ferrymq.store.journal import PreparedTx

log = logging.getLogger("ferrymq.engine")

MAX_XID = 128  # bytes: XA's gtrid (64) plus bqual (64)


def _check_xid(xid: bytes) -> None:
    if not 1 <= len(xid) <= MAX_XID:
        raise failed(C.MQRC_OPTIONS_ERROR, f"XID must be 1..{MAX_XID} bytes, got {len(xid)}")


class InDoubt:
    """The prepared units of one queue manager, by XID (see the module docstring)."""

    def __init__(self, state: EngineState, units: Units) -> None:
        self.objects, self.journal, self.staging = state.objects, state.journal, state.staging
        self.units = units
        self.units_by_xid: dict[bytes, UnitOfWork] = {}

    def prepare(self, conn: Connection, xid: bytes) -> int:
        """Phase one: the connection's unit of work becomes in-doubt under ``xid``.

        Returns how many operations it holds (0: there was nothing to do; the XID is still
        registered so that resolving it succeeds). Durable before the reply.

        Raises:
            MQError: MQRC_OPTIONS_ERROR for a bad XID; MQRC_UOW_NOT_AVAILABLE when ``xid``
                is already in doubt (nothing changes).
        """
        _check_xid(xid)
        if xid in self.units_by_xid:
            raise failed(C.MQRC_UOW_NOT_AVAILABLE, f"XID {xid.hex()} is already prepared and in doubt")
        uow, conn.uow = conn.uow, None
        if uow is None:
            uow = UnitOfWork(self.staging.new_txid())
        if uow.ahead or uow.drops:  # a prepared unit's gets are all in its journal transaction
            self.units.settle(uow)
        if uow.journaled:
            self.journal.prepare(uow.txid, xid)
            self.staging.need_sync()
        self.units_by_xid[xid] = uow
        return len(uow)


    def resolve(self, conn: Connection, xid: bytes, commit: bool) -> bool:
        """Phase two by XID from any connection: commit or back out; False if not in doubt.

        Unknown XIDs are not an error: a coordinator that crashed after resolving asks again,
        and that must be harmless (idempotent resolution).
        """
        _check_xid(xid)
        uow = self.units_by_xid.pop(xid, None)
        if uow is None:
            return False
        if commit:
            self.units.commit_unit(uow)
        else:  # a get marked skip-backout stays in a unit of the connection that resolves
            self.units.backout_unit(conn, uow)
        return True


    def restore(self, prepared: list[PreparedTx]) -> None:
        """Recovery: rebuild each prepared transaction as an in-doubt unit of work."""
        if not prepared:
            return
        by_record: dict[int, tuple[str, Message]] = {}
        for q in self.objects.queues.values():
            if q.is_local:
                for msg in q.messages.by_seq.values():
                    if msg.record_id:
                        by_record[msg.record_id] = (q.name, msg)
        fifo_of = {name: q.fifo for name, q in self.objects.queues.items()}
        staging = self.units.staging
        for tx in prepared:
            uow = UnitOfWork(tx.txid, journaled=True)
            shared = {rec.record_id: rec.payload for rec in tx.adds if rec.kind == KIND_MESSAGE_DATA}
            for rec in tx.adds:
                if rec.kind != KIND_MESSAGE:
                    continue
                try:
                    msg = decode_message(rec.payload, fifo_of)
                    if msg.data_record:
                        if msg.data_record not in shared:
                            raise DecodeError("message record", 0, f"data record {msg.data_record} is not in its unit")
                        msg.share_data(msg.data_record, shared[msg.data_record])
                except DecodeError as exc:
                    log.error("event=unreadable_prepared_message record_id=%d error=%s", rec.record_id, exc)
                    continue
                target = self.objects.find(msg.queue)
                if target is None or not target.is_local:
                    log.error("event=orphan_prepared_message queue=%s xid=%s", msg.queue, tx.xid.hex())
                    continue
                msg.record_id = rec.record_id
                staging.count_on(msg)  # as when it was journaled
                target.next_seq = max(target.next_seq, msg.seq + 1)
                target.messages.uncommitted += 1
                uow.puts.append((target, msg))
            for rid in tx.deletes:
                found = by_record.get(rid)
                if found is None:
                    continue
                q = self.objects.require(found[0])
                record = found[1].fetch()  # its record changes with this unit's end
                q.messages.remove(found[1])
                found[1].restore(record)
                q.messages.uncommitted += 1
                uow.gets.append((q, found[1]))
            self.units_by_xid[tx.xid] = uow
            log.warning("event=in_doubt_unit xid=%s puts=%d gets=%d", tx.xid.hex(), len(uow.puts), len(uow.gets))
