"""The client's request building (ferrymq.client.session) and ``Message``: the MQMD a put or a
get sends, spliced from cached templates, equals the descriptor packed field by field for
every mix of identifiers; a message's lazily made fields equal the eager ones."""

from __future__ import annotations

import itertools

import pytest

from ferrymq.client import session as S
from ferrymq.client.message import Message, PutResult
from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet
from ferrymq.protocol import events as E
from ferrymq.wire.mqmd import MQMD

IDS = (None, b"I" * 24, b"short", b"")
SPECS = [
    (None, None, None, "", "", None, None, 0, 0),
    (5, False, None, "REPLIES", "", None, None, 0, 0),
    (None, True, 2.5, "R", "QM2", "MQSTR", C.MQMT_REPLY, C.MQRO_PASS_MSG_ID, 3),
]


def _expected(spec: S.PutSpec, fmt: str, msg_id: bytes | None, correl_id: bytes | None) -> bytes:
    priority, persistent, expiry, reply_to_q, reply_to_q_mgr, _, msg_type, report, feedback = spec
    return MQMD(
        version=C.MQMD_VERSION_2,
        priority=C.MQPRI_PRIORITY_AS_Q_DEF if priority is None else priority,
        persistence=C.MQPER_PERSISTENCE_AS_Q_DEF if persistent is None else int(persistent),
        expiry=C.MQEI_UNLIMITED if expiry is None else round(expiry * 10),
        reply_to_q=reply_to_q, reply_to_q_mgr=reply_to_q_mgr, format=fmt,
        msg_type=(C.MQMT_REQUEST if reply_to_q else C.MQMT_DATAGRAM) if msg_type is None else msg_type,
        report=report, feedback=feedback, coded_char_set_id=1208 if fmt == C.MQFMT_STRING else 0,
        msg_id=(msg_id or b"").ljust(24, b"\0"), correl_id=(correl_id or b"").ljust(24, b"\0"),
    ).pack()


@pytest.mark.parametrize(("spec", "msg_id", "correl_id", "data"),
                         list(itertools.product(SPECS, IDS, IDS, (b"bytes", "text"))))
def test_put_descriptor(spec: S.PutSpec, msg_id: bytes | None, correl_id: bytes | None, data: bytes | str) -> None:
    ev, res = S.put_event(S.Session(), 7, 3, data, spec, correl_id, msg_id, None, False, False, None, 0)
    fmt = spec[5] if spec[5] is not None else (C.MQFMT_STRING if isinstance(data, str) else "")
    assert isinstance(ev, E.Put) and res is None
    assert ev.md == _expected(spec, fmt, msg_id, correl_id)
    assert bool(ev.options & C.MQPMO_NEW_MSG_ID) == (msg_id is None)


@pytest.mark.parametrize("correl_id", IDS)
def test_async_put_picks_its_msg_id(correl_id: bytes | None) -> None:
    session = S.Session()
    ev, res = S.put_event(session, 7, 3, b"x", SPECS[1], correl_id, None, None, False, True, None, 0)
    assert isinstance(ev, E.Put) and isinstance(res, PutResult) and not ev.reply
    assert res.msg_id[:4] == b"AMQ " and res.md_bytes == ev.md
    assert ev.md == _expected(SPECS[1], "", res.msg_id, correl_id)
    assert not ev.options & C.MQPMO_NEW_MSG_ID
    _, res2 = S.put_event(session, 8, 3, b"x", SPECS[1], correl_id, None, None, False, True, None, 0)
    assert res2 is not None and res2.msg_id != res.msg_id


def test_identifier_too_long() -> None:
    for msg_id, correl_id in ((b"x" * 25, None), (None, b"x" * 25), (b"x" * 24, b"x" * 25)):
        with pytest.raises(ValueError, match="at most 24"):
            S.put_event(S.Session(), 7, 3, b"x", SPECS[0], correl_id, msg_id, None, False, False, None, 0)
        with pytest.raises(ValueError, match="at most 24"):
            S.get_md(msg_id, correl_id)


@pytest.mark.parametrize(("msg_id", "correl_id"), list(itertools.product(IDS, IDS)))
def test_get_descriptor(msg_id: bytes | None, correl_id: bytes | None) -> None:
    md, match = S.get_md(msg_id, correl_id)
    assert md == _expected(SPECS[0], "", msg_id, correl_id)
    assert match == ((C.MQMO_MATCH_MSG_ID if msg_id is not None else 0)
                     | (C.MQMO_MATCH_CORREL_ID if correl_id is not None else 0))
    ev = S.get_event(5, 3, wait=1.5, msg_id=msg_id, correl_id=correl_id, syncpoint=False, max_length=100,
                     accept_truncated=False)
    assert (ev.md, ev.match_options, ev.wait_interval) == (md, match, 1500)
    assert ev.options & C.MQGMO_WAIT


FULL = MQMD(version=2, report=C.MQRO_COA, msg_type=C.MQMT_REPLY, expiry=77, feedback=9, encoding=546,
            coded_char_set_id=819, format="MQSTR", priority=4, persistence=1, msg_id=b"m" * 24,
            correl_id=b"c" * 24, backout_count=2, reply_to_q="RQ", reply_to_q_mgr="RQM", user_identifier="u",
            accounting_token=b"a" * 32, appl_identity_data="id", put_appl_type=6, put_appl_name="app",
            put_date="20261123", put_time="16000000", appl_origin_data="o", group_id=b"g" * 24,
            msg_seq_number=3, offset=8, msg_flags=C.MQMF_LAST_MSG_IN_GROUP, original_length=12)


def test_message_fields_equal_the_descriptor() -> None:
    m = Message(FULL.pack(), b"\xe9t\xe9")
    assert m.md == FULL
    assert (m.msg_id, m.correl_id, m.priority, m.persistent) == (FULL.msg_id, FULL.correl_id, 4, True)
    assert (m.reply_to_q, m.reply_to_q_mgr, m.format, m.backout_count) == ("RQ", "RQM", "MQSTR", 2)
    assert m.put_timestamp == "2026112316000000"
    assert m.text == "été"  # CCSID 819: Latin-1
    assert (m.data_length, m.reason, m.msg_token) == (3, C.MQRC_NONE, bytes(16))


def test_message_properties_made_when_asked() -> None:
    m = Message(FULL.pack(), b"x")
    assert m.properties == PropertySet() and m.properties is m.properties
    props = PropertySet.of({"colour": "red"})
    given = Message(FULL.pack(), b"x", properties=props)
    assert given.properties is props
    m.properties = props
    assert m.properties is props


def test_message_text_in_its_ccsid() -> None:
    ebcdic = MQMD(format="MQSTR", coded_char_set_id=37)
    assert Message(ebcdic.pack(), "[é]".encode("cp037")).text == "[é]"
    utf16 = MQMD(format="MQSTR", coded_char_set_id=1200, encoding=C.MQENC_REVERSED)
    assert Message(utf16.pack(), "é".encode("utf-16-le")).text == "é"
    assert Message(MQMD(coded_char_set_id=1208).pack(), b"\xff").text == "\ufffd"
    assert Message(MQMD(coded_char_set_id=4321).pack(), b"abc").text == "abc"  # unknown: UTF-8


def test_converting_asks_for_the_ccsid_and_encoding() -> None:
    ev = S.get_event(1, 2, 0.0, None, None, False, 100, False)
    assert S.converting(ev, None, C.MQENC_NATIVE) is ev and not ev.options & C.MQGMO_CONVERT
    ev = S.converting(ev, 37, C.MQENC_NORMAL)
    md = ev.md if isinstance(ev.md, MQMD) else MQMD.decode(ev.md)
    assert ev.options & C.MQGMO_CONVERT and (md.coded_char_set_id, md.encoding) == (37, C.MQENC_NORMAL)
