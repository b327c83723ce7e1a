"""Distribution lists in the pymqi-compatible API: a ferrymq extension (docs/pymqi.md).

pymqi has the MQOD and MQPMO version 2 fields (RecsPresent, ObjectRecOffset/Ptr,
ResponseRecOffset/Ptr, PutMsgRecFields, PutMsgRecOffset/Ptr, the three counts) but no way
to hand it the records a C program points at, so it has no distribution lists. Here the
records travel as lists beside the structures:

    dl = pymqi.DistributionList(qmgr, [pymqi.OR(ObjectName=b"A"), pymqi.OR(ObjectName=b"B", ObjectQMgrName=b"QM2")])
    dl.open(CMQC.MQOO_OUTPUT)           # od.KnownDestCount ..., dl.response_records
    pmo = pymqi.PMO(Version=CMQC.MQPMO_VERSION_2, PutMsgRecFields=CMQC.MQPMRF_CORREL_ID)
    dl.put(b"data", pymqi.MD(), pmo, [pymqi.PMR(CorrelId=b"..."), pymqi.PMR(CorrelId=b"...")])
    dl.close()
    dl.put1(b"data", md, pmo, records)  # MQPUT1: open, put, close

The structures are laid out in bytes as a C program lays them (the records after the MQOD
or MQPMO, at ObjectRecOffset / PutMsgRecOffset, response records after them) and read by
the MQI's rules (ferrymq.wire.distrecords), so IBM's reasons come for what a program gets
wrong: 2154 a negative RecsPresent, 2155 an ObjectRecPtr (or fewer object records than
RecsPresent), 2156 a ResponseRecPtr, 2158 PutMsgRecFields, 2159 a PutMsgRecPtr or fewer
put-message records than RecsPresent. The counts come back in the OD or PMO, each
destination's CompCode and Reason in ``response_records`` (RR), and with MQPMRF_MSG_ID or
MQPMRF_CORREL_ID the identifiers each copy was put with in its PMR. As pymqi does for any
call, a completion code other than MQCC_OK raises MQMIError (MQRC_MULTIPLE_REASONS 2136
when the destinations differ) after all of that is filled in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ferrymq.client import distlist as D
from ferrymq.client import session as S
from ferrymq.errors import failed
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E
from ferrymq.pymqi.core import QueueManager, _data, _mqcall
from ferrymq.pymqi.errors import MQMIError, PYIFError
from ferrymq.pymqi.structs import MD, OD, PMO, as_bytes, text
from ferrymq.wire import mqdh
from ferrymq.wire.distrecords import od_records, pmo_records


class OR:
    """MQOR, an object record: one queue of the list."""

    def __init__(self, ObjectName: bytes | str = b"", ObjectQMgrName: bytes | str = b"") -> None:
        self.ObjectName = as_bytes(ObjectName)
        self.ObjectQMgrName = as_bytes(ObjectQMgrName)

    def pack(self) -> bytes:
        return mqdh.MQOR(text(self.ObjectName), text(self.ObjectQMgrName)).pack()


class RR:
    """MQRR, a response record: one destination's CompCode and Reason."""

    def __init__(self, CompCode: int = C.MQCC_OK, Reason: int = C.MQRC_NONE) -> None:
        self.CompCode, self.Reason = CompCode, Reason

    def __repr__(self) -> str:
        return f"RR(CompCode={self.CompCode}, Reason={self.Reason})"


class PMR:
    """MQPMR, a put-message record: the fields PutMsgRecFields names replace the MD's."""

    def __init__(self, MsgId: bytes = C.MQMI_NONE, CorrelId: bytes = C.MQMI_NONE,
                 GroupId: bytes = C.MQGI_NONE, Feedback: int = C.MQFB_NONE,
                 AccountingToken: bytes = C.MQACT_NONE) -> None:
        self.MsgId, self.CorrelId, self.GroupId = MsgId, CorrelId, GroupId
        self.Feedback, self.AccountingToken = Feedback, AccountingToken

    def record(self) -> mqdh.MQPMR:
        return mqdh.MQPMR(_id(self.MsgId, 24), _id(self.CorrelId, 24), _id(self.GroupId, 24), self.Feedback,
                          _id(self.AccountingToken, 32))


def _id(value: bytes, size: int) -> bytes:
    if len(value) > size:
        raise failed(C.MQRC_PUT_MSG_RECORDS_ERROR, f"a record's field of {len(value)} bytes where {size} belong")
    return bytes(value).ljust(size, b"\0")


def _splice_ptr(buf: bytearray, at: int, value: Any) -> None:
    # pymqi's pack leaves pointers 0: a program's own pointer is put where the MQI reads it
    if value:
        buf[at:at + 8] = int(value).to_bytes(8, "little")


class DistributionList:
    """An MQOPEN of several queues at once (see the module docstring)."""

    def __init__(self, qmgr: QueueManager, object_records: Sequence[OR], od: OD | None = None) -> None:
        self._qmgr = qmgr
        self.object_records = list(object_records)
        self.od = od if od is not None else OD(Version=C.MQOD_VERSION_2)
        self.response_records: list[RR] = []
        self._hobj = 0

    def _objects(self) -> list[tuple[str, str]]:
        """The object records as the MQI reads them from an MQOD with records after it.

        Raises:
            MQError: 2154, 2155, 2156 (ferrymq.wire.distrecords).
        """
        od = self.od
        if od.Version < C.MQOD_VERSION_2:
            raise PYIFError("a distribution list needs an OD of Version 2 or later")
        recs = od.RecsPresent or len(self.object_records)
        raw = bytearray(od.pack())
        length = len(raw)
        struct_at = {"RecsPresent": 168, "ObjectRecOffset": 184, "ResponseRecOffset": 188}
        # the response records' room first, the object records last: fewer records than
        # RecsPresent then run past the end, as they would past a C program's array
        rr_room = mqdh.RR_LENGTH * max(recs, 0)
        values = {"RecsPresent": recs,
                  "ObjectRecOffset": od.ObjectRecOffset or (0 if od.ObjectRecPtr else length + rr_room),
                  "ResponseRecOffset": od.ResponseRecOffset or (0 if od.ResponseRecPtr else length)}
        for name, at in struct_at.items():
            raw[at:at + 4] = int(values[name]).to_bytes(4, "little", signed=True)
        _splice_ptr(raw, 192, od.ObjectRecPtr)
        _splice_ptr(raw, 200, od.ResponseRecPtr)
        raw += bytes(rr_room)
        raw += b"".join(r.pack() for r in self.object_records)
        found = od_records(raw, big_endian=False)
        if not found.objects:
            raise failed(C.MQRC_RECS_PRESENT_ERROR, "a distribution list needs RecsPresent > 0 object records")
        return [(o.object_name, o.object_q_mgr_name) for o in found.objects]

    def open(self, open_opts: int = C.MQOO_OUTPUT | C.MQOO_FAIL_IF_QUIESCING) -> None:
        """MQOPEN of every object record's queue as one handle.

        Raises:
            PYIFError: already open. MQMIError: the call's completion code is not MQCC_OK.
        """
        if self._hobj:
            raise PYIFError("The DistributionList is already open")
        client = self._qmgr._require()
        with _mqcall():
            objects = self._objects()
            reply = client._call(E.OpenList(client._s.next_corr(), D.destinations(objects), open_opts,
                                            text(self.od.AlternateUserId)))
        self._answered(reply, self.od)
        self._hobj = reply.hobj if isinstance(reply, E.ListReply) else 0
        self._raise_unless_ok(reply)

    def put(self, msg: bytes | str, md: MD | None = None, pmo: PMO | None = None,
            put_msg_records: Sequence[PMR] | None = None) -> None:
        """MQPUT to every queue of the list; MD, PMO and records updated in place.

        Raises:
            PYIFError: not open. MQMIError: the call's completion code is not MQCC_OK.
        """
        if not self._hobj:
            raise PYIFError("The DistributionList is not open")
        self._put(self._hobj, [], msg, md, pmo, put_msg_records)

    def put1(self, msg: bytes | str, md: MD | None = None, pmo: PMO | None = None,
             put_msg_records: Sequence[PMR] | None = None) -> None:
        """MQPUT1 to the object records: open, put, close as one call (this list stays as it is).

        Raises:
            MQMIError: the call's completion code is not MQCC_OK.
        """
        with _mqcall():
            objects = self._objects()
        self._put(0, objects, msg, md, pmo, put_msg_records)

    def _put(self, hobj: int, objects: list[tuple[str, str]], msg: bytes | str, md: MD | None, pmo: PMO | None,
             records: Sequence[PMR] | None) -> None:
        client = self._qmgr._require()
        md = md if md is not None else MD()
        pmo = pmo if pmo is not None else PMO()
        records = list(records or ())
        data = _data(msg, md, self._qmgr)
        with _mqcall():
            fields, pmrs = self._records(pmo, records)
            S.check_length(client._s, len(data))
            ev = E.PutList(client._s.next_corr(), hobj, md.wire(), data, pmo.Options, pmo.Context, fields,
                           [(r.msg_id, r.correl_id, r.group_id, r.feedback, r.accounting_token) for r in pmrs],
                           D.destinations(objects) if objects else [], text(self.od.AlternateUserId))
            reply = client._call(ev)
        self._answered(reply, pmo)
        if isinstance(reply, E.ListReply):
            done = [(m, c) for comp, _, m, c in reply.responses if comp != C.MQCC_FAILED]
            if done:
                md.MsgId, md.CorrelId = done[0]
            for rec, (_, _, msg_id, correl_id) in zip(records, reply.responses, strict=False):
                if fields & C.MQPMRF_MSG_ID:
                    rec.MsgId = msg_id
                if fields & C.MQPMRF_CORREL_ID:
                    rec.CorrelId = correl_id
        self._raise_unless_ok(reply)

    @staticmethod
    def _records(pmo: PMO, records: list[PMR]) -> tuple[int, tuple[mqdh.MQPMR, ...]]:
        """The put-message records as the MQI reads them from an MQPMO with records after it.

        Raises:
            MQError: 2154, 2156, 2158, 2159 (ferrymq.wire.distrecords).
        """
        if pmo.Version < C.MQPMO_VERSION_2:
            return 0, ()
        fields = pmo.PutMsgRecFields
        recs = pmo.RecsPresent or len(records)
        raw = bytearray(pmo.pack())
        length = len(raw)
        rr_room = mqdh.RR_LENGTH * max(recs, 0)  # first, the records last (as ``_objects``)
        offsets = {128: recs,
                   136: pmo.PutMsgRecOffset or (0 if pmo.PutMsgRecPtr or not records else length + rr_room),
                   140: pmo.ResponseRecOffset or (0 if pmo.ResponseRecPtr else length)}
        for at, value in offsets.items():
            raw[at:at + 4] = int(value).to_bytes(4, "little", signed=True)
        _splice_ptr(raw, 144, pmo.PutMsgRecPtr)
        _splice_ptr(raw, 152, pmo.ResponseRecPtr)
        raw += bytes(rr_room)
        if not fields & ~mqdh.PMRF_ALL:
            raw += b"".join(r.record().pack(fields) for r in records)
        found = pmo_records(raw, big_endian=False)
        return found.fields, found.records

    def _answered(self, reply: E.ListReply | E.Reply, struc: OD | PMO) -> None:
        if isinstance(reply, E.ListReply):
            struc.KnownDestCount, struc.UnknownDestCount = reply.known, reply.unknown
            struc.InvalidDestCount = reply.invalid
            self.response_records = [RR(comp, reason) for comp, reason, _, _ in reply.responses]

    @staticmethod
    def _raise_unless_ok(reply: E.ListReply | E.Reply) -> None:
        if reply.comp != C.MQCC_OK:
            raise MQMIError(reply.comp, reply.reason, detail=reply.detail)

    def close(self) -> None:
        """MQCLOSE of the list and every queue in it.

        Raises:
            PYIFError: not open.
        """
        if not self._hobj:
            raise PYIFError("The DistributionList is not open")
        client = self._qmgr._require()
        hobj, self._hobj = self._hobj, 0
        with _mqcall():
            S.check(client._call(E.Close(client._s.next_corr(), hobj, C.MQCO_NONE)))

    def get_handle(self) -> int:
        return self._hobj
