"""The packed MQMD against the table-driven codec (wire/layout.py), field by field and byte by byte."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ferrymq.wire.mqmd import FIELD_NAMES, LAYOUT_V1, LAYOUT_V2, MQMD, steady_ids

int32 = st.integers(-(2**31), 2**31 - 1)
# Text as a getter reads it back: no trailing blanks, no NULs (a NUL ends the field).
_chars = st.characters(min_codepoint=0x21, max_codepoint=0xFF)


def _text(size: int) -> st.SearchStrategy[str]:
    return st.text(_chars, max_size=size).map(str.rstrip)


def _draw_fields() -> st.SearchStrategy[dict[str, Any]]:
    strategies: dict[str, st.SearchStrategy[Any]] = {}
    for attr, kind, length in LAYOUT_V2.fields:
        if attr == "struc_id":
            continue
        if attr == "version":
            strategies[attr] = st.sampled_from([1, 2])
        elif kind == "l":
            strategies[attr] = int32
        elif kind == "b":
            strategies[attr] = st.binary(min_size=length, max_size=length)
        else:
            strategies[attr] = _text(length)
    return st.fixed_dictionaries({}, optional=strategies)


def _reference(md_fields: dict[str, Any]) -> list[Any]:
    """Every field's value, defaults filled in, as the table-driven codec takes them."""
    defaults = dict(zip(FIELD_NAMES, MQMD().fields(), strict=True))
    return [md_fields.get(name, defaults[name]) for name in FIELD_NAMES]


@given(_draw_fields(), st.booleans())
def test_packs_as_the_table_codec_and_reads_back_every_field(fields: dict[str, Any], big_endian: bool) -> None:
    md = MQMD(**fields)
    values = _reference(fields)
    version = values[1]
    layout = LAYOUT_V2 if version == 2 else LAYOUT_V1
    expected = layout.pack(values[: len(layout.fields)], big_endian)
    assert md.pack(big_endian=big_endian) == expected
    for name, value in zip(FIELD_NAMES, values, strict=True):
        assert getattr(md, name) == value, name
    decoded = MQMD.decode(expected)
    v2_defaults = {name: getattr(MQMD(), name) for name in FIELD_NAMES[len(LAYOUT_V1.fields) :]}
    assert decoded == (md if version == 2 else md.replace(**v2_defaults))  # a version-1 image has none of them
    assert decoded.pack(big_endian=big_endian) == expected


@given(st.binary(min_size=356, max_size=356), st.sampled_from([1, 2]), st.booleans())
def test_any_bytes_decode_as_the_table_codec_reads_them(body: bytes, version: int, big_endian: bool) -> None:
    layout = LAYOUT_V2 if version == 2 else LAYOUT_V1
    raw = b"MD  " + version.to_bytes(4, "big" if big_endian else "little") + body[: layout.size - 8]
    md = MQMD.decode(raw)
    expected = layout.unpack(raw, 0, big_endian)
    assert [getattr(md, name) for name in FIELD_NAMES[: len(expected)]] == expected
    assert md.pack(big_endian=big_endian) == raw


@given(_draw_fields(), st.binary(min_size=24, max_size=24), st.binary(min_size=24, max_size=24),
       st.text("0123456789", min_size=8, max_size=8), st.text("0123456789", min_size=8, max_size=8))
def test_derived_copies_equal_replace(fields: dict[str, Any], msg_id: bytes, correl_id: bytes, date: str,
                                      tod: str) -> None:
    md = MQMD(**fields)
    assert md.with_ids(msg_id, correl_id) == md.replace(msg_id=msg_id, correl_id=correl_id)
    assert md.with_msg_id(msg_id) == md.replace(msg_id=msg_id)
    assert md.with_put_time(date, tod) == md.replace(put_date=date, put_time=tod)
    assert md.with_ids(msg_id, correl_id, date, tod) == md.replace(msg_id=msg_id, correl_id=correl_id, put_date=date,
                                                                  put_time=tod)
    context = ("bob", bytes(range(32)), "id", 6, "app", date, tod, "od")
    assert md.with_put_context(msg_id, correl_id, 4, 1, "QM", context) == md.replace(
        version=2, priority=4, persistence=1, msg_id=msg_id, correl_id=correl_id, backout_count=0,
        reply_to_q_mgr="QM", user_identifier="bob", accounting_token=bytes(range(32)), appl_identity_data="id",
        put_appl_type=6, put_appl_name="app", put_date=date, put_time=tod, appl_origin_data="od")
    # the same put time and identifiers again: the steady part is what it was
    assert md.with_ids(msg_id, correl_id, date, tod).steady_key() == md.steady_key()


@given(_draw_fields(), st.binary(min_size=16, max_size=16), st.binary(min_size=24, max_size=24))
def test_a_put_stamp_kept_as_it_lies_is_what_its_text_would_write(fields: dict[str, Any], raw: bytes,
                                                                  msg_id: bytes) -> None:
    # A channel's receiving agent stores the sender's PutDate and PutTime (MQPMO_SET_ALL_CONTEXT)
    # from their bytes: whatever the bytes (NULs, blanks, any latin-1), the stored descriptor is
    # the one the decoded text would give.
    at = LAYOUT_V2.offset_of("put_date")
    md = MQMD(**fields).replace(version=2)
    md = MQMD.decode(md.pack()[:at] + raw + md.pack()[at + 16:])
    assert md.with_ids(msg_id, msg_id, stamp=md.put_stamp()) == md.with_ids(msg_id, msg_id, md.put_date, md.put_time)
    for blanked in (b" " * 8 + raw[8:], raw[:8] + b" " * 8, b"2026\x00xyz" + raw[8:], bytes(16)):
        md = MQMD.decode(md.pack()[:at] + blanked + md.pack()[at + 16:])
        assert md.put_stamp() == md.replace(put_date=md.put_date, put_time=md.put_time).pack()[at:at + 16]


@given(_draw_fields(), st.booleans())
def test_a_descriptors_bytes_give_its_plan_key_only_as_a_little_endian_v2(fields: dict[str, Any],
                                                                          big_endian: bool) -> None:
    # A put's plan is matched on the descriptor's bytes as they came (engine.putting): the
    # bytes of a little-endian version 2 give what the decoded MQMD gives; any other image of
    # the same descriptor gives another key, and the put takes the decoding way.
    md = MQMD(**fields).replace(version=2)
    assert steady_ids(md.pack()) == md.steady_ids()
    other = md.pack(big_endian=True) if big_endian else md.pack(version=1)
    assert steady_ids(other)[0] != md.steady_ids()[0]
