"""Message properties: the typed set and its binary form, message handles (MQSETMP,
MQINQMP, MQDLTMP) with IBM's reason codes, MQINQMP type conversion, MQRFH2 folders."""

from __future__ import annotations

import contextlib
import math

import pytest
from engine_helpers import Env
from hypothesis import given, settings
from hypothesis import strategies as st
from test_engine_recovery import restart

from ferrymq.engine.api import GetOptions, GetResult, PutOptions
from ferrymq.errors import DecodeError, MQError
from ferrymq.mq import constants as C
from ferrymq.properties import model, rules
from ferrymq.properties.handle import MessageHandleState, ValueTooBig
from ferrymq.properties.model import Descriptor, PropertySet
from ferrymq.properties.rfh2map import absorb, build_folders, folder_properties
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.rfh2 import MQRFH2

ALL_TYPES = [
    ("b", True, C.MQTYPE_BOOLEAN), ("bytes", b"\x00\xff", C.MQTYPE_BYTE_STRING), ("i1", -128, C.MQTYPE_INT8),
    ("i2", 32767, C.MQTYPE_INT16), ("i4", -(1 << 31), C.MQTYPE_INT32), ("i8", (1 << 63) - 1, C.MQTYPE_INT64),
    ("f4", 1.5, C.MQTYPE_FLOAT32), ("f8", 0.1, C.MQTYPE_FLOAT64), ("s", "grüß", C.MQTYPE_STRING),
    ("z", None, C.MQTYPE_NULL), ("empty", "", C.MQTYPE_STRING),
]


def _full_set() -> PropertySet:
    ps = PropertySet()
    for name, value, t in ALL_TYPES:
        ps.set(name, value, t)
    ps.set("pd", "x", C.MQTYPE_STRING, Descriptor(C.MQPD_SUPPORT_OPTIONAL, C.MQPD_USER_CONTEXT, C.MQCOPY_REPLY))
    return ps


def test_every_type_round_trips_through_the_binary_form() -> None:
    ps = _full_set()
    back = model.unpack(model.pack(ps))
    assert list(back.typed_items()) == list(ps.typed_items())


def test_the_kept_binary_form_follows_every_change() -> None:
    # pack keeps its result on the set (copies of a publication share one set); every
    # change must drop it, and a copy starts from the same form.
    ps = PropertySet({"a": 1})
    first = model.pack(ps)
    assert model.pack(ps) is first
    changes = [lambda: ps.set("b", "x"), lambda: ps.put("c", model.Property(C.MQTYPE_INT8, 3)),
               lambda: ps.__delitem__("a"), lambda: ps.update_from(PropertySet({"d": 2.5})),
               lambda: ps.update({"e": b"y"}), lambda: ps.pop("b"), ps.clear]
    for change in changes:
        twin = ps.copy()
        assert model.pack(twin) == model.pack(ps)
        change()
        fresh = PropertySet()
        for name, prop in ps.typed_items():
            fresh.put(name, prop)
        assert model.pack(ps) == model.pack(fresh)
        assert model.pack(twin) != model.pack(ps)


@given(st.binary(max_size=64))
@settings(max_examples=200)
def test_random_bytes_only_raise_decode_error(raw: bytes) -> None:
    with contextlib.suppress(DecodeError):
        model.unpack(raw)


_value = st.one_of(st.booleans(), st.integers(-(1 << 63), (1 << 63) - 1), st.floats(allow_nan=False),
                   st.text(max_size=8), st.binary(max_size=8), st.none())


@given(st.dictionaries(st.from_regex(r"[a-z][a-z0-9]{0,6}(\.[a-z][a-z0-9]{0,4})?", fullmatch=True), _value, max_size=6))
@settings(max_examples=60)
def test_random_sets_round_trip_binary_and_rfh2(items: dict[str, object]) -> None:
    ps = PropertySet(items)
    assert list(model.unpack(model.pack(ps)).typed_items()) == list(ps.typed_items())
    back = PropertySet()
    for text in build_folders(ps):
        back.update_from(folder_properties(text) or {})
    assert dict(back) == dict(ps)
    assert {k: back.type_of(k) for k in back} == {k: ps.type_of(k) for k in ps}


# -- MQSETMP ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "reason"), [
    ("", C.MQRC_PROPERTY_NAME_LENGTH_ERR),
    ("a" * 4096, C.MQRC_PROPERTY_NAME_LENGTH_ERR),
    ("a..b", C.MQRC_PROPERTY_NAME_ERROR),
    (".a", C.MQRC_PROPERTY_NAME_ERROR),
    ("a.", C.MQRC_PROPERTY_NAME_ERROR),
    ("1abc", C.MQRC_PROPERTY_NAME_ERROR),
    ("a-b", C.MQRC_PROPERTY_NAME_ERROR),
    ("colo%", C.MQRC_PROPERTY_NAME_ERROR),
    ("JMSFoo", C.MQRC_PROPERTY_NAME_ERROR),
    ("usr.JMSFoo", C.MQRC_PROPERTY_NAME_ERROR),
    ("mqext.Arm", C.MQRC_PROPERTY_NAME_ERROR),
    ("MQfoo", C.MQRC_PROPERTY_NAME_ERROR),
    ("Root.MQMD.Nonsense", C.MQRC_PROPERTY_NAME_ERROR),
    ("NULL", C.MQRC_PROPERTY_NAME_ERROR),
    ("usr.between", C.MQRC_PROPERTY_NAME_ERROR),
])
def test_set_refuses_bad_names_and_changes_nothing(name: str, reason: int) -> None:
    h = MessageHandleState()
    h.set("keep", 1, C.MQTYPE_INT32)
    with pytest.raises(MQError) as exc:
        h.set(name, "v", C.MQTYPE_STRING)
    assert (exc.value.comp, exc.value.reason) == (C.MQCC_FAILED, reason)
    assert dict(h.props) == {"keep": 1}


def test_no_validation_accepts_reserved_names_but_not_empty_ones() -> None:
    h = MessageHandleState(C.MQCMHO_NO_VALIDATION)
    h.set("mqext.Arm", "x", C.MQTYPE_STRING)
    with pytest.raises(MQError) as exc:
        h.set("", "x", C.MQTYPE_STRING)
    assert exc.value.reason == C.MQRC_PROPERTY_NAME_LENGTH_ERR


def test_allowed_names() -> None:
    h = MessageHandleState()
    for name in ("color", "a.b.c", "mq_usr.x", "_x$1", "jms.Dst", "mcd.Type", "notNULL"):
        h.set(name, "v", C.MQTYPE_STRING)
    assert len(h.props) == 7


@pytest.mark.parametrize(("name", "ptype", "value", "ok"), [
    ("JMSPriority", C.MQTYPE_INT32, 5, True),
    ("JMSPriority", C.MQTYPE_STRING, "5", False),
    ("JMSType", C.MQTYPE_STRING, "t", True),
    ("JMSExpiration", C.MQTYPE_INT32, 1, False),
    ("Root.MQMD.Priority", C.MQTYPE_INT32, 3, True),
    ("Root.MQMD.MsgId", C.MQTYPE_STRING, "x", False),
    ("Root.MQMD.Format", C.MQTYPE_STRING, "MQSTR", True),
    ("color", 12345, "x", False),  # not an MQTYPE_*
    ("n", C.MQTYPE_INT8, 300, False),  # does not fit
    ("n", C.MQTYPE_INT32, "7", False),  # not an integer
])
def test_set_type_rules(name: str, ptype: int, value: object, ok: bool) -> None:
    h = MessageHandleState()
    if ok:
        h.set(name, value, ptype)
        return
    with pytest.raises(MQError) as exc:
        h.set(name, value, ptype)
    assert (exc.value.comp, exc.value.reason) == (C.MQCC_FAILED, C.MQRC_PROPERTY_TYPE_ERROR)


def test_jms_names_live_in_their_folders_and_mqmd_names_never_travel() -> None:
    h = MessageHandleState()
    h.set("JMSType", "order", C.MQTYPE_STRING)
    h.set("JMSPriority", 7, C.MQTYPE_INT32)
    h.set("Root.MQMD.Priority", 3, C.MQTYPE_INT32)
    assert h.inquire("JMSType").value == "order"
    assert dict(h.outgoing()) == {"mcd.Type": "order", "jms.Pri": 7}


def test_options_and_handle_errors() -> None:
    with pytest.raises(MQError) as exc:
        MessageHandleState(99)
    assert exc.value.reason == C.MQRC_CMHO_ERROR
    h = MessageHandleState()
    with pytest.raises(MQError) as exc:
        h.set("a", "b", C.MQTYPE_STRING, options=3)
    assert exc.value.reason == C.MQRC_SMPO_ERROR
    with pytest.raises(MQError) as exc:
        h.inquire("a", C.MQIMPO_INQ_NEXT | C.MQIMPO_INQ_PROP_UNDER_CURSOR)
    assert exc.value.reason == C.MQRC_IMPO_ERROR
    with pytest.raises(MQError) as exc:
        h.delete("a", 7)
    assert exc.value.reason == C.MQRC_DMPO_ERROR


# -- MQINQMP ---------------------------------------------------------------------------------

def test_inquire_every_type_as_set() -> None:
    h = MessageHandleState()
    for name, value, t in ALL_TYPES:
        h.set(name, value, t)
    for name, value, t in ALL_TYPES:
        got = h.inquire(name)
        assert (got.name, got.type) == (name, t)
        assert got.value == value or (isinstance(value, float) and math.isclose(got.value, value))  # type: ignore[arg-type]


def test_wildcards_walk_in_order_then_stop() -> None:
    h = MessageHandleState()
    for name in ("a.x", "b", "a.y", "a.z.w"):
        h.set(name, name, C.MQTYPE_STRING)
    seen = [h.inquire("a.%").name]
    while True:
        try:
            seen.append(h.inquire("a.%", C.MQIMPO_INQ_NEXT).name)
        except MQError as exc:
            assert (exc.comp, exc.reason) == (C.MQCC_FAILED, C.MQRC_PROPERTY_NOT_AVAILABLE)
            break
    assert seen == ["a.x", "a.y", "a.z.w"]
    assert h.inquire("%").name == "a.x"
    assert h.inquire("x", C.MQIMPO_INQ_PROP_UNDER_CURSOR).name == "a.x"


def test_usr_prefix_names_the_same_property() -> None:
    h = MessageHandleState()
    h.set("usr.color", "red", C.MQTYPE_STRING)
    assert h.inquire("color").value == "red"


def test_value_too_big_is_a_warning_with_the_value_truncated_and_under_the_cursor() -> None:
    h = MessageHandleState()
    h.set("b", "y", C.MQTYPE_STRING)
    h.set("a", "é" * 50, C.MQTYPE_STRING)  # 100 bytes in UTF-8
    h.set("c", b"\1" * 10, C.MQTYPE_BYTE_STRING)
    assert h.inquire("%").name == "b"
    with pytest.raises(ValueTooBig) as exc:
        h.inquire("%", C.MQIMPO_INQ_NEXT, value_buffer=63)
    assert (exc.value.comp, exc.value.reason, exc.value.data_length) == (C.MQCC_WARNING, C.MQRC_PROPERTY_VALUE_TOO_BIG,
                                                                           100)
    assert exc.value.inquired.value == "é" * 31 and exc.value.inquired.name == "a"  # cut on a character
    again = h.inquire("%", C.MQIMPO_INQ_PROP_UNDER_CURSOR, value_buffer=100)  # IBM's advice: read it whole
    assert (again.name, again.value) == ("a", "é" * 50)
    assert h.inquire("%", C.MQIMPO_INQ_NEXT).name == "c"  # the walk goes on after it
    with pytest.raises(ValueTooBig) as exc:
        h.inquire("c", value_buffer=4)
    assert exc.value.inquired.value == b"\1" * 4


def test_inquiry_returns_jms_and_mqps_names_under_their_synonyms() -> None:
    h = MessageHandleState()
    h.set("JMSExpiration", 5, C.MQTYPE_INT64)
    h.set("JMSType", "t", C.MQTYPE_STRING)
    h.set("usr.color", "red", C.MQTYPE_STRING)
    h.props.set("mqps.Top", "a/b")  # as an MQRFH2 put brings it
    h.props.set("mcd.Msd", "jms_text")
    names = [h.inquire("%").name]
    while True:
        try:
            names.append(h.inquire("%", C.MQIMPO_INQ_NEXT).name)
        except MQError:
            break
    assert names == ["JMSExpiration", "JMSType", "color", "MQTopicString", "mcd.Msd"]  # each once
    assert h.inquire("jms.Exp").name == "JMSExpiration" and h.inquire("J%").value == 5
    assert h.inquire("MQTopicString").value == "a/b" and h.inquire("mqps.%").name == "MQTopicString"
    assert h.inquire("mcd.%").name == "JMSType"


def test_publication_properties_are_inquired_under_their_mq_names() -> None:
    h = MessageHandleState()
    h.props.set("mqps.Top", "a/b")  # as the queue manager writes them on a publication's copy
    h.props.set("mqps.Sud", "desk")
    h.props.set("mqps.Ret", True, C.MQTYPE_BOOLEAN)
    assert h.inquire("MQSubUserData").value == "desk" and h.inquire("mqps.Sud").name == "MQSubUserData"
    assert h.inquire("MQIsRetained").value is True and h.inquire("mqps.Ret").name == "MQIsRetained"
    assert h.inquire("MQTopicString").value == "a/b"


def test_missing_property() -> None:
    h = MessageHandleState()
    with pytest.raises(MQError) as exc:
        h.inquire("nothere")
    assert (exc.value.comp, exc.value.reason) == (C.MQCC_FAILED, C.MQRC_PROPERTY_NOT_AVAILABLE)


def test_delete() -> None:
    h = MessageHandleState()
    h.set("a", 1, C.MQTYPE_INT32)
    assert h.delete("a") is None and "a" not in h.props
    warning = h.delete("a")
    assert warning is not None and (warning.comp, warning.reason) == (C.MQCC_WARNING, C.MQRC_PROPERTY_NOT_AVAILABLE)
    with pytest.raises(MQError) as exc:
        h.delete("a%")
    assert exc.value.reason == C.MQRC_PROPERTY_NAME_ERROR


def test_set_around_the_cursor() -> None:
    h = MessageHandleState()
    for n in ("a", "b", "c"):
        h.set(n, n, C.MQTYPE_STRING)
    with pytest.raises(MQError) as exc:
        h.set("x", "x", C.MQTYPE_STRING, options=C.MQSMPO_SET_PROP_AFTER_CURSOR)
    assert exc.value.reason == C.MQRC_PROPERTY_NOT_AVAILABLE
    h.inquire("b")
    h.set("x", "x", C.MQTYPE_STRING, options=C.MQSMPO_SET_PROP_AFTER_CURSOR)
    h.set("w", "w", C.MQTYPE_STRING, options=C.MQSMPO_SET_PROP_BEFORE_CURSOR)
    h.set("b", "B", C.MQTYPE_STRING, options=C.MQSMPO_SET_PROP_UNDER_CURSOR)
    assert list(h.props.items()) == [("a", "a"), ("w", "w"), ("b", "B"), ("x", "x"), ("c", "c")]


# -- MQIMPO_CONVERT_TYPE ----------------------------------------------------------------------

S, B, BS = C.MQTYPE_STRING, C.MQTYPE_BOOLEAN, C.MQTYPE_BYTE_STRING
I8, I16, I32, I64 = C.MQTYPE_INT8, C.MQTYPE_INT16, C.MQTYPE_INT32, C.MQTYPE_INT64
F32, F64 = C.MQTYPE_FLOAT32, C.MQTYPE_FLOAT64
OK, NOCONV, NUMFMT = "ok", C.MQRC_PROP_CONV_NOT_SUPPORTED, C.MQRC_PROP_NUMBER_FORMAT_ERROR


@pytest.mark.parametrize(("ptype", "value", "want", "expect"), [
    (B, True, S, "TRUE"), (B, False, S, "FALSE"), (B, True, I8, 1), (B, False, I64, 0), (B, True, F64, NOCONV),
    (B, True, BS, NOCONV),
    (I8, -5, I16, -5), (I8, 5, I64, 5), (I16, 5, I8, NOCONV), (I32, 5, I64, 5), (I64, 5, I32, NOCONV),
    (I32, -42, S, "-42"), (I32, 1, B, NOCONV), (I32, 1, F64, NOCONV), (I64, 1, BS, NOCONV),
    (F32, 1.5, F64, 1.5), (F64, 1.5, F32, NOCONV), (F64, 0.25, S, "0.25"), (F32, 1.0, I32, NOCONV),
    (S, "TRUE", B, True), (S, "false", B, False), (S, "1", B, True), (S, "yes", B, NUMFMT),
    (S, " 12 ", I8, 12), (S, "300", I8, NUMFMT), (S, "1.5", I32, NUMFMT), (S, "-7", I64, -7),
    (S, "2.5", F32, 2.5), (S, "1e3", F64, 1000.0), (S, "x", F64, NUMFMT), (S, "ab", BS, NOCONV),
    (BS, b"\x01", S, NOCONV), (BS, b"\x01", I32, NOCONV),
    (C.MQTYPE_NULL, None, I32, None), (I32, 3, 12345, C.MQRC_PROPERTY_TYPE_ERROR),
])
def test_conversion_table(ptype: int, value: object, want: int, expect: object) -> None:
    h = MessageHandleState()
    h.set("p", value, ptype)
    if isinstance(expect, int) and not isinstance(expect, bool) and expect > 2000 and want not in (I8, I16, I32, I64):
        with pytest.raises(MQError) as exc:
            h.inquire("p", C.MQIMPO_CONVERT_TYPE, want)
        assert (exc.value.comp, exc.value.reason) == (C.MQCC_FAILED, expect)
        return
    if expect in (NOCONV, NUMFMT, C.MQRC_PROPERTY_TYPE_ERROR):
        with pytest.raises(MQError) as exc:
            h.inquire("p", C.MQIMPO_CONVERT_TYPE, want)
        assert (exc.value.comp, exc.value.reason) == (C.MQCC_FAILED, expect)
        return
    got = h.inquire("p", C.MQIMPO_CONVERT_TYPE, want)
    assert got.value == expect and type(got.value) is type(expect)
    assert got.type == (C.MQTYPE_NULL if value is None else want)
    # Without MQIMPO_CONVERT_TYPE the requested Type is ignored.
    assert h.inquire("p", C.MQIMPO_NONE, want).type == ptype


def test_name_rules_are_a_pure_function() -> None:
    rules.check_name("a.b%", wildcard=True)
    rules.check_name("%", wildcard=True)
    with pytest.raises(MQError):
        rules.check_name("a%b", wildcard=True)


# -- MQRFH2 folders and the stored message -------------------------------------------------------

def test_folders_parse_typed_with_descriptors() -> None:
    ps = folder_properties("<usr><n dt='i2'>7</n><f dt='r4'>1.5</f><z xsi:nil='true'></z>"
                           "<c context='user' copy='reply,report'>v</c></usr>")
    assert ps is not None
    assert {k: ps.type_of(k) for k in ps} == {"n": I16, "f": F32, "z": C.MQTYPE_NULL, "c": S}
    assert ps.property("c").pd == Descriptor(C.MQPD_SUPPORT_OPTIONAL, C.MQPD_USER_CONTEXT,
                                             C.MQCOPY_REPLY | C.MQCOPY_REPORT)
    assert folder_properties("<psc><Command>x</Command></psc>") is None
    assert folder_properties("<acme content='properties'><g><e>1</e></g></acme>") == {"acme.g.e": "1"}


def test_absorb_keeps_non_property_folders_and_rechains() -> None:
    # Two headers, the first big-endian with only properties (dropped), the second little-endian and mixed.
    h2 = MQRFH2(("<usr><a>1</a></usr>", "<psc><Command>x</Command></psc>"), C.MQENC_NATIVE, 1208, C.MQFMT_STRING)
    h1 = MQRFH2(("<jms><Dst>queue:///Q</Dst></jms>",), C.MQENC_NATIVE, 1208, C.MQFMT_RF_HEADER_2)
    data = h1.pack(big_endian=True) + h2.pack(big_endian=False) + b"body"
    split = absorb(data, C.MQFMT_RF_HEADER_2, 273, 1208)
    assert split is not None
    assert dict(split.props) == {"jms.Dst": "queue:///Q", "a": "1"}
    assert split.format.rstrip() == "MQHRF2" and split.encoding == 273
    rest, end = MQRFH2.unpack_from(split.data, 0, big_endian=True)  # now in the descriptor's byte order
    assert rest.folders == ("<psc><Command>x</Command></psc>",) and rest.format.rstrip() == "MQSTR"
    assert split.data[end:] == b"body"


@pytest.mark.parametrize(("data", "reason"), [
    (b"RFH \x02\x00\x00\x00\xff\x00\x00\x00", C.MQRC_RFH_ERROR),
    (MQRFH2(("<usr><a>1</usr>",)).pack() + b"x", C.MQRC_RFH_FORMAT_ERROR),
    (MQRFH2(("<usr><a dt='i4'>x</a></usr>",)).pack() + b"x", C.MQRC_RFH_FORMAT_ERROR),
])
def test_put_refuses_a_malformed_mqrfh2(env: Env, data: bytes, reason: int) -> None:
    env.define("Q")
    h = env.open("Q")
    with pytest.raises(MQError) as exc:
        env.qm.put(env.hconn, h, MQMD(format=C.MQFMT_RF_HEADER_2), PutOptions(), data)
    assert (exc.value.comp, exc.value.reason) == (C.MQCC_FAILED, reason)
    assert env.depth("Q") == 0


def test_jms_fields_fill_what_the_descriptor_left_to_the_queue_manager(env: Env) -> None:
    env.define("Q")
    h = env.open("Q")
    folders = ("<jms><Dst>queue:///Q</Dst><Pri>7</Pri><Dlv>2</Dlv><Cid>abc</Cid><Rto>queue://QM2/R</Rto></jms>",)
    data = MQRFH2(folders, C.MQENC_NATIVE, 1208, C.MQFMT_STRING).pack() + b"x"
    env.qm.put(env.hconn, h, MQMD(format=C.MQFMT_RF_HEADER_2), PutOptions(), data)
    env.qm.put(env.hconn, h, MQMD(format=C.MQFMT_RF_HEADER_2, priority=2, persistence=0), PutOptions(), data)
    first, second = (env.qm.get(env.hconn, h, MQMD(), GetOptions(msg_handle=True), 100) for _ in range(2))
    assert isinstance(first, GetResult) and isinstance(second, GetResult)
    assert (first.md.priority, first.md.persistence, first.md.correl_id.rstrip(b"\0")) == (7, 1, b"abc")
    assert (first.md.reply_to_q, first.md.reply_to_q_mgr, first.md.format.rstrip()) == ("R", "QM2", "MQSTR")
    assert (second.md.priority, second.md.persistence) == (2, 0)  # the putter's own values stay
    assert first.data == b"x" and first.properties is not None and first.properties["jms.Pri"] == "7"


def test_typed_properties_survive_a_restart(env: Env) -> None:
    env.define("Q")
    h = env.open("Q")
    env.qm.put(env.hconn, h, MQMD(persistence=C.MQPER_PERSISTENT), PutOptions(), b"x", _full_set())
    folders = ("<acme><x>1</x></acme>",)
    env.define("V6", PROPCTL=C.MQPROP_V6COMPAT)
    v6 = env.open("V6")
    as_put = MQRFH2((*folders, "<usr><k>v</k></usr>"), C.MQENC_NATIVE, 1208, C.MQFMT_STRING).pack() + b"y"
    env.qm.put(env.hconn, v6, MQMD(persistence=C.MQPER_PERSISTENT, format=C.MQFMT_RF_HEADER_2), PutOptions(), as_put)
    restart(env)
    got = env.qm.get(env.hconn, env.open("Q"), MQMD(), GetOptions(msg_handle=True), 100)
    assert isinstance(got, GetResult) and got.properties is not None
    assert list(got.properties.typed_items()) == list(_full_set().typed_items())
    got = env.qm.get(env.hconn, env.open("V6"), MQMD(), GetOptions(msg_handle=True), 1000)
    assert isinstance(got, GetResult) and got.data == as_put  # still exactly as put


def test_a_put_resets_the_property_cursor() -> None:
    import ferrymq.pymqi as pymqi
    from ferrymq.pymqi.handles import outgoing

    h = pymqi.MessageHandle()
    h.properties.set("a", "1")
    assert h.properties.get("%") == ("1", b"a")
    assert h.properties.get("x", impo_options=C.MQIMPO_INQ_PROP_UNDER_CURSOR) == "1"
    props = outgoing(pymqi.PMO(Version=C.MQPMO_VERSION_3, NewMsgHandle=h.msg_handle))
    assert props is not None and dict(props) == {"a": "1"}
    with pytest.raises(pymqi.MQMIError) as exc:  # IBM: the cursor is reset by an MQPUT naming the handle
        h.properties.get("x", impo_options=C.MQIMPO_INQ_PROP_UNDER_CURSOR)
    assert (exc.value.comp, exc.value.reason) == (C.MQCC_FAILED, C.MQRC_PROPERTY_NOT_AVAILABLE)
    h.dlt()
