"""MQI API structures against the 64-bit layouts and defaults of ibmmq-reference.md §4.5."""

from __future__ import annotations

import pytest

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.wire.api_structs import (
    MQBMHO,
    MQCHARV,
    MQCMHO,
    MQCNO,
    MQDMHO,
    MQDMPO,
    MQGMO,
    MQIMPO,
    MQMHBO,
    MQOD,
    MQPD,
    MQPMO,
    MQSMPO,
    layout,
)


def le(*values: int) -> bytes:
    return b"".join(v.to_bytes(4, "little", signed=True) for v in values)


CHARV_DEFAULT = bytes(8) + le(0, 0, 0, C.MQCCSI_APPL)


def gmo_default(version: int) -> bytes:
    img = b"GMO " + le(version, 0, 0, 0, 0) + bytes(48)
    img += le(3) + b"    "  # MatchOptions, then GroupStatus/SegmentStatus/Segmentation/Reserved1 blanks
    img += bytes(16) + le(-1)  # MsgToken, ReturnedLength MQRL_UNDEFINED
    img += le(0) + bytes(8)  # Reserved2, MsgHandle MQHM_NONE
    return img[: {1: 72, 2: 80, 3: 100, 4: 112}[version]]


def pmo_default(version: int) -> bytes:
    img = b"PMO " + le(version, 0, -1, 0, 0, 0, 0) + bytes(96)
    img += le(0, 0, 0, 0) + bytes(16)  # v2: counts and offsets, two pointers
    img += bytes(16) + le(0, 9)  # v3: two handles, Action MQACTP_NEW, PubLevel 9
    return img[: {1: 128, 2: 160, 3: 184}[version]]


def od_default(version: int) -> bytes:
    img = b"OD  " + le(version, C.MQOT_Q) + bytes(96) + b"AMQ.*" + bytes(43) + bytes(12)
    img += le(0, 0, 0, 0, 0, 0) + bytes(16)  # v2
    img += bytes(40) + bytes(96)  # v3: AlternateSecurityId, ResolvedQName, ResolvedQMgrName
    img += CHARV_DEFAULT * 3 + le(C.MQOT_NONE) + bytes(4)  # v4 + tail padding
    return img[: {1: 168, 2: 208, 3: 344, 4: 424}[version]]


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_gmo_default_images(version: int) -> None:
    assert MQGMO(version=version).pack() == gmo_default(version)
    assert len(gmo_default(version)) == getattr(C, f"MQGMO_LENGTH_{version}")


@pytest.mark.parametrize("version", [1, 2, 3])
def test_pmo_default_images(version: int) -> None:
    assert MQPMO(version=version).pack() == pmo_default(version)
    assert len(pmo_default(version)) == getattr(C, f"MQPMO_LENGTH_{version}")


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_od_default_images(version: int) -> None:
    assert MQOD(version=version).pack() == od_default(version)
    assert len(od_default(version)) == getattr(C, f"MQOD_LENGTH_{version}")


@pytest.mark.parametrize(
    ("cls", "image"),
    [
        (MQCNO, b"CNO " + le(1, 0)),
        (MQCMHO, b"CMHO" + le(1, C.MQCMHO_DEFAULT_VALIDATION)),
        (MQDMHO, b"DMHO" + le(1, 0)),
        (MQDMPO, b"DMPO" + le(1, C.MQDMPO_DEL_FIRST)),
        (MQMHBO, b"MHBO" + le(1, C.MQMHBO_PROPERTIES_IN_MQRFH2)),
        (MQBMHO, b"BMHO" + le(1, C.MQBMHO_DELETE_PROPERTIES)),
        (MQSMPO, b"SMPO" + le(1, 0, 546, -3)),
        (MQPD, b"PD  " + le(1, 0, C.MQPD_SUPPORT_OPTIONAL, C.MQPD_NO_CONTEXT, 0x16)),
        (MQIMPO, b"IMPO" + le(1, 0, 546, -3, 546, 0, 0) + CHARV_DEFAULT + bytes(8)),
    ],
)
def test_small_structure_defaults(cls: type[MQCNO], image: bytes) -> None:
    assert cls().pack() == image
    assert cls.unpack_from(image) == cls()
    assert cls.unpack_from(cls().pack(big_endian=True)) == cls()


@pytest.mark.parametrize(
    ("cls", "version", "field", "offset"),
    [
        (MQGMO, 4, "options", 8), (MQGMO, 4, "wait_interval", 12), (MQGMO, 4, "signal1", 16),
        (MQGMO, 4, "signal2", 20), (MQGMO, 4, "resolved_q_name", 24), (MQGMO, 4, "match_options", 72),
        (MQGMO, 4, "group_status", 76), (MQGMO, 4, "segment_status", 77), (MQGMO, 4, "segmentation", 78),
        (MQGMO, 4, "reserved1", 79), (MQGMO, 4, "msg_token", 80), (MQGMO, 4, "returned_length", 96),
        (MQGMO, 4, "reserved2", 100), (MQGMO, 4, "msg_handle", 104),
        (MQPMO, 3, "timeout", 12), (MQPMO, 3, "context", 16), (MQPMO, 3, "known_dest_count", 20),
        (MQPMO, 3, "unknown_dest_count", 24), (MQPMO, 3, "invalid_dest_count", 28),
        (MQPMO, 3, "resolved_q_name", 32), (MQPMO, 3, "resolved_q_mgr_name", 80), (MQPMO, 3, "recs_present", 128),
        (MQPMO, 3, "put_msg_rec_fields", 132), (MQPMO, 3, "put_msg_rec_offset", 136),
        (MQPMO, 3, "response_rec_offset", 140), (MQPMO, 3, "put_msg_rec_ptr", 144),
        (MQPMO, 3, "response_rec_ptr", 152), (MQPMO, 3, "original_msg_handle", 160),
        (MQPMO, 3, "new_msg_handle", 168), (MQPMO, 3, "action", 176), (MQPMO, 3, "pub_level", 180),
        (MQOD, 4, "object_type", 8), (MQOD, 4, "object_name", 12), (MQOD, 4, "object_q_mgr_name", 60),
        (MQOD, 4, "dynamic_q_name", 108), (MQOD, 4, "alternate_user_id", 156), (MQOD, 4, "recs_present", 168),
        (MQOD, 4, "known_dest_count", 172), (MQOD, 4, "unknown_dest_count", 176),
        (MQOD, 4, "invalid_dest_count", 180), (MQOD, 4, "object_rec_offset", 184),
        (MQOD, 4, "response_rec_offset", 188), (MQOD, 4, "object_rec_ptr", 192), (MQOD, 4, "response_rec_ptr", 200),
        (MQOD, 4, "alternate_security_id", 208), (MQOD, 4, "resolved_q_name", 248),
        (MQOD, 4, "resolved_q_mgr_name", 296), (MQOD, 4, "object_string.vs_ptr", 344),
        (MQOD, 4, "object_string.vs_offset", 352), (MQOD, 4, "object_string.vs_buf_size", 356),
        (MQOD, 4, "object_string.vs_length", 360), (MQOD, 4, "object_string.vs_ccsid", 364),
        (MQOD, 4, "selection_string.vs_ptr", 368), (MQOD, 4, "res_object_string.vs_ptr", 392),
        (MQOD, 4, "resolved_type", 416),
        (MQSMPO, 1, "value_encoding", 12), (MQSMPO, 1, "value_ccsid", 16),
        (MQPD, 1, "support", 12), (MQPD, 1, "context", 16), (MQPD, 1, "copy_options", 20),
        (MQIMPO, 1, "requested_encoding", 12), (MQIMPO, 1, "requested_ccsid", 16),
        (MQIMPO, 1, "returned_encoding", 20), (MQIMPO, 1, "returned_ccsid", 24), (MQIMPO, 1, "reserved1", 28),
        (MQIMPO, 1, "returned_name.vs_ptr", 32), (MQIMPO, 1, "type_string", 56),
    ],
)  # fmt: skip
def test_offsets(cls: type[MQGMO], version: int, field: str, offset: int) -> None:
    assert layout(cls, version).offset_of(field) == offset


def full_gmo() -> MQGMO:
    return MQGMO(version=4, options=C.MQGMO_WAIT | C.MQGMO_SYNCPOINT, wait_interval=5000, resolved_q_name="Q.OUT",
                 match_options=C.MQMO_MATCH_MSG_TOKEN, group_status="L", segment_status="S", segmentation="A",
                 msg_token=b"t" * 16, returned_length=77, msg_handle=2**40)


def full_pmo() -> MQPMO:
    return MQPMO(version=3, options=C.MQPMO_SYNCPOINT, context=3, known_dest_count=2, resolved_q_name="R",
                 resolved_q_mgr_name="QM", recs_present=2, put_msg_rec_fields=1, put_msg_rec_offset=8,
                 response_rec_offset=40, original_msg_handle=-1, new_msg_handle=12, action=C.MQACTP_REPLY,
                 pub_level=4)


def full_od() -> MQOD:
    return MQOD(version=4, object_type=C.MQOT_TOPIC, object_name="T", object_q_mgr_name="QM", dynamic_q_name="D.*",
                alternate_user_id="alice", recs_present=3, object_rec_offset=424, alternate_security_id=b"s" * 40,
                resolved_q_name="RQ", object_string=MQCHARV(424, 20, 7, 1208),
                selection_string=MQCHARV(vs_length=-1), resolved_type=C.MQOT_TOPIC)


@pytest.mark.parametrize("big_endian", [False, True])
@pytest.mark.parametrize("make", [full_gmo, full_pmo, full_od])
def test_round_trips(make: type[MQGMO], big_endian: bool) -> None:
    value = make()
    raw = value.pack(big_endian=big_endian)
    assert raw[4:8] == value.version.to_bytes(4, "big" if big_endian else "little")
    assert type(value).unpack_from(raw) == value
    assert type(value).unpack_from(b"\xff" + raw, 1, big_endian=big_endian) == value


def test_names_are_nul_padded_like_c() -> None:
    raw = MQOD(object_name="Q1").pack()
    assert raw[12:60] == b"Q1" + bytes(46)
    blank_padded = raw[:12] + b"Q1".ljust(48) + raw[60:]
    assert MQOD.unpack_from(blank_padded).object_name == "Q1"


def test_packing_an_older_version_drops_later_fields() -> None:
    raw = full_gmo().pack(version=1)
    assert len(raw) == 72 and raw[4] == 1
    back = MQGMO.unpack_from(raw)
    assert back.version == 1 and back.resolved_q_name == "Q.OUT" and back.match_options == 3 and back.msg_handle == 0


@pytest.mark.parametrize(
    "raw",
    [
        gmo_default(4)[:111],  # truncated for its version
        b"GMX " + gmo_default(1)[4:],
        b"GMO " + le(5) + bytes(104),  # unknown version
        b"GMO " + le(0) + bytes(104),
        b"GM",
    ],
)
def test_bad_input(raw: bytes) -> None:
    with pytest.raises(DecodeError):
        MQGMO.unpack_from(raw)


def test_values_that_do_not_fit() -> None:
    with pytest.raises(ValueError):
        MQOD(object_name="x" * 49).pack()
    with pytest.raises(ValueError):
        MQGMO(group_status="GL", version=2).pack()
    with pytest.raises(ValueError):
        MQGMO(version=5).pack()
    with pytest.raises(ValueError):
        MQPMO(options=2**31).pack()
