"""Where properties reach a getter: every PROPCTL x every MQGMO property option x (handle
or not) x (message put with a handle, with an MQRFH2 in the data, with both, with
non-standard folders, with the same name in both, with a chain of two headers, as a JMS
client writes it), asserting exactly what the handle and the data hold."""

from __future__ import annotations

import pytest
from engine_helpers import Env, reason_of

from ferrymq.engine.api import GetOptions, GetResult, PutOptions
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet
from ferrymq.properties.rfh2map import folder_properties
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.rfh2 import MQRFH2, unpack_chain

PROPCTLS = [C.MQPROP_COMPATIBILITY, C.MQPROP_NONE, C.MQPROP_ALL, C.MQPROP_FORCE_MQRFH2, C.MQPROP_V6COMPAT]
OPTIONS = [C.MQGMO_PROPERTIES_AS_Q_DEF, C.MQGMO_PROPERTIES_IN_HANDLE, C.MQGMO_NO_PROPERTIES,
           C.MQGMO_PROPERTIES_FORCE_MQRFH2, C.MQGMO_PROPERTIES_COMPATIBILITY]
KINDS = ["handle", "rfh2", "both", "nonstd", "collide", "chain", "jms"]
BODY = b"hello"


def _props(**items: object) -> PropertySet:
    ps = PropertySet()
    for k, v in items.items():
        ps.set(k.replace("__", "."), v)
    return ps


# What each kind of message is put with: handle properties, and the folders of each MQRFH2
# in the chain at the start of the data (None: no MQRFH2).
PUT: dict[str, tuple[PropertySet | None, tuple[tuple[str, ...], ...] | None]] = {
    "handle": (_props(color="red", n=7), None),
    "rfh2": (None, (("<usr><color>red</color><n dt='i4'>7</n></usr>",),)),
    "both": (_props(color="red"), (("<usr><n dt='i4'>7</n></usr>",),)),
    "nonstd": (None, (("<acme><x>1</x></acme>", "<ext content='properties'><y dt='i4'>2</y></ext>"),)),
    # the same name in the handle and the MQRFH2: the handle's value wins
    "collide": (_props(color="red"), (("<usr><color>blue</color><n dt='i4'>7</n></usr>",),)),
    # properties spread over a chain of two headers, a vendor folder in the second
    "chain": (None, (("<mcd><Msd>jms_text</Msd></mcd>",), ("<acme><x>1</x></acme>", "<usr><n dt='i4'>7</n></usr>"))),
    # what a JMS client writes: mcd and jms folders only
    "jms": (None, (("<mcd><Msd>jms_text</Msd></mcd>", "<jms><Dst>queue:///Q</Dst></jms>"),)),
}
# The message's properties as the queue manager holds them, and the non-property folders.
STORED = {"handle": {"color": "red", "n": 7}, "rfh2": {"color": "red", "n": 7}, "both": {"color": "red", "n": 7},
          "nonstd": {"ext.y": 2}, "collide": {"color": "red", "n": 7}, "chain": {"mcd.Msd": "jms_text", "n": 7},
          "jms": {"mcd.Msd": "jms_text", "jms.Dst": "queue:///Q"}}
KEPT = {"nonstd": ["<acme><x>1</x></acme>"], "chain": ["<acme><x>1</x></acme>"]}

# The seed's rules, written out: (PROPCTL or None for "any", option, handle) -> where properties go.
# handle / rfh2 / none / compat (rfh2 when a property is in mcd, jms, usr or mqext, else none) /
# v6 (handle-set properties as the handle rules say, the MQRFH2 exactly as put) / error.
RULES = {
    (None, C.MQGMO_PROPERTIES_IN_HANDLE, True): "handle",
    (None, C.MQGMO_PROPERTIES_IN_HANDLE, False): "error",
    (None, C.MQGMO_NO_PROPERTIES, True): "none",
    (None, C.MQGMO_NO_PROPERTIES, False): "none",
    (None, C.MQGMO_PROPERTIES_FORCE_MQRFH2, True): "rfh2",
    (None, C.MQGMO_PROPERTIES_FORCE_MQRFH2, False): "rfh2",
    (None, C.MQGMO_PROPERTIES_COMPATIBILITY, True): "handle",
    (None, C.MQGMO_PROPERTIES_COMPATIBILITY, False): "compat",
    (C.MQPROP_COMPATIBILITY, 0, True): "handle",
    (C.MQPROP_COMPATIBILITY, 0, False): "compat",
    (C.MQPROP_NONE, 0, True): "handle",
    (C.MQPROP_NONE, 0, False): "none",
    (C.MQPROP_ALL, 0, True): "handle",
    (C.MQPROP_ALL, 0, False): "rfh2",
    (C.MQPROP_FORCE_MQRFH2, 0, True): "rfh2",
    (C.MQPROP_FORCE_MQRFH2, 0, False): "rfh2",
    (C.MQPROP_V6COMPAT, 0, True): "v6",
    (C.MQPROP_V6COMPAT, 0, False): "v6",
}


def _rfh2_body(chain: tuple[tuple[str, ...], ...]) -> bytes:
    out = b""
    for i, folders in enumerate(chain):
        follows = C.MQFMT_STRING if i == len(chain) - 1 else C.MQFMT_RF_HEADER_2
        out += MQRFH2(folders, C.MQENC_NATIVE, 1208, follows).pack()
    return out + BODY


def _put(env: Env, hobj: int, kind: str) -> bytes:
    props, folders = PUT[kind]
    if folders is None:
        md, data = MQMD(format=C.MQFMT_STRING), BODY
    else:
        md, data = MQMD(format=C.MQFMT_RF_HEADER_2, coded_char_set_id=1208), _rfh2_body(folders)
    env.qm.put(env.hconn, hobj, md, PutOptions(), data, props)
    return data


def _split(res: GetResult) -> tuple[dict[str, object], list[str], bytes, str]:
    """The data's MQRFH2 properties, its non-property folders, what follows, and its Format."""
    headers, end, fmt, _ = unpack_chain(res.data, res.md.format, res.md.encoding)
    props: dict[str, object] = {}
    others: list[str] = []
    for h in headers:
        for text in h.folders:
            found = folder_properties(text)
            if found is None:
                others.append(text)
            else:
                props.update(found)
    return props, others, res.data[end:], fmt


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("handle", [False, True], ids=["no-handle", "handle"])
@pytest.mark.parametrize("option", OPTIONS, ids=lambda o: f"gmo{o:x}")
@pytest.mark.parametrize("propctl", PROPCTLS, ids=["COMPAT", "NONE", "ALL", "FORCE", "V6COMPAT"])
def test_where_properties_go(propctl: int, option: int, handle: bool, kind: str) -> None:
    env = Env()
    env.define("Q", PROPCTL=propctl)
    hobj = env.open("Q")
    put_data = _put(env, hobj, kind)
    rule = RULES.get((None, option, handle)) or RULES[(propctl, option, handle)]
    gmo = GetOptions(option, msg_handle=handle)
    if rule == "error":
        with pytest.raises(MQError) as exc:
            env.qm.get(env.hconn, hobj, MQMD(), gmo, 1 << 20)
        assert reason_of(exc) == (C.MQCC_FAILED, C.MQRC_HMSG_ERROR)
        assert env.depth("Q") == 1  # nothing was taken
        return
    res = env.qm.get(env.hconn, hobj, MQMD(), gmo, 1 << 20)
    assert isinstance(res, GetResult)
    assert res.data_length == len(res.data)
    stored = STORED[kind]
    if rule == "v6":
        set_props = dict(PUT[kind][0] or {})
        if handle:
            assert res.properties is not None and dict(res.properties) == set_props
            assert res.data == put_data  # the MQRFH2 exactly as put
        elif set_props:  # a header of their own in front of the data as put
            first, end = MQRFH2.unpack_from(res.data)
            got: dict[str, object] = {}
            for text in first.folders:
                got.update(folder_properties(text) or {})
            assert got == set_props and res.data[end:] == put_data and res.properties is None
        else:
            assert res.data == put_data and res.properties is None
        return
    if rule == "compat":
        rule = "rfh2" if any("." not in n or n.startswith(("mcd.", "jms.", "usr.", "mqext.")) for n in stored) \
            else "none"
    props, others, rest, fmt = _split(res)
    assert rest == BODY and fmt.rstrip() == "MQSTR"
    assert others == KEPT.get(kind, [])  # folders that are not properties stay in the data
    if handle:
        assert res.properties is not None
        assert dict(res.properties) == (stored if rule == "handle" else {})
        if rule == "handle" and "n" in stored:
            assert res.properties.type_of("n") == C.MQTYPE_INT32
    else:
        assert res.properties is None
    assert props == (stored if rule == "rfh2" else {})
