"""MQXQH, the transmission-queue header (428 bytes, StrucId "XQH ", Version 1, format "MQXMIT").

| Off | Len | Field                        | Default            |
|----:|----:|------------------------------|--------------------|
|   0 |   4 | StrucId "XQH "               |                    |
|   4 |   4 | Version                      | 1                  |
|   8 |  48 | RemoteQName                  | NULs               |
|  56 |  48 | RemoteQMgrName               | NULs               |
| 104 | 324 | MsgDesc (embedded MQMD v1)   | MQMD1_DEFAULT      |

Embedded MQMD offsets = MQMD offset + 104 (MsgId at 152, Format at 136). The embedded MD is
always version 1: when the original message had version-2 fields, an MQMDE follows the
MQXQH and the embedded Format is "MQHMDE" (the MQMDE's Format holds the original format).
The whole header is in the writer's encoding (IBM: the queue manager's native encoding).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.wire.layout import Layout, decode_chars
from ferrymq.wire.mqmd import FORMAT_OFFSET, MQMD, detect_big_endian
from ferrymq.wire.mqmde import FORMAT as MDE_FORMAT
from ferrymq.wire.mqmde import MQMDE, merge_mde, split_md

LAYOUT = Layout.of(
    "MQXQH",
    [
        ("struc_id", "f", 4),
        ("version", "l", 4),
        ("remote_q_name", "c", 48),
        ("remote_q_mgr_name", "c", 48),
    ],
)
MSG_DESC_OFFSET = LAYOUT.size
assert MSG_DESC_OFFSET + C.MQMD_LENGTH_1 == C.MQXQH_LENGTH_1

FORMAT = C.MQFMT_XMIT_Q_HEADER.rstrip()
# MQENC_NORMAL (273) and MQENC_REVERSED (546): composed here because constants.py lacks them.
_ENC_BIG = C.MQENC_INTEGER_NORMAL | C.MQENC_DECIMAL_NORMAL | C.MQENC_FLOAT_IEEE_NORMAL
_ENC_LITTLE = C.MQENC_INTEGER_REVERSED | C.MQENC_DECIMAL_REVERSED | C.MQENC_FLOAT_IEEE_REVERSED


@dataclass(frozen=True, slots=True)
class MQXQH:
    """A transmission-queue header; ``msg_desc`` is packed as a version-1 MQMD."""

    remote_q_name: str = ""
    remote_q_mgr_name: str = ""
    msg_desc: MQMD = field(default_factory=MQMD)

    def pack(self, *, big_endian: bool = False) -> bytes:
        head = LAYOUT.pack(
            [C.MQXQH_STRUC_ID, C.MQXQH_VERSION_1, self.remote_q_name, self.remote_q_mgr_name], big_endian
        )
        return head + self.msg_desc.pack(big_endian=big_endian, version=C.MQMD_VERSION_1)

    @classmethod
    def unpack_from(
        cls, buf: bytes | bytearray | memoryview, offset: int = 0, *, big_endian: bool | None = None
    ) -> MQXQH:
        """Decode an MQXQH at ``offset``; the byte order is detected from Version when not given.

        Raises:
            DecodeError: wrong StrucId or Version, an embedded MQMD that is not a valid
                version-1 MD, or too few bytes.
        """
        LAYOUT.check_struc_id(buf, offset, C.MQXQH_STRUC_ID)
        if len(buf) - offset < C.MQXQH_LENGTH_1:
            raise DecodeError("MQXQH", offset, f"needs {C.MQXQH_LENGTH_1} bytes, {max(0, len(buf) - offset)} present")
        if big_endian is None:
            big_endian = detect_big_endian(buf, offset, "MQXQH", (C.MQXQH_VERSION_1,))
        values = LAYOUT.unpack(buf, offset, big_endian)
        if values[1] != C.MQXQH_VERSION_1:
            raise DecodeError("MQXQH", offset + 4, f"Version {values[1]} is not 1")
        md_at = offset + MSG_DESC_OFFSET
        # Checked before decoding: a v2 embedded MD would make MQMD read 40 bytes that belong
        # to whatever follows the header.
        raw_version = bytes(buf[md_at + 4 : md_at + 8])
        if int.from_bytes(raw_version, "big" if big_endian else "little", signed=True) != C.MQMD_VERSION_1:
            raise DecodeError("MQXQH", md_at + 4, f"embedded MQMD Version {raw_version.hex()} is not 1")
        md = MQMD.unpack_from(buf, md_at, big_endian=big_endian)
        return cls(values[2], values[3], md)


_PLAIN_HEAD = b"XQH \x01\x00\x00\x00"  # StrucId and Version 1, little-endian
_PLAIN_MD_HEAD = b"MD  \x01\x00\x00\x00"
_MDE_FORMAT = MDE_FORMAT.encode("ascii")  # what any Format read as MQHMDE begins with
_FORMAT_AT = MSG_DESC_OFFSET + FORMAT_OFFSET
# Destinations repeat from message to message: their names decoded once (bounded: a hostile
# sender cannot grow it).
_names: dict[bytes, tuple[str, str]] = {}
_NAMES_LIMIT = 4096


def pack_xmit(
    remote_q_name: str, remote_q_mgr_name: str, md: MQMD, *, big_endian: bool = False, ccsid: int = C.MQCCSI_Q_MGR
) -> bytes:
    """The MQXQH (plus an MQMDE when ``md`` has version-2 fields) to put before a message's data.

    ``ccsid`` is the CCSID to declare for the MQMDE (IBM: the queue manager's); the MQMDE's
    encoding follows ``big_endian`` so the chain stays readable with one byte order.
    """
    encoding = _ENC_BIG if big_endian else _ENC_LITTLE
    v1, mde = split_md(md, encoding=encoding, ccsid=ccsid)
    out = MQXQH(remote_q_name, remote_q_mgr_name, v1).pack(big_endian=big_endian)
    return out if mde is None else out + mde.pack(big_endian=big_endian)


def unpack_xmit(
    buf: bytes | bytearray | memoryview, offset: int = 0, *, big_endian: bool | None = None
) -> tuple[MQXQH, MQMD, int]:
    """Decode an MQXQH and a following MQMDE if the embedded MD announces one.

    Returns the header, the original message's full MQMD (version 2 when an MQMDE was merged,
    else the embedded version-1 MD) and the offset of the message data.

    Raises:
        DecodeError: the MQXQH or the announced MQMDE is malformed or truncated.
    """
    if (type(buf) is bytes and not big_endian and buf.startswith(_PLAIN_HEAD, offset)
            and buf.startswith(_PLAIN_MD_HEAD, offset + MSG_DESC_OFFSET) and len(buf) - offset >= C.MQXQH_LENGTH_1):
        # What a queue manager here writes (little-endian, its MQMD version 1): StrucId and
        # both Versions are right, all the bytes there; nothing else can be wrong with it.
        raw = buf[offset + 8 : offset + MSG_DESC_OFFSET]
        names = _names.get(raw)
        if names is None:
            names = (decode_chars(raw[:48]), decode_chars(raw[48:]))
            if len(_names) < _NAMES_LIMIT:
                _names[raw] = names
        xqh = MQXQH(*names, MQMD.decode(buf, offset + MSG_DESC_OFFSET, big_endian=False))
        if not buf.startswith(_MDE_FORMAT, offset + _FORMAT_AT):  # no MQMDE: told by Format's bytes
            return xqh, xqh.msg_desc, offset + C.MQXQH_LENGTH_1
    else:
        if big_endian is None:
            big_endian = detect_big_endian(buf, offset, "MQXQH", (C.MQXQH_VERSION_1,))
        xqh = MQXQH.unpack_from(buf, offset, big_endian=big_endian)
    end = offset + C.MQXQH_LENGTH_1
    if xqh.msg_desc.format != MDE_FORMAT:
        return xqh, xqh.msg_desc, end
    # By IBM's chaining rule the MQMDE is in the embedded MD's Encoding, but writers that
    # leave that Encoding undefined exist; the MQMDE's Version (always 2) tells its byte
    # order unambiguously, so detect it.
    mde = MQMDE.unpack_from(buf, end)
    return xqh, merge_mde(xqh.msg_desc, mde), end + C.MQMDE_LENGTH_2
