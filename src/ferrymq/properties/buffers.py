"""MQMHBUF and MQBUFMH: a message handle's properties as an MQRFH2 in a buffer, and the
MQRFH2 property folders at the start of a buffer into a message handle.

MQMHBUF writes the properties whose names match ``Name`` (``%`` wildcard as MQINQMP) into
one MQRFH2 whose Format, Encoding and CodedCharSetId are what the descriptor said before,
and returns the descriptor fields that now describe the buffer (Format MQHRF2). MQBUFMH reads
the MQRFH2 chain a descriptor announces, sets its property folders' properties on the
handle and, with MQBMHO_DELETE_PROPERTIES, returns the buffer without them (headers left
empty dropped, the chain re-linked) and the descriptor fields that describe what is left.
Every refusal leaves the handle and the buffer as they were.

| call | refusal | reason |
|---|---|---|
| both | Options with bits other than the structure's options | MQRC_OPTIONS_ERROR |
| MQMHBUF | a name that breaks MQINQMP's rules | MQRC_PROPERTY_NAME_ERROR / _LENGTH_ERR |
| MQMHBUF | nothing matches | MQRC_PROPERTY_NOT_AVAILABLE |
| MQMHBUF | BufferLength below the MQRFH2's length (DataLength still given) | MQRC_PROPERTY_VALUE_TOO_BIG |
| MQMHBUF | a string UTF-8 cannot encode (a lone surrogate, which MQSETMP accepts) | MQRC_PROP_VALUE_NOT_CONVERTED |
| MQMHBUF | a name no folder holds (MQSETMP on a handle made with MQCMHO_NO_VALIDATION) | MQRC_PROPERTY_NAME_ERROR |
| MQBUFMH | a malformed MQRFH2 / a property folder that does not parse | MQRC_RFH_ERROR / MQRC_RFH_FORMAT_ERROR |
"""

from __future__ import annotations

from dataclasses import dataclass

from ferrymq.errors import MQError, failed
from ferrymq.mq import constants as C
from ferrymq.properties import rules
from ferrymq.properties.handle import MessageHandleState
from ferrymq.properties.model import PropertySet
from ferrymq.properties.rfh2map import absorb, build_folders, carriable
from ferrymq.wire.rfh2 import MQRFH2

_MHBO = C.MQMHBO_PROPERTIES_IN_MQRFH2 | C.MQMHBO_DELETE_PROPERTIES
_BMHO = C.MQBMHO_DELETE_PROPERTIES


@dataclass(frozen=True, slots=True)
class Buffer:
    """A buffer and the descriptor fields (Format, Encoding, CodedCharSetId) describing it."""

    data: bytes
    format: str
    encoding: int
    coded_char_set_id: int


class BufferTooSmall(MQError):
    """MQMHBUF: the MQRFH2 does not fit BufferLength; ``data_length`` is what it needs."""

    def __init__(self, data_length: int, detail: str) -> None:
        super().__init__(C.MQCC_FAILED, C.MQRC_PROPERTY_VALUE_TOO_BIG, detail)
        self.data_length = data_length


def handle_to_buffer(state: MessageHandleState, name: str, options: int, described: Buffer,
                     buffer_length: int) -> Buffer:
    """MQMHBUF. ``described`` holds the descriptor's Format, Encoding and CodedCharSetId
    before the call (``data`` unused).

    Raises:
        MQError: see the module table; BufferTooSmall for MQRC_PROPERTY_VALUE_TOO_BIG.
    """
    if options & ~_MHBO:
        raise failed(C.MQRC_OPTIONS_ERROR, f"MQMHBO Options 0x{options:X} are not valid")
    rules.check_length(name)
    if name not in rules.SYNONYMS:
        rules.check_name(name, wildcard=True)
    pattern = state.stored_name(name)
    chosen = PropertySet()
    for key, prop in state.props.typed_items():
        if rules.matches(pattern, key):
            chosen.put(key, prop)
    if not chosen:
        raise failed(C.MQRC_PROPERTY_NOT_AVAILABLE, f"no property matches {name!r}")
    if carriable(chosen)[1]:
        for key, prop in chosen.typed_items():
            rules.check_carried(key, prop)
    big = described.encoding & C.MQENC_INTEGER_MASK == C.MQENC_INTEGER_NORMAL
    header = MQRFH2(tuple(build_folders(chosen)), described.encoding, described.coded_char_set_id,
                    described.format.rstrip())
    raw = header.pack(big_endian=big)
    if len(raw) > buffer_length:
        raise BufferTooSmall(len(raw), f"the MQRFH2 takes {len(raw)} bytes, BufferLength is {buffer_length}")
    if options & C.MQMHBO_DELETE_PROPERTIES:
        for key in chosen:
            del state.props[key]
        state.forget_cursor()
    return Buffer(raw, C.MQFMT_RF_HEADER_2, described.encoding, described.coded_char_set_id)


def buffer_to_handle(state: MessageHandleState, options: int, buffer: Buffer) -> Buffer:
    """MQBUFMH: the buffer and descriptor fields after the call (unchanged without
    MQBMHO_DELETE_PROPERTIES, or when the buffer holds no MQRFH2).

    Raises:
        MQError: see the module table.
    """
    if options & ~_BMHO:
        raise failed(C.MQRC_OPTIONS_ERROR, f"MQBMHO Options 0x{options:X} are not valid")
    split = absorb(buffer.data, buffer.format, buffer.encoding, buffer.coded_char_set_id)
    if split is None:
        return buffer
    state.props.update_from(split.props)
    if not options & C.MQBMHO_DELETE_PROPERTIES:
        return buffer
    return Buffer(split.data, split.format, split.encoding, split.ccsid)
