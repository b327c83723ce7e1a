"""Events taken apart with pymqi's structures, as a pymqi monitoring program reads them on
IBM MQ (shared by the event tests)."""

from __future__ import annotations

import struct

import pytest

import ferrymq.client as fc
import ferrymq.pymqi as pymqi
from ferrymq.pymqi import CMQC, CMQCFC


async def drain_events(qmgr: str, conn_name: str, queue: str = "SYSTEM.ADMIN.CHANNEL.EVENT"
                       ) -> list[tuple[pymqi.CFH, dict[int, object]]]:
    """Every event on ``queue`` taken off it (ferrymq's async client) and apart (``decode_event``)."""
    out = []
    async with await fc.connect_async(qmgr, conn_name) as c:
        q = await c.open(queue)
        while True:
            try:
                msg = await q.get(wait=0)
            except fc.NoMessageAvailable:
                return out
            out.append(decode_event(msg.data))


def decode_event(message: bytes) -> tuple[pymqi.CFH, dict[int, object]]:
    """An event message taken apart with pymqi's structures (PCFExecute.unpack refuses a
    header whose CompCode is not MQCC_OK, and an event's is MQCC_WARNING, on IBM MQ too)."""
    header = pymqi.CFH()
    header.unpack(message[:CMQCFC.MQCFH_STRUC_LENGTH])
    params: dict[int, object] = {}
    cursor = CMQCFC.MQCFH_STRUC_LENGTH
    for _ in range(header.ParameterCount):
        kind, length = struct.unpack_from("<2i", message, cursor)
        if kind == CMQCFC.MQCFT_STRING:
            fixed = pymqi.CFST()
            fixed.unpack(message[cursor:cursor + CMQCFC.MQCFST_STRUC_LENGTH_FIXED])
            text = pymqi.CFST(StringLength=fixed.StringLength)
            text.unpack(message[cursor:cursor + length])
            params[text.Parameter] = text.String[:fixed.StringLength]
        elif kind == CMQCFC.MQCFT_INTEGER:
            number = pymqi.CFIN()
            number.unpack(message[cursor:cursor + length])
            params[number.Parameter] = number.Value
        cursor += length
    return header, params


def checked_event(md: pymqi.MD, message: bytes) -> tuple[pymqi.CFH, dict[int, object]]:
    """An event message got from an event queue, its MQMD checked as IBM's event message
    format has it, then taken apart as a pymqi monitor does (``decode_event``)."""
    assert md.Format == CMQC.MQFMT_EVENT and md.MsgType == CMQC.MQMT_DATAGRAM
    assert md.PutApplType == CMQC.MQAT_QMGR
    with pytest.raises(pymqi.MQMIError) as ei:  # as pymqi does with any event
        pymqi.PCFExecute.unpack(message)
    assert ei.value.comp == CMQC.MQCC_WARNING
    return decode_event(message)
