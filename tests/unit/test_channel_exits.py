"""Channel exits: where a name may load from (ExitPath, ferrymq's own exits), the MQCXP a
call sees, and which MQXCC_ answers each call accepts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ferrymq.channels.exits import (
    EXIT_ERROR,
    LOAD_ERROR,
    ChannelExitParms,
    ChannelExits,
    ExitClosed,
    ExitFailed,
    ExitLoadError,
    ExitSettings,
    load_exit,
)
from ferrymq.channels.refexits import receive_reference, send_reference
from ferrymq.engine import chlattrs as K
from ferrymq.engine.channels import ChannelObject
from ferrymq.mq import constants as C
from ferrymq.mq import cxc as X
from ferrymq.protocol import channel as P


def channel(chltype: str = "SDR", **attrs: str | tuple[str, ...]) -> ChannelObject:
    """A definition as engine.channels keeps it: an exit list (MSGEXIT ...) a tuple, one
    string standing for a list of that one item."""
    lists = {k: v if isinstance(v, tuple) else (v,) for k, v in attrs.items() if k in K.EXIT_ITEMS}
    return ChannelObject("QM1.TO.QM2", chltype, {k: v for k, v in attrs.items()
                                                 if isinstance(v, str) and k not in K.EXIT_ITEMS}, 0.0, lists)


def write_exit(root: Path, rel: str, body: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    path.chmod(0o600)


def test_builtin_exits_load_without_an_exit_path() -> None:
    assert load_exit("ferrymq.channels.refexits:send_reference", None) is send_reference
    assert load_exit(" ferrymq.channels.refexits:receive_reference ", None) is receive_reference


@pytest.mark.parametrize("name, words", [
    ("myexits:f", "no ExitPath is configured"),
    ("ferrymq.cli.main:main", "not one of ferrymq's exit modules"),
    ("os:system", "no ExitPath is configured"),
    ("myexits", "not module:function"),
    ("my-exits:f", "not module:function"),
    ("../x:f", "not module:function"),
    ("ferrymq.channels.refexits:nothing", "has no callable nothing"),
])
def test_names_refused_without_loading(name: str, words: str) -> None:
    with pytest.raises(ExitLoadError) as err:
        load_exit(name, None)
    assert words in str(err.value) and err.value.reason == LOAD_ERROR


def test_user_exits_load_only_from_the_exit_path(tmp_path: Path) -> None:
    root, outside = tmp_path / "exits", tmp_path / "elsewhere"
    write_exit(root, "pkg/mine.py", "def f(p):\n    return 0\n")
    write_exit(outside, "evil.py", "def f(p):\n    return 0\n")
    assert load_exit("pkg.mine:f", root)(None) == 0  # type: ignore[arg-type]
    (root / "link.py").symlink_to(outside / "evil.py")
    with pytest.raises(ExitLoadError, match="outside ExitPath"):
        load_exit("link:f", root)
    with pytest.raises(ExitLoadError, match="no file"):
        load_exit("evil:f", root)  # a module of sys.path or elsewhere is never looked for
    write_exit(root, "loose.py", "def f(p):\n    return 0\n")
    os.chmod(root / "loose.py", 0o666)
    with pytest.raises(ExitLoadError, match="writable by every user"):
        load_exit("loose:f", root)
    write_exit(root, "broken.py", "raise RuntimeError('bad module')\n")
    with pytest.raises(ExitLoadError, match="RuntimeError: bad module"):
        load_exit("broken:f", root)
    write_exit(root, "notfn.py", "f = 3\n")
    with pytest.raises(ExitLoadError, match="no callable f"):
        load_exit("notfn:f", root)


EXIT = """
from ferrymq.mq import cxc as X
from ferrymq.protocol import channel as P
calls = []

def msg(p):
    calls.append((p.exit_id, p.exit_reason, p.exit_data, p.partner_name, p.max_msg_length))
    if p.exit_reason == X.MQXR_MSG:
        p.exit_user_area[0] += 1
        if p.data == b"drop":
            p.feedback = 2085
            return X.MQXCC_SUPPRESS_FUNCTION
        if p.data == b"close":
            return X.MQXCC_CLOSE_CHANNEL
        if p.data == b"boom":
            raise ValueError("boom inside")
        if p.data == b"sec":
            return X.MQXCC_SEND_SEC_MSG
        if p.data == b"quiet":
            p.exit_response = X.MQXCC_SUPPRESS_EXIT
            return None
        p.data = p.data.upper() + bytes([p.exit_user_area[0]])
    return X.MQXCC_OK
"""


def loaded(tmp_path: Path) -> tuple[ChannelExits, object]:
    write_exit(tmp_path, "mine.py", EXIT)
    exits = ChannelExits.load(channel(MSGEXIT="mine:msg", MSGDATA="hello"), ExitSettings("QM1", tmp_path))
    return exits, load_exit("mine:msg", tmp_path).__globals__["calls"]  # type: ignore[attr-defined]


def test_message_exit_outcomes(tmp_path: Path) -> None:
    exits, calls = loaded(tmp_path)
    exits.init("QM2", 1000)
    assert calls == [(X.MQXT_CHANNEL_MSG_EXIT, X.MQXR_INIT, "hello", "QM2", 1000)]
    assert exits.message(b"abc") == (X.MQXCC_OK, b"ABC\x01", C.MQFB_STOPPED_BY_MSG_EXIT)
    assert exits.message(b"xy")[1] == b"XY\x02"  # ExitUserArea persists between calls
    assert exits.message(b"drop") == (X.MQXCC_SUPPRESS_FUNCTION, b"drop", 2085)
    assert exits.message(b"close")[0] == X.MQXCC_CLOSE_CHANNEL
    with pytest.raises(ExitFailed, match="raised ValueError: boom inside") as err:
        exits.message(b"boom")
    assert err.value.reason == EXIT_ERROR
    with pytest.raises(ExitFailed, match="does not allow"):
        exits.message(b"sec")
    assert exits.message(b"quiet")[0] == X.MQXCC_SUPPRESS_EXIT
    before = len(calls)  # type: ignore[arg-type]
    assert exits.message(b"boom") == (X.MQXCC_OK, b"boom", C.MQFB_STOPPED_BY_MSG_EXIT)  # not called again
    exits.term()
    assert len(calls) == before  # type: ignore[arg-type]


def test_feedback_defaults_to_stopped_by_msg_exit(tmp_path: Path) -> None:
    write_exit(tmp_path, "sup.py", "def f(p):\n    return -1 if p.exit_reason == 13 else 0\n")
    exits = ChannelExits.load(channel(MSGEXIT="sup:f"), ExitSettings("QM1", tmp_path))
    exits.init("QM2", 100)
    assert exits.message(b"x") == (X.MQXCC_SUPPRESS_FUNCTION, b"x", C.MQFB_STOPPED_BY_MSG_EXIT)


def test_close_at_init_and_bad_answers(tmp_path: Path) -> None:
    write_exit(tmp_path, "c.py", "def close(p):\n    return -6\n\ndef text(p):\n    return 'ok'\n\n"
                                 "def keep(p):\n    p.data = 5\n")
    with pytest.raises(ExitClosed):
        ChannelExits.load(channel(SENDEXIT="c:close"), ExitSettings("QM1", tmp_path)).init("QM2", 100)
    for name, words in (("c:text", "not an MQXCC_ value"), ("c:keep", "not bytes")):
        with pytest.raises(ExitFailed, match=words):
            ChannelExits.load(channel(MSGEXIT=name), ExitSettings("QM1", tmp_path)).init("QM2", 100)


def test_parms_describe_the_channel() -> None:
    p = ChannelExitParms(X.MQXT_CHANNEL_MSG_EXIT, "", channel("RCVR"), ExitSettings())
    assert (p.channel_name, p.channel_type, p.sending) == ("QM1.TO.QM2", 3, False)
    assert bytes(p.exit_user_area) == X.MQXUA_NONE and p.exit_response == X.MQXCC_OK


def test_send_and_receive_exits_transform_payloads(tmp_path: Path) -> None:
    write_exit(tmp_path, "x.py", "def flip(p):\n    if p.exit_reason == 14:\n        p.data = p.data[::-1]\n"
                                 "    return 0\n\ndef close(p):\n    return -6 if p.exit_reason == 14 else 0\n")
    exits = ChannelExits.load(channel(SENDEXIT="x:flip", RCVEXIT="x:close"), ExitSettings("QM1", tmp_path))
    exits.init("QM2", 100)
    conn = P.ChannelConnection(sender=True)
    exits.attach(conn)
    assert conn.outbound is not None and conn.inbound is not None
    assert conn.outbound(b"abc") == b"cba"
    assert exits.get("SENDEXIT").parms.exit_id  # type: ignore[union-attr] == X.MQXT_CHANNEL_SEND_EXIT
    with pytest.raises(ExitClosed):
        conn.inbound(b"abc")
    none = ChannelExits.load(channel(), ExitSettings("QM1", tmp_path))
    none.attach(conn)
    assert conn.outbound is None and conn.inbound is None


RETRY = """
from ferrymq.mq import cxc as X

def f(p):
    if p.exit_reason != X.MQXR_RETRY:
        return X.MQXCC_OK
    if p.data == b"close":
        return X.MQXCC_CLOSE_CHANNEL
    if p.data == b"bad-wait":
        p.msg_retry_interval = -5
        return X.MQXCC_OK
    if p.data == b"quiet":
        return X.MQXCC_SUPPRESS_EXIT
    if p.msg_retry_count > 2 or p.msg_retry_reason != 2053:
        return X.MQXCC_SUPPRESS_FUNCTION
    p.msg_retry_interval += p.msg_retry_count
    return X.MQXCC_OK
"""


def test_message_retry_exit_waits_stops_and_is_checked(tmp_path: Path) -> None:
    write_exit(tmp_path, "mr.py", RETRY)
    exits = ChannelExits.load(channel("RCVR", MREXIT="mr:f", MRDATA="d"), ExitSettings("QM2", tmp_path))
    mr = exits.get("MREXIT")
    assert mr is not None and (mr.parms.exit_id, mr.parms.exit_data) == (X.MQXT_CHANNEL_MSG_RETRY_EXIT, "d")
    exits.init("QM1", 1000)
    assert exits.retries()
    assert exits.retry(b"m", 1, C.MQRC_Q_FULL, 100) == 101  # MRTMR offered, the exit's wait taken
    assert exits.retry(b"m", 3, C.MQRC_Q_FULL, 100) is None  # MQXCC_SUPPRESS_FUNCTION: stop trying
    assert exits.retry(b"m", 1, C.MQRC_UNKNOWN_OBJECT_NAME, 100) is None
    with pytest.raises(ExitFailed, match="does not allow"):
        exits.retry(b"close", 1, C.MQRC_Q_FULL, 100)
    with pytest.raises(ExitFailed, match="MsgRetryInterval"):
        exits.retry(b"bad-wait", 1, C.MQRC_Q_FULL, 100)
    assert exits.retry(b"quiet", 1, C.MQRC_Q_FULL, 100) is None and not exits.retries()  # MRRTY's rule again
    exits.term()


CHAIN = """
from ferrymq.mq import cxc as X

def tag(p):
    if p.exit_reason in (X.MQXR_MSG, X.MQXR_XMIT):
        p.data = p.data + b"+" + p.exit_data.encode()
        if p.data.startswith(b"stop-at-" + p.exit_data.encode()):
            return X.MQXCC_SUPPRESS_FUNCTION
        if p.data.startswith(b"close-at-" + p.exit_data.encode()):
            return X.MQXCC_CLOSE_CHANNEL
        if p.data.startswith(b"last-at-" + p.exit_data.encode()):
            p.exit_response2 = X.MQXR2_SUPPRESS_CHAIN
        if p.data.startswith(b"on-after-" + p.exit_data.encode()):
            p.exit_response2 = X.MQXR2_CONTINUE_CHAIN
            p.feedback = 299
            return X.MQXCC_SUPPRESS_FUNCTION
    return X.MQXCC_OK
"""


def test_exit_chains_run_in_order_and_stop_as_ibm_says(tmp_path: Path) -> None:
    write_exit(tmp_path, "chain.py", CHAIN)
    chl = channel(MSGEXIT=("chain:tag",) * 3, MSGDATA=("a", "b", "c"),
                  SENDEXIT=("chain:tag",) * 2, SENDDATA=("s1", "s2"), RCVEXIT="chain:tag", RCVDATA="x,y")
    exits = ChannelExits.load(chl, ExitSettings("QM1", tmp_path))
    exits.init("QM2", 100)
    # each exit sees what the one before it returned, with its own MSGDATA item
    assert exits.message(b"m") == (X.MQXCC_OK, b"m+a+b+c", C.MQFB_STOPPED_BY_MSG_EXIT)
    # MQXCC_SUPPRESS_FUNCTION ends the chain (default continuation)
    assert exits.message(b"stop-at-b") == (X.MQXCC_SUPPRESS_FUNCTION, b"stop-at-b+a+b", C.MQFB_STOPPED_BY_MSG_EXIT)
    assert exits.message(b"close-at-a")[:2] == (X.MQXCC_CLOSE_CHANNEL, b"close-at-a+a")
    # MQXR2_SUPPRESS_CHAIN: this exit is the last; MQXR2_CONTINUE_CHAIN: suppressed, yet the rest run
    assert exits.message(b"last-at-a") == (X.MQXCC_OK, b"last-at-a+a", C.MQFB_STOPPED_BY_MSG_EXIT)
    assert exits.message(b"on-after-a") == (X.MQXCC_SUPPRESS_FUNCTION, b"on-after-a+a+b+c", 299)
    conn = P.ChannelConnection(sender=True)
    exits.attach(conn)
    assert conn.outbound is not None and conn.outbound(b"f") == b"f+s1+s2"
    # one receive exit: its data is the one RCVDATA item, commas and all
    assert conn.inbound is not None and conn.inbound(b"f") == b"f+x,y"
    with pytest.raises(ExitClosed, match=r"SENDEXIT\(chain:tag\)"):
        conn.outbound(b"close-at-s2")


def test_exit_lists_in_definitions(tmp_path: Path) -> None:
    from ferrymq.engine.channels import _checked
    from ferrymq.mq import cfc as F
    from ferrymq.pcf.model import ParameterError

    # exit i gets data item i; a shorter data list leaves the rest blank, a longer one is cut
    assert K.exit_list(("a:f", "b:g"), ("x", "y,z", "w")) == [("a:f", "x"), ("b:g", "y,z")]
    assert K.exit_list(("a:f", "b:g", "c:h"), ("x",)) == [("a:f", "x"), ("b:g", ""), ("c:h", "")]
    assert K.exit_list((), ("x",)) == []
    # PCF's MQCFSL (a tuple or list) and MQCFST (one item) are taken as items, never split
    assert _checked(K.CHANNEL_BY_NAME, "CHANNEL", "SDR", {"MSGEXIT": ("a:f", " b:g "), "MSGDATA": ["1,2", "it's "]}) \
        == ({}, {"MSGEXIT": ("a:f", "b:g"), "MSGDATA": ("1,2", "it's")})
    assert _checked(K.CHANNEL_BY_NAME, "CHANNEL", "SDR", {"MSGDATA": "a" * 30 + "," + "b"}) == (
        {}, {"MSGDATA": ("a" * 30 + ",b",)})
    assert _checked(K.CHANNEL_BY_NAME, "CHANNEL", "SDR", {"MSGEXIT": " ", "SENDDATA": ("", " ")}) == (
        {}, {"MSGEXIT": (), "SENDDATA": ()})
    # IBM's limits and reasons: each name MQ_EXIT_NAME_LENGTH (128), each data item
    # MQ_EXIT_DATA_LENGTH (32), the items together MQ_TOTAL_EXIT_NAME/DATA_LENGTH (999)
    refused = [({"MSGEXIT": "x" * 129}, F.MQRCCF_CFST_STRING_LENGTH_ERR),
               ({"MSGDATA": "d" * 33}, F.MQRCCF_CFST_STRING_LENGTH_ERR),
               ({"MSGDATA": ("a", "d" * 33)}, F.MQRCCF_CFSL_STRING_LENGTH_ERR),
               ({"SENDEXIT": ("a:f", "y" * 129)}, F.MQRCCF_CFSL_STRING_LENGTH_ERR),
               ({"RCVEXIT": ("e" * 128,) * 8}, F.MQRCCF_CFSL_TOTAL_LENGTH_ERROR),
               ({"RCVDATA": ("d" * 32,) * 32}, F.MQRCCF_CFSL_TOTAL_LENGTH_ERROR),
               ({"MSGEXIT": ("a:f", "", "b:g")}, F.MQRCCF_ATTR_VALUE_ERROR),
               ({"MSGDATA": ("a", 7)}, F.MQRCCF_ATTR_VALUE_ERROR)]
    for attrs, reason in refused:
        with pytest.raises(ParameterError) as caught:
            _checked(K.CHANNEL_BY_NAME, "CHANNEL", "SDR", attrs)
        assert caught.value.reason == reason, attrs
    # at the limits exactly: accepted
    assert _checked(K.CHANNEL_BY_NAME, "CHANNEL", "SDR", {"RCVDATA": ("d" * 32,) * 31 + ("d" * 7,)})[1]["RCVDATA"]
    assert _checked(K.CHANNEL_BY_NAME, "CHANNEL", "SDR", {"RCVEXIT": ("e" * 128,) * 7 + ("e" * 103,)})[1]["RCVEXIT"]


def test_old_comma_joined_definitions_load_as_lists() -> None:
    import json

    from ferrymq.engine.channels import decode_channel

    def record(**attrs: str) -> bytes:
        return json.dumps({"name": "C", "chltype": "SDR", "created": ["2026-01-01", "00.00.00"],
                           "altered": ["2026-01-01", "00.00.00"],
                           "attrs": {"CONNAME": "h(1)", "XMITQ": "X", "SCYEXIT": "", **attrs}}).encode()

    # several exits: names and data split at each comma, once
    old = decode_channel(record(MSGEXIT="a:f, b:g", MSGDATA="x,y", SENDEXIT="", SENDDATA=""), 0.0)
    assert old.items("MSGEXIT") == ("a:f", "b:g") and old.items("MSGDATA") == ("x", "y")
    assert old.items("SENDEXIT") == () and "MSGEXIT" not in old.attrs
    # one exit took the whole data attribute, commas and all: it still does
    one = decode_channel(record(RCVEXIT="a:f", RCVDATA="x,y"), 0.0)
    assert K.exit_list(one.items("RCVEXIT"), one.items("RCVDATA")) == [("a:f", "x,y")]
    # written back as lists, read back the same
    again = decode_channel(old.encode(), 0.0)
    assert again.lists == old.lists == {"MSGEXIT": ("a:f", "b:g"), "MSGDATA": ("x", "y")}
    with pytest.raises(TypeError):
        decode_channel(json.dumps({**json.loads(old.encode()), "lists": {"MSGEXIT": "a:f"}}).encode(), 0.0)
