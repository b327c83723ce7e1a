"""PROPCTL(V6COMPAT) holds only when every queue the message was placed on between putter and
getter has it: the alias opened and the queue it resolves to at put, the backout queue a
poison message moves to, the queue (or alias) the getter opens."""

from __future__ import annotations

import pytest
from engine_helpers import Env

from ferrymq.engine.api import GetOptions, GetResult, PutOptions
from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet
from ferrymq.properties.rfh2map import folder_properties
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.rfh2 import MQRFH2

V6, COMPAT = C.MQPROP_V6COMPAT, C.MQPROP_COMPATIBILITY
FOLDERS = ("<usr><color>red</color></usr>", "<acme><x>1</x></acme>")
AS_PUT = MQRFH2(FOLDERS, C.MQENC_NATIVE, 1208, C.MQFMT_STRING).pack() + b"body"


def _alias(env: Env, name: str, target: str, propctl: int) -> None:
    env.qm.objects.define("QALIAS", name, {"TARGET": target, "PROPCTL": propctl})


def _put(env: Env, qname: str) -> None:
    handle = PropertySet()
    handle.set("n", 7)
    h = env.open(qname, C.MQOO_OUTPUT)
    env.qm.put(env.hconn, h, MQMD(format=C.MQFMT_RF_HEADER_2), PutOptions(), AS_PUT, handle)


def _get(env: Env, qname: str, syncpoint: bool = False) -> GetResult:
    h = env.open(qname, C.MQOO_INPUT_AS_Q_DEF)
    opts = C.MQGMO_SYNCPOINT if syncpoint else C.MQGMO_NO_SYNCPOINT
    res = env.qm.get(env.hconn, h, MQMD(), GetOptions(opts, msg_handle=True), 1 << 16)
    assert isinstance(res, GetResult)
    return res


def _as_put(res: GetResult) -> bool:
    """True: the V6COMPAT rule applied (data exactly as put, only the handle's own property
    in the handle); False: the MQRFH2 was read as an ordinary put reads it."""
    assert res.properties is not None
    if res.data == AS_PUT:
        assert dict(res.properties) == {"n": 7}
        return True
    assert dict(res.properties) == {"color": "red", "n": 7}
    kept, end = MQRFH2.unpack_from(res.data)  # the vendor folder stays in the data
    assert kept.folders == ("<acme><x>1</x></acme>",) and res.data[end:] == b"body"
    assert all(folder_properties(f) is None for f in kept.folders)
    return False


@pytest.mark.parametrize(("alias_at_put", "alias_at_get", "local", "expect"), [
    (None, None, V6, True),
    (V6, None, V6, True),
    (None, V6, V6, True),
    (V6, V6, V6, True),
    (COMPAT, None, V6, False),  # put through an alias that is not V6COMPAT
    (None, COMPAT, V6, False),  # got through an alias that is not V6COMPAT
    (V6, V6, COMPAT, False),  # the local queue is not V6COMPAT
    (V6, None, COMPAT, False),
])
def test_every_queue_on_the_way_must_be_v6compat(alias_at_put: int | None, alias_at_get: int | None, local: int,
                                                  expect: bool) -> None:
    env = Env()
    env.define("LQ", PROPCTL=local)
    put_q, get_q = "LQ", "LQ"
    if alias_at_put is not None:
        _alias(env, "PUT.ALIAS", "LQ", alias_at_put)
        put_q = "PUT.ALIAS"
    if alias_at_get is not None:
        _alias(env, "GET.ALIAS", "LQ", alias_at_get)
        get_q = "GET.ALIAS"
    _put(env, put_q)
    assert _as_put(_get(env, get_q)) is expect


@pytest.mark.parametrize(("boq", "expect"), [(V6, True), (COMPAT, False)])
def test_a_backout_queue_is_a_queue_the_message_crossed(boq: int, expect: bool) -> None:
    env = Env()
    env.define("BO", PROPCTL=boq)
    env.define("LQ", PROPCTL=V6, BOTHRESH=1, BOQNAME="BO")
    _put(env, "LQ")
    _get(env, "LQ", syncpoint=True)
    env.qm.backout(env.hconn)  # BackoutCount reaches BOTHRESH: moved to BO
    assert env.depth("LQ") == 0 and env.depth("BO") == 1
    got = _get(env, "BO")
    assert _as_put(got) is expect
    assert got.md.backout_count == 1


def test_a_malformed_mqrfh2_leaving_v6compat_stays_as_put() -> None:
    env = Env()
    env.define("BO")
    env.define("LQ", PROPCTL=V6, BOTHRESH=1, BOQNAME="BO")
    bad = MQRFH2(("<usr><a>1</usr>",), C.MQENC_NATIVE, 1208, C.MQFMT_STRING).pack() + b"x"
    h = env.open("LQ")
    env.qm.put(env.hconn, h, MQMD(format=C.MQFMT_RF_HEADER_2), PutOptions(), bad)  # V6COMPAT does not parse
    _get(env, "LQ", syncpoint=True)
    env.qm.backout(env.hconn)
    got = _get(env, "BO")
    assert got.data == bad and got.md.format.rstrip() == "MQHRF2"


def test_a_malformed_v6compat_mqrfh2_is_delivered_as_put_under_any_rule() -> None:
    env = Env()
    env.define("LQ", PROPCTL=V6)
    _alias(env, "ALL.ALIAS", "LQ", C.MQPROP_ALL)
    bad = MQRFH2(("<usr><a>1</usr>",), C.MQENC_NATIVE, 1208, C.MQFMT_STRING).pack() + b"x"
    h = env.open("LQ")
    env.qm.put(env.hconn, h, MQMD(format=C.MQFMT_RF_HEADER_2), PutOptions(), bad)
    got = _get(env, "ALL.ALIAS")  # not a V6COMPAT getter: the header is read, and does not parse
    assert got.data == bad and got.properties is not None and not got.properties
    assert env.depth("LQ") == 0
