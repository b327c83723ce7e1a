"""MQGMO_CONVERT: the message a getter receives in the CodedCharSetId and Encoding its
MQMD asks for (the converter is ferrymq.wire.convert), with IBM's rules for when nothing
is converted and for a buffer the converted message does not fit.

- Nothing to do (the MQMD returned says what the message is in, the get completes as
  without the option): the message is already in the CCSID and Encoding asked for, it has
  no data, or the buffer is 0 bytes. MQCCSI_Q_MGR (0), asked for or stored, is the queue
  manager's CCSID.
- A message too long for the buffer before conversion has been dealt with by the get
  already: without MQGMO_ACCEPT_TRUNCATED_MSG it stays on the queue, unconverted (2080).
- Converted, it fits: MQCC_OK. It does not: without MQGMO_ACCEPT_TRUNCATED_MSG the message
  (already taken) comes back unconverted with MQRC_CONVERTED_MSG_TOO_BIG (2120); with it,
  converted and cut to the buffer (never inside a character) with
  MQRC_TRUNCATED_MSG_ACCEPTED (2079), DataLength the converted length.
- The conversion fails: the message comes back as far as it was converted (the fields that
  describe each part say what it is in), with the converter's warning (2110, 2111, 2112,
  2115, 2116, 2119, 2190), cut to the buffer if it was longer.

ferrymq converts the whole message and then cuts it, where IBM MQ cuts first and converts
what is left: a message whose converted form fits the buffer comes back whole.
"""

from __future__ import annotations

from dataclasses import dataclass

from ferrymq.mq import constants as C
from ferrymq.wire.convert import convert
from ferrymq.wire.mqmd import MQMD


@dataclass(frozen=True, slots=True)
class OnGet:
    """What the getter receives: the descriptor, the data (whole: ``returned`` of its
    bytes go back) and the reason (MQRC_NONE or a warning)."""

    md: MQMD
    data: bytes
    returned: int
    reason: int


def on_get(want: MQMD, md: MQMD, data: bytes, buffer_length: int, accept_truncated: bool,
           qmgr_ccsid: int) -> OnGet | None:
    """The message of descriptor ``md`` and ``data`` converted as the getter's MQMD
    ``want`` asks (see the module docstring); None when nothing is to be done."""
    target = want.coded_char_set_id or qmgr_ccsid
    source = md.coded_char_set_id or qmgr_ccsid
    if not data or buffer_length <= 0 or (md.encoding == want.encoding and source == target):
        return None
    conv = convert(data, md.format, md.encoding, source, want.encoding, target, qmgr_ccsid=qmgr_ccsid)
    if conv.reason:
        out = md if conv.ccsid == source and conv.encoding == md.encoding else md.replace(
            encoding=conv.encoding, coded_char_set_id=conv.ccsid)
        return OnGet(out, conv.data, min(len(conv.data), buffer_length), conv.reason)
    converted = md.replace(encoding=conv.encoding, coded_char_set_id=conv.ccsid)
    if len(conv.data) <= buffer_length:
        return OnGet(converted, conv.data, len(conv.data), C.MQRC_NONE)
    if not accept_truncated:
        return OnGet(md, data, len(data), C.MQRC_CONVERTED_MSG_TOO_BIG)
    return OnGet(converted, conv.data, conv.fitting(buffer_length), C.MQRC_TRUNCATED_MSG_ACCEPTED)
