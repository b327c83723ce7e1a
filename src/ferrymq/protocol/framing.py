"""GPacket framing as the client protocol uses it (cluster-protocol.md §1).

| off | len | field         | client protocol use                                  |
|----:|----:|---------------|------------------------------------------------------|
|   0 |   2 | version       | 350                                                  |
|   2 |   2 | type          | 1100..1199 (ferrymq.protocol.codec)                  |
|   4 |   4 | size          | whole packet                                         |
|   8 |   4 | magic         | 0x7FFFE3C2                                           |
|  12 |   4 | propsByteSize | 0 unless the frame carries message properties        |
|  16 |   8 | timestamp     | 0 (informational; the sans-IO machines have no clock)|
|  24 |   8 | sequence      | the correlation id                                   |
|  32 |   4 | bitFlags      | A (bit 0) = a reply is expected                      |

The header is packed here with one precompiled struct because it is written once per
message on the hot path; its layout is the one ferrymq.wire.gpacket owns.
"""

from __future__ import annotations

import struct
from typing import Any

from ferrymq.wire import gpacket

HEADER = struct.Struct(">hhiiiqqI")
assert HEADER.size == gpacket.HEADER_SIZE

PropValue = bool | int | float | str


def encode_properties(props: dict[str, PropValue]) -> bytes:
    """The GPacket properties section for message properties.

    Python values map to GPacket types: bool → BOOLEAN, int → LONG, float → DOUBLE,
    str → STRING.

    Raises:
        ValueError: an empty key, an int outside 64 bits, or an unsupported value type.
    """
    return gpacket.encode_properties(props)


def packet_parts(ptype: int, flags: int, corr: int, parts: list[bytes], props: dict[str, Any] | None) -> list[bytes]:
    """``pack_packet``'s pieces, not joined: a frame of megabytes goes to the socket as
    they are (one vectored write) instead of being copied into one buffer first."""
    psec = encode_properties(props) if props is not None else b""
    size = gpacket.HEADER_SIZE + len(psec) + sum(map(len, parts))
    head = HEADER.pack(gpacket.VERSION, ptype, size, gpacket.MAGIC, len(psec), 0, corr, flags)
    return [head, psec, *parts] if psec else [head, *parts]


def pack_packet(ptype: int, flags: int, corr: int, parts: list[bytes], props: dict[str, Any] | None) -> bytes:
    """One packet's bytes: header, optional properties section, payload parts."""
    psec = encode_properties(props) if props is not None else b""
    size = gpacket.HEADER_SIZE + len(psec) + sum(map(len, parts))
    head = HEADER.pack(gpacket.VERSION, ptype, size, gpacket.MAGIC, len(psec), 0, corr, flags)
    if psec:
        return b"".join([head, psec, *parts])
    return b"".join([head, *parts])


