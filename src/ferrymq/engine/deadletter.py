"""Building a dead-letter message: an MQDLH in front of the original data.

IBM's rule for a queue manager putting to the DLQ: the MQMD is the original's except
Encoding/CodedCharSetId (those used for the MQDLH fields) and Format "MQDEAD  "; the
MQDLH carries the original Encoding, CCSID and Format, the reason, the intended
destination, and PutApplType MQAT_QMGR with the queue manager's name.
"""

from __future__ import annotations

from ferrymq.mq import constants as C
from ferrymq.wire.mqdlh import MQDLH
from ferrymq.wire.mqmd import MQMD


def dead_letter(qmgr_name: str, ccsid: int, md: MQMD, data: bytes, reason: int, dest_q: str, put_date: str,
                put_time: str) -> tuple[MQMD, bytes]:
    """The descriptor and body of ``md``/``data`` as they go onto the dead-letter queue."""
    dlh = MQDLH(
        reason=reason,
        dest_q_name=dest_q,
        dest_q_mgr_name=qmgr_name,
        encoding=md.encoding,
        coded_char_set_id=md.coded_char_set_id,
        format=md.format,
        put_appl_type=C.MQAT_QMGR,
        put_appl_name=qmgr_name[:28],
        put_date=put_date,
        put_time=put_time,
    )
    out = md.replace(encoding=C.MQENC_NATIVE, coded_char_set_id=ccsid, format=C.MQFMT_DEAD_LETTER_HEADER.rstrip())
    return out, dlh.pack() + data
