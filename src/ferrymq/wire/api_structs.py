"""MQI API structures with their 64-bit layouts (ibmmq-reference.md §4.5), for the pymqi-compatible layer.

MQGMO ("GMO "; v1 72, v2 80, v3 100, v4 112):

| Off | Len | Field         | Default | Off | Len | Field            | Default       |
|----:|----:|---------------|---------|----:|----:|------------------|---------------|
|   8 |   4 | Options       | 0       |  76 |   1 | GroupStatus   v2 | ' '           |
|  12 |   4 | WaitInterval  | 0       |  77 |   1 | SegmentStatus v2 | ' '           |
|  16 |   4 | Signal1       | 0       |  78 |   1 | Segmentation  v2 | ' '           |
|  20 |   4 | Signal2       | 0       |  79 |   1 | Reserved1     v2 | ' '           |
|  24 |  48 | ResolvedQName | NULs    |  80 |  16 | MsgToken      v3 | zeros         |
|  72 |   4 | MatchOptions v2 | 3     |  96 |   4 | ReturnedLength v3| -1            |
|     |     |               |         | 100 |   4 | Reserved2     v4 | 0             |
|     |     |               |         | 104 |   8 | MsgHandle     v4 | 0 (MQHM_NONE) |

MQPMO ("PMO "; v1 128, v2 160, v3 184): Options 8, Timeout 12 (-1), Context 16,
KnownDestCount 20, UnknownDestCount 24, InvalidDestCount 28, ResolvedQName 32/48,
ResolvedQMgrName 80/48 | v2: RecsPresent 128, PutMsgRecFields 132, PutMsgRecOffset 136,
ResponseRecOffset 140, PutMsgRecPtr 144/8, ResponseRecPtr 152/8 | v3: OriginalMsgHandle
160/8, NewMsgHandle 168/8, Action 176 (0), PubLevel 180 (9).

MQOD ("OD  "; v1 168, v2 208, v3 344, v4 424): ObjectType 8 (1 = MQOT_Q), ObjectName
12/48, ObjectQMgrName 60/48, DynamicQName 108/48 ("AMQ.*"), AlternateUserId 156/12 |
v2: RecsPresent 168, KnownDestCount 172, UnknownDestCount 176, InvalidDestCount 180,
ObjectRecOffset 184, ResponseRecOffset 188, ObjectRecPtr 192/8, ResponseRecPtr 200/8 |
v3: AlternateSecurityId 208/40, ResolvedQName 248/48, ResolvedQMgrName 296/48 |
v4: ObjectString 344/24, SelectionString 368/24, ResObjectString 392/24 (MQCHARV),
ResolvedType 416/4, then 4 bytes of tail padding.

MQCHARV (24): VSPtr 0/8, VSOffset 8, VSBufSize 12, VSLength 16, VSCCSID 20 (MQCCSI_APPL).

MQSD ("SD  "; v1 344): Options 8 (0 = MQSO_NON_DURABLE), ObjectName 12/48, AlternateUserId
60/12, AlternateSecurityId 72/40, SubExpiry 112 (-1), 4 bytes of padding (the MQCHARV's
pointer is 8-aligned), ObjectString 120/24, SubName 144/24, SubUserData 168/24,
SubCorrelId 192/24, PubPriority 216 (-3 = MQPRI_PRIORITY_AS_PUBLISHED), PubAccountingToken
220/32, PubApplIdentityData 252/32, padding 284/4, SelectionString 288/24, SubLevel 312
(1), padding 316/4, ResObjectString 320/24.
MQSRO ("SRO "; v1 16): Options 8 (MQSRO_FAIL_IF_QUIESCING), NumPubs 12.
MQCNO ("CNO ", v1 12): Options 8 — only version 1, the part MQCNO_LENGTH_1 covers.
Property-API options (all v1): MQCMHO/MQDMHO/MQDMPO/MQMHBO/MQBMHO 12 (Options 8);
MQSMPO 20 (Options 8, ValueEncoding 12, ValueCCSID 16); MQPD 24 (Options 8, Support 12,
Context 16, CopyOptions 20); MQIMPO 64 (Options 8, RequestedEncoding 12, RequestedCCSID 16,
ReturnedEncoding 20, ReturnedCCSID 24, Reserved1 28, ReturnedName 32/24, TypeString 56/8).

StrucId and Version are at 0 and 4 everywhere. Pointers always pack as 0 and are not
attributes: a pointer means nothing in another process. Name fields are NUL-padded, as C's
strncpy and pymqi leave them, so the defaults are byte-identical to the C ``*_DEFAULT``
initialisers (``"AMQ.*"`` then NULs); on input a NUL and what follows count as blanks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Self

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.wire.layout import Layout, decode_chars
from ferrymq.wire.mqmd import detect_big_endian

Buffer = bytes | bytearray | memoryview
Spec = list[tuple[str, str, int]]

# Kinds beyond layout.py's l/q/f/b, mapped onto them:
#   z: MQCHARn name, NUL-padded      1: one MQCHAR kept as a 1-character str
#   p: pointer, always 0, no attribute   x: padding, zeros, no attribute
#   v: an MQCHARV (24 bytes), the attribute is an MQCHARV
_LAYOUT_KIND = {"l": "l", "q": "q", "f": "f", "b": "b", "z": "b", "1": "b", "p": "q", "x": "b"}
_CHARV: Spec = [("vs_ptr", "p", 8), ("vs_offset", "l", 4), ("vs_buf_size", "l", 4), ("vs_length", "l", 4),
                ("vs_ccsid", "l", 4)]  # fmt: skip

# Character constants that constants.py does not carry (it holds numbers and strings only).
MQGS_NOT_IN_GROUP = " "
MQSS_NOT_A_SEGMENT = " "
MQSEG_INHIBITED = " "
MQPUBLEVEL_ALL = 9


def _expand(fields: Spec) -> Spec:
    out: Spec = []
    for attr, kind, size in fields:
        if kind == "v":
            out.extend((f"{attr}.{sub}", k, n) for sub, k, n in _CHARV)
        else:
            out.append((attr, kind, size))
    return out


class _Plan:
    """The per-version layouts of one API structure and the rules to fill them."""

    def __init__(self, name: str, struc_id: str, versions: list[Spec], lengths: list[int]) -> None:
        self.name = name
        self.struc_id = struc_id
        self.layouts: dict[int, tuple[Layout, Spec]] = {}
        fields: Spec = [("struc_id", "f", 4), ("version", "l", 4)]
        for number, (extra, length) in enumerate(zip(versions, lengths, strict=True), start=1):
            fields = fields + extra
            spec = _expand(fields)
            layout = Layout.of(name, [(attr, _LAYOUT_KIND[kind], size) for attr, kind, size in spec])
            assert layout.size == length, (name, number, layout.size, length)
            self.layouts[number] = (layout, spec)

    def pack(self, obj: Any, big_endian: bool, version: int | None) -> bytes:
        number = obj.version if version is None else version
        if number not in self.layouts:
            raise ValueError(f"{self.name} version must be one of {sorted(self.layouts)}, not {number}")
        layout, spec = self.layouts[number]
        values: list[Any] = []
        for attr, kind, size in spec:
            if attr == "struc_id":
                values.append(self.struc_id)
            elif attr == "version":
                values.append(number)
            elif kind == "p":
                values.append(0)
            elif kind == "x":
                values.append(bytes(size))
            else:
                head, _, sub = attr.partition(".")
                value = getattr(getattr(obj, head), sub) if sub else getattr(obj, attr)
                if kind in "z1":
                    raw = value.encode("latin-1")
                    if len(raw) > size:
                        raise ValueError(f"{self.name}.{attr} is {len(raw)} characters; the field holds {size}")
                    value = raw.ljust(size, b"\0")
                values.append(value)
        return layout.pack(values, big_endian)

    def unpack(self, cls: type[Any], buf: Buffer, offset: int, big_endian: bool | None) -> Any:
        name = self.name
        first, _ = self.layouts[1]
        first.check_struc_id(buf, offset, self.struc_id)
        if big_endian is None:
            big_endian = detect_big_endian(buf, offset, name, tuple(self.layouts))
        number = int.from_bytes(bytes(buf[offset + 4 : offset + 8]), "big" if big_endian else "little", signed=True)
        if number not in self.layouts:
            raise DecodeError(name, offset + 4, f"Version {number} is not one of {sorted(self.layouts)}")
        layout, spec = self.layouts[number]
        kwargs: dict[str, Any] = {}
        charvs: dict[str, dict[str, int]] = {}
        for (attr, kind, _), value in zip(spec, layout.unpack(buf, offset, big_endian), strict=True):
            if attr == "struc_id" or kind in "px":
                continue
            head, _, sub = attr.partition(".")
            if sub:
                charvs.setdefault(head, {})[sub] = value
            elif kind == "z":
                kwargs[attr] = decode_chars(value)
            elif kind == "1":
                kwargs[attr] = value.decode("latin-1")
            else:
                kwargs[attr] = value
        kwargs.update({head: MQCHARV(**sub) for head, sub in charvs.items()})
        return cls(**kwargs)


class _ApiStruct:
    """pack()/unpack_from() shared by every structure below (each names its ``_plan``)."""

    __slots__ = ()
    _plan: ClassVar[_Plan]

    def pack(self, *, big_endian: bool = False, version: int | None = None) -> bytes:
        """The structure's bytes in ``version`` (default: its own ``version``).

        Raises:
            ValueError: an unknown version, or a value that does not fit its field.
        """
        return self._plan.pack(self, big_endian, version)

    @classmethod
    def unpack_from(cls, buf: Buffer, offset: int = 0, *, big_endian: bool | None = None) -> Self:
        """Decode at ``offset``; the byte order is detected from Version when not given.
        Fields of later versions than the one found keep their defaults.

        Raises:
            DecodeError: wrong StrucId, unknown Version, or too few bytes.
        """
        result: Self = cls._plan.unpack(cls, buf, offset, big_endian)
        return result


def layout(cls: type[_ApiStruct], version: int) -> Layout:
    """The byte layout of ``cls`` in ``version`` (for offsets: ``layout(MQOD, 4).offset_of(...)``)."""
    return cls._plan.layouts[version][0]


@dataclass(frozen=True, slots=True)
class MQCHARV:
    """A variable-length string descriptor; the pointer is not kept, the string travels elsewhere."""

    vs_offset: int = 0
    vs_buf_size: int = 0
    vs_length: int = 0
    vs_ccsid: int = C.MQCCSI_APPL


_NO_STRING = MQCHARV()


@dataclass(frozen=True, slots=True)
class MQGMO(_ApiStruct):
    """Get-message options; the defaults are MQGMO_DEFAULT."""

    version: int = C.MQGMO_VERSION_1
    options: int = C.MQGMO_NO_WAIT | C.MQGMO_PROPERTIES_AS_Q_DEF
    wait_interval: int = 0
    signal1: int = 0
    signal2: int = 0
    resolved_q_name: str = ""
    match_options: int = C.MQMO_MATCH_MSG_ID | C.MQMO_MATCH_CORREL_ID
    group_status: str = MQGS_NOT_IN_GROUP
    segment_status: str = MQSS_NOT_A_SEGMENT
    segmentation: str = MQSEG_INHIBITED
    reserved1: str = " "
    msg_token: bytes = C.MQMTOK_NONE
    returned_length: int = C.MQRL_UNDEFINED
    reserved2: int = 0
    msg_handle: int = C.MQHM_NONE


MQGMO._plan = _Plan(
    "MQGMO",
    C.MQGMO_STRUC_ID,
    [
        [("options", "l", 4), ("wait_interval", "l", 4), ("signal1", "l", 4), ("signal2", "l", 4),
         ("resolved_q_name", "z", 48)],
        [("match_options", "l", 4), ("group_status", "1", 1), ("segment_status", "1", 1),
         ("segmentation", "1", 1), ("reserved1", "1", 1)],
        [("msg_token", "b", 16), ("returned_length", "l", 4)],
        [("reserved2", "l", 4), ("msg_handle", "q", 8)],
    ],
    [C.MQGMO_LENGTH_1, C.MQGMO_LENGTH_2, C.MQGMO_LENGTH_3, C.MQGMO_LENGTH_4],
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class MQPMO(_ApiStruct):
    """Put-message options; the defaults are MQPMO_DEFAULT."""

    version: int = C.MQPMO_VERSION_1
    options: int = C.MQPMO_NONE
    timeout: int = -1
    context: int = 0
    known_dest_count: int = 0
    unknown_dest_count: int = 0
    invalid_dest_count: int = 0
    resolved_q_name: str = ""
    resolved_q_mgr_name: str = ""
    recs_present: int = 0
    put_msg_rec_fields: int = C.MQPMRF_NONE
    put_msg_rec_offset: int = 0
    response_rec_offset: int = 0
    original_msg_handle: int = C.MQHM_NONE
    new_msg_handle: int = C.MQHM_NONE
    action: int = C.MQACTP_NEW
    pub_level: int = MQPUBLEVEL_ALL


MQPMO._plan = _Plan(
    "MQPMO",
    C.MQPMO_STRUC_ID,
    [
        [("options", "l", 4), ("timeout", "l", 4), ("context", "l", 4), ("known_dest_count", "l", 4),
         ("unknown_dest_count", "l", 4), ("invalid_dest_count", "l", 4), ("resolved_q_name", "z", 48),
         ("resolved_q_mgr_name", "z", 48)],
        [("recs_present", "l", 4), ("put_msg_rec_fields", "l", 4), ("put_msg_rec_offset", "l", 4),
         ("response_rec_offset", "l", 4), ("put_msg_rec_ptr", "p", 8), ("response_rec_ptr", "p", 8)],
        [("original_msg_handle", "q", 8), ("new_msg_handle", "q", 8), ("action", "l", 4), ("pub_level", "l", 4)],
    ],
    [C.MQPMO_LENGTH_1, C.MQPMO_LENGTH_2, C.MQPMO_LENGTH_3],
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class MQOD(_ApiStruct):
    """Object descriptor; the defaults are MQOD_DEFAULT."""

    version: int = C.MQOD_VERSION_1
    object_type: int = C.MQOT_Q
    object_name: str = ""
    object_q_mgr_name: str = ""
    dynamic_q_name: str = "AMQ.*"
    alternate_user_id: str = ""
    recs_present: int = 0
    known_dest_count: int = 0
    unknown_dest_count: int = 0
    invalid_dest_count: int = 0
    object_rec_offset: int = 0
    response_rec_offset: int = 0
    alternate_security_id: bytes = bytes(40)  # MQSID_NONE
    resolved_q_name: str = ""
    resolved_q_mgr_name: str = ""
    object_string: MQCHARV = _NO_STRING
    selection_string: MQCHARV = _NO_STRING
    res_object_string: MQCHARV = _NO_STRING
    resolved_type: int = C.MQOT_NONE


MQOD._plan = _Plan(
    "MQOD",
    C.MQOD_STRUC_ID,
    [
        [("object_type", "l", 4), ("object_name", "z", 48), ("object_q_mgr_name", "z", 48),
         ("dynamic_q_name", "z", 48), ("alternate_user_id", "z", 12)],
        [("recs_present", "l", 4), ("known_dest_count", "l", 4), ("unknown_dest_count", "l", 4),
         ("invalid_dest_count", "l", 4), ("object_rec_offset", "l", 4), ("response_rec_offset", "l", 4),
         ("object_rec_ptr", "p", 8), ("response_rec_ptr", "p", 8)],
        [("alternate_security_id", "b", 40), ("resolved_q_name", "z", 48), ("resolved_q_mgr_name", "z", 48)],
        [("object_string", "v", 24), ("selection_string", "v", 24), ("res_object_string", "v", 24),
         ("resolved_type", "l", 4), ("tail_padding", "x", 4)],
    ],
    [C.MQOD_LENGTH_1, C.MQOD_LENGTH_2, C.MQOD_LENGTH_3, C.MQOD_LENGTH_4],
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class MQCNO(_ApiStruct):
    """Connect options, version 1 only (StrucId, Version, Options)."""

    version: int = C.MQCNO_VERSION_1
    options: int = C.MQCNO_NONE


MQCNO._plan = _Plan("MQCNO", C.MQCNO_STRUC_ID, [[("options", "l", 4)]], [C.MQCNO_LENGTH_1])


@dataclass(frozen=True, slots=True)
class MQSD(_ApiStruct):
    """Subscription descriptor; the defaults are MQSD_DEFAULT."""

    version: int = C.MQSD_VERSION_1
    options: int = C.MQSO_NON_DURABLE
    object_name: str = ""
    alternate_user_id: str = ""
    alternate_security_id: bytes = C.MQSID_NONE
    sub_expiry: int = C.MQEI_UNLIMITED
    object_string: MQCHARV = _NO_STRING
    sub_name: MQCHARV = _NO_STRING
    sub_user_data: MQCHARV = _NO_STRING
    sub_correl_id: bytes = C.MQCI_NONE
    pub_priority: int = C.MQPRI_PRIORITY_AS_PUBLISHED
    pub_accounting_token: bytes = C.MQACT_NONE
    pub_appl_identity_data: str = ""
    selection_string: MQCHARV = _NO_STRING
    sub_level: int = 1
    res_object_string: MQCHARV = _NO_STRING


MQSD._plan = _Plan(
    "MQSD",
    C.MQSD_STRUC_ID,
    [
        [("options", "l", 4), ("object_name", "z", 48), ("alternate_user_id", "z", 12),
         ("alternate_security_id", "b", 40), ("sub_expiry", "l", 4), ("pad1", "x", 4), ("object_string", "v", 24),
         ("sub_name", "v", 24), ("sub_user_data", "v", 24), ("sub_correl_id", "b", 24), ("pub_priority", "l", 4),
         ("pub_accounting_token", "b", 32), ("pub_appl_identity_data", "z", 32), ("pad2", "x", 4),
         ("selection_string", "v", 24), ("sub_level", "l", 4), ("pad3", "x", 4), ("res_object_string", "v", 24)],
    ],
    [C.MQSD_LENGTH_1],
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class MQSRO(_ApiStruct):
    """Subscription request options (MQSUBRQ)."""

    version: int = C.MQSRO_VERSION_1
    options: int = C.MQSRO_FAIL_IF_QUIESCING
    num_pubs: int = 0


MQSRO._plan = _Plan("MQSRO", C.MQSRO_STRUC_ID, [[("options", "l", 4), ("num_pubs", "l", 4)]], [C.MQSRO_LENGTH_1])


@dataclass(frozen=True, slots=True)
class MQCMHO(_ApiStruct):
    """Create-message-handle options."""

    version: int = C.MQCMHO_VERSION_1
    options: int = C.MQCMHO_DEFAULT_VALIDATION


MQCMHO._plan = _Plan("MQCMHO", C.MQCMHO_STRUC_ID, [[("options", "l", 4)]], [C.MQCMHO_LENGTH_1])


@dataclass(frozen=True, slots=True)
class MQDMHO(_ApiStruct):
    """Delete-message-handle options."""

    version: int = C.MQDMHO_VERSION_1
    options: int = C.MQDMHO_NONE


MQDMHO._plan = _Plan("MQDMHO", C.MQDMHO_STRUC_ID, [[("options", "l", 4)]], [C.MQDMHO_LENGTH_1])


@dataclass(frozen=True, slots=True)
class MQDMPO(_ApiStruct):
    """Delete-message-property options."""

    version: int = C.MQDMPO_VERSION_1
    options: int = C.MQDMPO_DEL_FIRST


MQDMPO._plan = _Plan("MQDMPO", C.MQDMPO_STRUC_ID, [[("options", "l", 4)]], [C.MQDMPO_LENGTH_1])


@dataclass(frozen=True, slots=True)
class MQMHBO(_ApiStruct):
    """Message-handle-to-buffer options."""

    version: int = C.MQMHBO_VERSION_1
    options: int = C.MQMHBO_PROPERTIES_IN_MQRFH2


MQMHBO._plan = _Plan("MQMHBO", C.MQMHBO_STRUC_ID, [[("options", "l", 4)]], [C.MQMHBO_LENGTH_1])


@dataclass(frozen=True, slots=True)
class MQBMHO(_ApiStruct):
    """Buffer-to-message-handle options."""

    version: int = C.MQBMHO_VERSION_1
    options: int = C.MQBMHO_DELETE_PROPERTIES


MQBMHO._plan = _Plan("MQBMHO", C.MQBMHO_STRUC_ID, [[("options", "l", 4)]], [C.MQBMHO_LENGTH_1])


@dataclass(frozen=True, slots=True)
class MQSMPO(_ApiStruct):
    """Set-message-property options."""

    version: int = C.MQSMPO_VERSION_1
    options: int = C.MQSMPO_SET_FIRST
    value_encoding: int = C.MQENC_NATIVE
    value_ccsid: int = C.MQCCSI_APPL


MQSMPO._plan = _Plan(
    "MQSMPO",
    C.MQSMPO_STRUC_ID,
    [[("options", "l", 4), ("value_encoding", "l", 4), ("value_ccsid", "l", 4)]],
    [C.MQSMPO_LENGTH_1],
)


@dataclass(frozen=True, slots=True)
class MQPD(_ApiStruct):
    """Property descriptor."""

    version: int = C.MQPD_VERSION_1
    options: int = C.MQPD_NONE
    support: int = C.MQPD_SUPPORT_OPTIONAL
    context: int = C.MQPD_NO_CONTEXT
    copy_options: int = C.MQCOPY_DEFAULT


MQPD._plan = _Plan(
    "MQPD",
    C.MQPD_STRUC_ID,
    [[("options", "l", 4), ("support", "l", 4), ("context", "l", 4), ("copy_options", "l", 4)]],
    [C.MQPD_LENGTH_1],
)


@dataclass(frozen=True, slots=True)
class MQIMPO(_ApiStruct):
    """Inquire-message-property options."""

    version: int = C.MQIMPO_VERSION_1
    options: int = C.MQIMPO_INQ_FIRST
    requested_encoding: int = C.MQENC_NATIVE
    requested_ccsid: int = C.MQCCSI_APPL
    returned_encoding: int = C.MQENC_NATIVE
    returned_ccsid: int = 0
    reserved1: int = 0
    returned_name: MQCHARV = _NO_STRING
    type_string: str = ""


MQIMPO._plan = _Plan(
    "MQIMPO",
    C.MQIMPO_STRUC_ID,
    [
        [("options", "l", 4), ("requested_encoding", "l", 4), ("requested_ccsid", "l", 4),
         ("returned_encoding", "l", 4), ("returned_ccsid", "l", 4), ("reserved1", "l", 4),
         ("returned_name", "v", 24), ("type_string", "z", 8)],
    ],
    [C.MQIMPO_LENGTH_1],
)  # fmt: skip
