"""A put whose properties come only from its MQRFH2 headers keeps them as put: a getter that
takes the properties as an MQRFH2 receives the putter's headers byte for byte (two headers,
an mcd folder, a folder that is not properties, blank padding, as pymqi's own tests check
against IBM MQ); one that takes them in a handle, or not at all, gets them taken out."""

from __future__ import annotations

import pytest
from engine_helpers import Env

from ferrymq.engine import sequence_access
from ferrymq.engine.api import GetOptions, GetResult, ObjectDescriptor, PutOptions, SubDescriptor
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.rfh2 import MQRFH2

BODY = b"Hello"
FIRST = MQRFH2(("<mcd><Msd>jms_text</Msd></mcd>  ", "<psc><Command>RegSub</Command></psc>"), C.MQENC_NATIVE, 1208,
               C.MQFMT_RF_HEADER_2, name_value_ccsid=1208)
SECOND = MQRFH2(("<usr><colour>red</colour></usr>",), C.MQENC_NATIVE, 1208, C.MQFMT_STRING, name_value_ccsid=1208)
AS_PUT = FIRST.pack() + SECOND.pack() + BODY


def _get(env: Env, hobj: int, options: int = 0, handle: bool = False) -> GetResult:
    res = env.qm.get(env.hconn, hobj, MQMD(), GetOptions(options | C.MQGMO_BROWSE_FIRST, msg_handle=handle), 1 << 16)
    assert isinstance(res, GetResult)
    return res


@pytest.mark.parametrize("propctl", [C.MQPROP_COMPATIBILITY, C.MQPROP_ALL, C.MQPROP_FORCE_MQRFH2])
def test_a_getter_taking_an_mqrfh2_gets_the_headers_as_put(propctl: int) -> None:
    env = Env()
    env.define("Q", PROPCTL=propctl)
    hobj = env.open("Q")
    env.qm.put(env.hconn, hobj, MQMD(format=C.MQFMT_RF_HEADER_2, coded_char_set_id=1208), PutOptions(), AS_PUT)
    res = _get(env, hobj)
    assert (res.data, res.md.format.rstrip()) == (AS_PUT, "MQHRF2")
    assert res.data_length == len(AS_PUT)


def test_a_getter_with_a_handle_or_none_gets_the_property_folders_taken_out() -> None:
    env = Env()
    env.define("Q")
    env.define("NONE", PROPCTL=C.MQPROP_NONE)
    for name in ("Q", "NONE"):
        hobj = env.open(name)
        env.qm.put(env.hconn, hobj, MQMD(format=C.MQFMT_RF_HEADER_2, coded_char_set_id=1208), PutOptions(), AS_PUT)
    q, none = env.open("Q"), env.open("NONE")
    in_handle = _get(env, q, handle=True)
    assert in_handle.properties is not None and dict(in_handle.properties) == {"mcd.Msd": "jms_text", "colour": "red"}
    kept, end = MQRFH2.unpack_from(in_handle.data)  # the folder that is not properties stays, alone
    assert kept.folders == ("<psc><Command>RegSub</Command></psc>",) and in_handle.data[end:] == BODY
    for res in (_get(env, q, C.MQGMO_NO_PROPERTIES), _get(env, none)):
        kept, end = MQRFH2.unpack_from(res.data)
        assert kept.folders == ("<psc><Command>RegSub</Command></psc>",) and res.data[end:] == BODY


def test_a_handle_put_with_an_mqrfh2_is_written_as_one_header() -> None:
    """Properties from a handle as well: merged at the put, so the getter's MQRFH2 is built."""
    env = Env()
    env.define("Q")
    hobj = env.open("Q")
    env.qm.put(env.hconn, hobj, MQMD(format=C.MQFMT_RF_HEADER_2, coded_char_set_id=1208), PutOptions(), AS_PUT,
               {"usr.size": 3})
    res = _get(env, hobj)
    assert res.data != AS_PUT and res.data.endswith(BODY)
    first, _ = MQRFH2.unpack_from(res.data)
    assert any("<size" in f for f in first.folders) and any("<colour>red</colour>" in f for f in first.folders)


def test_a_publication_put_with_an_mqrfh2_carries_each_property_once() -> None:
    """A publication's copies gain properties of their own (mqps): its MQRFH2 is taken apart
    at the put, never kept as put beside them."""
    env = Env()
    res = env.qm.subscribe(env.hconn, SubDescriptor(C.MQSO_CREATE | C.MQSO_MANAGED, object_string="t"))
    env.qm.put1(env.hconn, ObjectDescriptor(object_type=C.MQOT_TOPIC, object_string="t"),
                MQMD(format=C.MQFMT_RF_HEADER_2, coded_char_set_id=1208), PutOptions(), SECOND.pack() + BODY)
    got = env.qm.get(env.hconn, res.hobj, MQMD(), GetOptions(C.MQGMO_NO_WAIT), 1 << 16)
    assert isinstance(got, GetResult)
    header, end = MQRFH2.unpack_from(got.data)
    assert sum(f.count("<colour>") for f in header.folders) == 1
    assert any("<Top>t</Top>" in f for f in header.folders) and got.data[end:] == BODY


def test_a_sequence_reader_gets_the_properties_apart_from_the_data() -> None:
    """The Spark connector's reads (browse by sequence) see what a getter with a handle sees:
    the properties in their map, the data without its property folders."""
    env = Env()
    env.define("Q")
    hobj = env.open("Q")
    env.qm.put(env.hconn, hobj, MQMD(format=C.MQFMT_RF_HEADER_2, coded_char_set_id=1208), PutOptions(), AS_PUT)
    [msg] = sequence_access.browse_range(env.qm, "Q", 0, 10)
    assert msg.properties is not None and dict(msg.properties) == {"mcd.Msd": "jms_text", "colour": "red"}
    kept, end = MQRFH2.unpack_from(msg.data)
    assert kept.folders == ("<psc><Command>RegSub</Command></psc>",) and msg.data[end:] == BODY
    assert env.depth("Q") == 1  # browsed, not taken
