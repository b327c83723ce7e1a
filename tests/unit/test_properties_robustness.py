"""What no message may carry is refused at put, and what a message already holds never
stops a get (issue 24): text UTF-8 cannot encode (a lone surrogate), names no MQRFH2 folder
holds, too many properties; a message stored before those refusals (a journal written by an
older version) is delivered with a warning, and no handle-less get is ever broken by it."""

from __future__ import annotations

import pytest
from engine_helpers import Env, reason_of

from ferrymq.engine.api import ObjectDescriptor, PutOptions
from ferrymq.engine.message import KIND_MESSAGE, Message
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.properties import rules
from ferrymq.properties.buffers import Buffer, handle_to_buffer
from ferrymq.properties.handle import MessageHandleState
from ferrymq.properties.model import Property, PropertySet
from ferrymq.properties.rfh2map import folder_properties
from ferrymq.wire import rfh2_folders
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.rfh2 import MQRFH2, unpack_chain

LONE = "a\ud800b"
ASTRAL_LETTER = "\U0001d400"  # MATHEMATICAL BOLD CAPITAL A: a letter past U+FFFF


def _put(env: Env, props: PropertySet | dict[str, object], *, put1: bool = False, queue: str = "Q") -> None:
    if put1:
        env.qm.put1(env.hconn, ObjectDescriptor(object_name=queue), MQMD(), PutOptions(), b"body", props)
    else:
        env.qm.put(env.hconn, env.open(queue, C.MQOO_OUTPUT), MQMD(), PutOptions(), b"body", props)


@pytest.fixture
def env() -> Env:
    e = Env()
    e.define("Q")
    return e


@pytest.mark.parametrize("put1", [False, True], ids=["MQPUT", "MQPUT1"])
@pytest.mark.parametrize("name", ["s", "usr.s", "app.g.s"])
def test_a_string_utf8_cannot_encode_is_refused_at_put(env: Env, put1: bool, name: str) -> None:
    with pytest.raises(MQError) as exc:
        _put(env, {"ok": "fine", name: LONE}, put1=put1)
    assert reason_of(exc) == (C.MQCC_FAILED, C.MQRC_PROP_VALUE_NOT_CONVERTED)
    assert "surrogate" in exc.value.detail
    assert env.depth("Q") == 0
    _put(env, {name: "a\U0001f600b"}, put1=put1)  # a character past U+FFFF is fine in a value
    assert env.depth("Q") == 1


@pytest.mark.parametrize("name", ["", "\ud800", "a\udc00", f"usr.{ASTRAL_LETTER}", "a b", "a<b", "a..b", "a.",
                                  ".a", "a%", "1a", "a'b", "a=b", ".".join("p" * 17)])
def test_names_no_message_carries_are_refused_at_put(env: Env, name: str) -> None:
    for put1 in (False, True):
        with pytest.raises(MQError) as exc:
            _put(env, {name: 1}, put1=put1)
        assert reason_of(exc) == (C.MQCC_FAILED, C.MQRC_PROPERTY_NAME_ERROR)
    assert env.depth("Q") == 0


def test_a_name_past_the_length_limit_is_refused_at_put(env: Env) -> None:
    with pytest.raises(MQError) as exc:
        _put(env, {"a" * (C.MQ_MAX_PROPERTY_NAME_LENGTH + 1): 1})
    assert reason_of(exc) == (C.MQCC_FAILED, C.MQRC_PROPERTY_NAME_LENGTH_ERR)


@pytest.mark.parametrize("name", ["my-prop", "café", "a$b", "$a", "a:b", "mqps.Top", "jms.Dst", "Root.x",
                                  ".".join("p" * 16)])
def test_names_a_folder_holds_are_put_and_come_back_in_an_mqrfh2(env: Env, name: str) -> None:
    # IBM puts what a handle made with MQCMHO_NO_VALIDATION holds; only MQSETMP validates.
    env.define("ALL", PROPCTL=C.MQPROP_ALL)
    _put(env, {name: "v"}, queue="ALL")
    got = env.get(env.open("ALL"))
    assert (got.comp, got.reason) == (C.MQCC_OK, C.MQRC_NONE)
    headers, _, _, _ = unpack_chain(got.data, got.md.format, got.md.encoding)
    back: dict[str, object] = {}
    for text in headers[0].folders:
        back.update(folder_properties(text) or {})
    assert back == {name: "v"}


def test_mqsetmp_refuses_names_ibm_refuses() -> None:
    h = MessageHandleState()
    with pytest.raises(MQError) as exc:
        h.set("", 1, C.MQTYPE_INT32)
    assert reason_of(exc) == (C.MQCC_FAILED, C.MQRC_PROPERTY_NAME_LENGTH_ERR)  # IBM: VSLength 0
    for name in (f"a{ASTRAL_LETTER}", "a\ud800", "Body", "Body.x", "Root", "Root.x", "usr.JMSx", "a..b", "a.", "a%"):
        with pytest.raises(MQError) as exc:
            h.set(name, 1, C.MQTYPE_INT32)
        assert reason_of(exc) == (C.MQCC_FAILED, C.MQRC_PROPERTY_NAME_ERROR), name
    h.set("Root.MQMD.Priority", 5, C.MQTYPE_INT32)
    h.set("Bodyguard", 1, C.MQTYPE_INT32)
    assert not h.props.get("a.")


def test_mqsetmp_keeps_a_value_put_refuses(env: Env) -> None:
    # IBM keeps a value in the CCSID MQSETMP was given and converts it when the message is put.
    h = MessageHandleState()
    h.set("s", LONE, C.MQTYPE_STRING)
    with pytest.raises(MQError) as exc:
        _put(env, h.outgoing())
    assert reason_of(exc) == (C.MQCC_FAILED, C.MQRC_PROP_VALUE_NOT_CONVERTED)
    with pytest.raises(MQError) as exc:
        handle_to_buffer(h, "%", 0, Buffer(b"", C.MQFMT_STRING, C.MQENC_NATIVE, 1208), 1 << 20)
    assert reason_of(exc) == (C.MQCC_FAILED, C.MQRC_PROP_VALUE_NOT_CONVERTED)
    assert h.props["s"] == LONE  # MQMHBUF changed nothing


def test_a_handle_without_validation_puts_what_a_folder_holds_only(env: Env) -> None:
    h = MessageHandleState(C.MQCMHO_NO_VALIDATION)
    h.set("a b", 1, C.MQTYPE_INT32)  # no validation: MQSETMP takes it
    with pytest.raises(MQError) as exc:
        _put(env, h.outgoing())
    assert reason_of(exc) == (C.MQCC_FAILED, C.MQRC_PROPERTY_NAME_ERROR)


def test_too_many_properties_are_refused_at_put(env: Env) -> None:
    limit = rules.MAX_MESSAGE_PROPERTIES
    _put(env, {f"p{i}": i for i in range(limit)})
    with pytest.raises(MQError) as exc:
        _put(env, {f"p{i}": i for i in range(limit + 1)})
    assert reason_of(exc) == (C.MQCC_FAILED, C.MQRC_PROPERTIES_TOO_BIG)
    assert str(limit) in exc.value.detail
    # A handle's and an MQRFH2's together.
    rfh2 = MQRFH2(("<usr><extra>1</extra></usr>",), C.MQENC_NATIVE, 1208, C.MQFMT_STRING).pack()
    with pytest.raises(MQError) as exc:
        env.qm.put(env.hconn, env.open("Q", C.MQOO_OUTPUT), MQMD(format=C.MQFMT_RF_HEADER_2), PutOptions(), rfh2,
                   {f"p{i}": i for i in range(limit)})
    assert reason_of(exc) == (C.MQCC_FAILED, C.MQRC_PROPERTIES_TOO_BIG)
    assert env.depth("Q") == 1


@pytest.mark.parametrize("folders, each", [(1, rfh2_folders.MAX_ELEMENTS), (1000, 1000), (3, 4000)])
def test_an_mqrfh2_past_the_element_bound_is_refused(env: Env, folders: int, each: int) -> None:
    # The report's shape: 1,000 folders of 1,000 elements (4 MB), read no further than the bound.
    texts = ("<usr>" + "<a/>" * each + "</usr>",) * folders
    data = MQRFH2(texts, C.MQENC_NATIVE, 1208, C.MQFMT_STRING).pack()
    with pytest.raises(MQError) as exc:
        env.qm.put(env.hconn, env.open("Q", C.MQOO_OUTPUT), MQMD(format=C.MQFMT_RF_HEADER_2), PutOptions(), data)
    assert reason_of(exc) == (C.MQCC_FAILED, C.MQRC_RFH_FORMAT_ERROR)
    assert f"{rfh2_folders.MAX_ELEMENTS} elements" in exc.value.detail
    assert env.depth("Q") == 0


def test_an_mqrfh2_at_the_element_bound_is_put(env: Env) -> None:
    per = rfh2_folders.MAX_ELEMENTS // 4 - 1  # each folder's own element counts
    texts = tuple(f"<usr>{''.join(f'<e{n}_{i}>1</e{n}_{i}>' for i in range(per))}</usr>" for n in range(4))
    data = MQRFH2(texts, C.MQENC_NATIVE, 1208, C.MQFMT_STRING).pack()
    env.qm.put(env.hconn, env.open("Q", C.MQOO_OUTPUT), MQMD(format=C.MQFMT_RF_HEADER_2), PutOptions(), data)
    assert env.depth("Q") == 1


# -- messages stored before the refusals ---------------------------------------------------

def _stored_before_the_fix(env: Env, queue: str, props: PropertySet, data: bytes = b"poison") -> None:
    """A persistent message record as an older version wrote it: straight into the journal,
    past every check a put makes today."""
    q = env.qm.objects.require(queue)
    md = MQMD(persistence=C.MQPER_PERSISTENT, priority=0, format=C.MQFMT_STRING)
    msg = Message(queue, env.qm.next_sequence(q), md, data,
                  env.clock.now(), False)
    msg.properties = props
    env.journal.add(env.qm.new_record_id(), KIND_MESSAGE, msg.encode())
    env.journal.sync()


def _restart(env: Env) -> None:
    env.journal.sync()
    env.journal = env.journal.crash()
    env.qm = QueueManager.start("QM1", env.journal, env.clock)
    env.hconn = env.qm.connect()


def _rfh2_props(data: bytes, fmt: str, encoding: int) -> dict[str, object]:
    headers, _, _, _ = unpack_chain(data, fmt, encoding)
    out: dict[str, object] = {}
    for h in headers:
        for text in h.folders:
            out.update(folder_properties(text) or {})
    return out


@pytest.mark.parametrize("propctl", [C.MQPROP_COMPATIBILITY, C.MQPROP_ALL, C.MQPROP_FORCE_MQRFH2, C.MQPROP_V6COMPAT])
def test_a_stored_value_utf8_cannot_encode_is_delivered_with_a_warning(env: Env, propctl: int) -> None:
    env.define("OLD", PROPCTL=propctl)
    _stored_before_the_fix(env, "OLD", PropertySet({"colour": LONE, "n": 7}))
    h = env.open("OLD", C.MQOO_OUTPUT)
    env.put(h, b"next", persistence=C.MQPER_PERSISTENT)
    _restart(env)  # the queue manager starts on it
    h = env.open("OLD")
    got = env.get(h)  # no handle: the properties come in an MQRFH2
    assert (got.comp, got.reason) == (C.MQCC_WARNING, C.MQRC_PROP_VALUE_NOT_CONVERTED)
    assert got.md.format == C.MQFMT_RF_HEADER_2.rstrip()
    assert _rfh2_props(got.data, got.md.format, got.md.encoding) == {"colour": "a\ufffdb", "n": 7}
    assert got.data.endswith(b"poison")
    assert env.get(h).data == b"next"  # the get took it: nothing stays first on the queue
    assert env.depth("OLD") == 0


def test_a_stored_value_reaches_a_handle_as_it_is(env: Env) -> None:
    _stored_before_the_fix(env, "Q", PropertySet({"colour": LONE}))
    _restart(env)
    got = env.qm.get(env.hconn, env.open("Q"), MQMD(), _gmo_with_handle(), 1 << 20)
    assert (got.comp, got.reason) == (C.MQCC_OK, C.MQRC_NONE)  # type: ignore[union-attr]
    assert got.properties == {"colour": LONE}  # type: ignore[union-attr]


def _gmo_with_handle() -> object:
    from ferrymq.engine.api import GetOptions
    return GetOptions(C.MQGMO_NO_WAIT, 0, 0, msg_handle=True)


def test_a_stored_name_no_folder_holds_is_left_out_with_a_warning(env: Env) -> None:
    props = PropertySet()
    props.put("", Property(C.MQTYPE_INT32, 1))
    props.put("a b", Property(C.MQTYPE_INT32, 2))
    props.put("ok", Property(C.MQTYPE_INT32, 3))
    _stored_before_the_fix(env, "Q", props)
    _restart(env)
    got = env.get(env.open("Q"))
    assert (got.comp, got.reason) == (C.MQCC_WARNING, C.MQRC_PROP_NAME_NOT_CONVERTED)
    assert _rfh2_props(got.data, got.md.format, got.md.encoding) == {"ok": 3}


def test_a_truncation_warning_comes_before_the_conversion_one(env: Env) -> None:
    _stored_before_the_fix(env, "Q", PropertySet({"colour": LONE}))
    _restart(env)
    got = env.get(env.open("Q"), C.MQGMO_NO_WAIT | C.MQGMO_ACCEPT_TRUNCATED_MSG, buffer=10)
    assert (got.comp, got.reason) == (C.MQCC_WARNING, C.MQRC_TRUNCATED_MSG_ACCEPTED)
    assert env.depth("Q") == 0


def test_the_command_queue_starts_with_such_a_message_on_it(env: Env) -> None:
    # The command server's first get runs inside start: it must be an ordinary get.
    name = "SYSTEM.ADMIN.COMMAND.QUEUE"
    if env.qm.objects.find(name) is None:
        env.define(name)
    _stored_before_the_fix(env, name, PropertySet({"colour": LONE}), b"not PCF")
    _restart(env)
    got = env.get(env.open(name))
    assert got.reason == C.MQRC_PROP_VALUE_NOT_CONVERTED
    assert env.depth(name) == 0


def test_a_value_where_another_property_needs_a_group_is_carried_in_a_second_folder(env: Env) -> None:
    # Found by tests/property/test_rfh2_fuzz.py: the MQRFH2 written for a getter left one out.
    env.define("ALL", PROPCTL=C.MQPROP_ALL)
    props = {"app.x": 1, "app.x.y": 2, "app.x.y.z": 3, "x": "usr", "x.y": "x folder"}
    _put(env, props, queue="ALL")
    got = env.get(env.open("ALL"))
    assert (got.comp, got.reason) == (C.MQCC_OK, C.MQRC_NONE)
    assert _rfh2_props(got.data, got.md.format, got.md.encoding) == props
