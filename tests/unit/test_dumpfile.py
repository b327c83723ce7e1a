"""The dump file format (cli.dumpfile): what is written reads back exactly; any defect is
refused with the number of the line that shows it."""

from __future__ import annotations

import io
import math

import pytest

from ferrymq.cli import dumpfile as D
from ferrymq.mq import constants as C
from ferrymq.properties.model import Descriptor, PropertySet
from ferrymq.wire.mqmd import MQMD


def _md(i: int) -> MQMD:
    return MQMD(version=2, report=C.MQRO_COA, format="MQSTR", msg_id=bytes([i]) * 24, reply_to_q='Q "x" \\',
                put_appl_name="app\u00e9\x01", group_id=b"g" * 24, msg_seq_number=3, offset=5,
                msg_flags=C.MQMF_MSG_IN_GROUP, accounting_token=bytes(range(32)), put_date="20260101",
                put_time="12345678")


def _props() -> PropertySet:
    p = PropertySet()
    p["usr.text"] = 'red "x"\n\u2603 \ud800'
    p.set("usr.f32", 1 / 3, C.MQTYPE_FLOAT32)
    p.set("usr.f64", -math.inf, C.MQTYPE_FLOAT64)
    p["usr.null"] = None
    p["usr.empty"] = b""
    p.set("usr.i8", -128, C.MQTYPE_INT8, Descriptor(1, 1, 4))
    p.set("usr.i64", -(1 << 63), C.MQTYPE_INT64)
    p["usr.yes"] = True
    p["a name with spaces"] = ""
    return p


def _dump(*messages: tuple[MQMD, PropertySet | None, bytes]) -> bytes:
    f = io.BytesIO()
    w = D.DumpWriter(f, {"queue_manager": "QM1", "queue": "Q"})
    for md, props, data in messages:
        w.write(md, props, data)
    w.finish()
    return f.getvalue()


def _read(raw: bytes) -> list[D.DumpedMessage]:
    return list(D.read(io.BytesIO(raw)))


def test_round_trip_is_exact() -> None:
    raw = _dump((_md(1), _props(), bytes(range(256)) * 3), (_md(2), None, b""), (_md(3), PropertySet(), b"x"))
    got = _read(raw)
    assert [m.md.pack() for m in got] == [_md(i).pack() for i in (1, 2, 3)]
    assert list(got[0].properties.typed_items()) == list(_props().typed_items())
    assert [m.data for m in got] == [bytes(range(256)) * 3, b"", b"x"]
    assert raw.isascii()  # readable anywhere: every byte beyond ASCII is escaped or in hex


def _lines(raw: bytes) -> list[bytes]:
    return raw.split(b"\n")


def _with_line(raw: bytes, number: int, new: bytes) -> bytes:
    lines = _lines(raw)
    lines[number - 1] = new
    return b"\n".join(lines)


def _line_of(raw: bytes, prefix: bytes, nth: int = 1) -> int:
    hits = [n for n, text in enumerate(_lines(raw), 1) if text.startswith(prefix)]
    return hits[nth - 1]


def _refused(raw: bytes) -> D.DumpFileError:
    with pytest.raises(D.DumpFileError) as info:
        _read(raw)
    return info.value


GOOD = _dump((_md(1), _props(), b"hello" * 30), (_md(2), _props(), b"bye"))


@pytest.mark.parametrize(("prefix", "new", "words"), [
    (b"MD Priority", b"MD Priority high", "not an integer"),
    (b"MD Priority", b"MD Priority 99999999999", "out of range"),
    (b"MD Feedback", b"MD Colour 1", "not an MQMD field"),
    (b"MD MsgId", b"MD MsgId 0102", "must be 24 bytes"),
    (b"MD MsgId", b"MD MsgId zz", "hexadecimal"),
    (b"MD ReplyToQ", b'MD ReplyToQ "' + b"a" * 49 + b'"', "the field holds 48"),
    (b"MD ReplyToQ", b"MD ReplyToQ unquoted", "quoted string"),
    (b"MD ReplyToQ", b'MD ReplyToQ "\\u2603"', "beyond Latin-1"),
    (b"MD ReplyToQ", b"MD Priority 1", "appears twice"),
    (b"PROP INT8", b'PROP INT8 1,1,4 "usr.i8" 128', "out of range"),
    (b"PROP INT8", b'PROP WORD 1,1,4 "usr.i8" 1', "unknown property type"),
    (b"PROP INT8", b'PROP INT8 1,1 "usr.i8" 1', "SUPPORT,CONTEXT,COPYOPTIONS"),
    (b"PROP BOOLEAN", b'PROP BOOLEAN 1,0,22 "usr.yes" yes', "true or false"),
    (b"PROP FLOAT32", b'PROP FLOAT32 1,0,22 "usr.f32" __import__', "hexadecimal float"),
    (b"PROP STRING", b'PROP STRING 1,0,22 "usr.text" "open', "valid quoted string"),
    (b"X ", b"X 0g", "hexadecimal"),
    (b"X ", b"MD Priority 1", "an X line expected"),
    (b"DATA", b"DATA 104857601", "out of range"),
    (b"MSG 2", b"MSG 3", "MSG 2 expected"),
    (b"END 1", b"END 2 00000000", "END 1 expected"),
    (b"FERRYMQ", b"SOMETHING ELSE", "not a ferrymq dump file"),
])
def test_a_defect_is_named_with_its_line(prefix: bytes, new: bytes, words: str) -> None:
    line = _line_of(GOOD, prefix)
    err = _refused(_with_line(GOOD, line, new))
    assert err.line == line
    assert words in err.message
    assert str(err).startswith(f"line {line}: ")


def test_a_valid_but_changed_line_fails_the_message_checksum() -> None:
    line = _line_of(GOOD, b"MD Priority", 2)
    err = _refused(_with_line(GOOD, line, b"MD Priority 9"))
    assert err.line == _line_of(GOOD, b"END 2") and "checksum" in err.message
    assert f"(line {_line_of(GOOD, b'MSG 2')})" in err.message


def test_a_missing_field_is_named() -> None:
    lines = _lines(GOOD)
    line = _line_of(GOOD, b"MD Offset")
    err = _refused(b"\n".join(lines[: line - 1] + lines[line:]))
    assert "Offset" in err.message and err.line == _line_of(GOOD, b"DATA") - 1


@pytest.mark.parametrize("cut", [10, 200, 900, len(GOOD) - 12, len(GOOD) - 1])
def test_a_truncated_file_is_refused(cut: int) -> None:
    raw = GOOD[:cut]
    err = _refused(raw)
    assert "truncated" in err.message
    assert err.line in (raw.count(b"\n"), raw.count(b"\n") + 1)


def test_a_cut_file_read_partially_gives_its_whole_messages_at_every_cut() -> None:
    ends = [GOOD.index(b"\n", GOOD.index(f"END {n} ".encode())) + 1 for n in (1, 2)]
    for cut in range(len(GOOD) - len(b"TOTAL 2\n") + 1):
        err = _refused(GOOD[:cut])
        assert err.truncated, (cut, err)
        got = list(D.read(io.BytesIO(GOOD[:cut]), partial=True))
        assert len(got) == sum(cut >= end for end in ends), cut
    assert len(list(D.read(io.BytesIO(GOOD), partial=True))) == 2


def test_a_damaged_line_before_the_cut_is_refused_even_partially() -> None:
    line = _line_of(GOOD, b"MD Priority", 2)
    damaged = _with_line(GOOD, line, b"MD Priority x")
    with pytest.raises(D.DumpFileError) as err:
        list(D.read(io.BytesIO(damaged[: damaged.index(b"TOTAL")]), partial=True))
    assert err.value.line == line and not err.value.truncated


def test_lines_are_bounded_before_they_are_read_whole() -> None:
    line = _line_of(GOOD, b"X ")
    err = _refused(_with_line(GOOD, line, b"X " + b"00" * D.MAX_LINE))
    assert err.line == line and "longer than" in err.message


def test_nothing_may_follow_the_total() -> None:
    err = _refused(GOOD + b"MSG 3\n")
    assert err.line == _line_of(GOOD, b"TOTAL") and "follows" in err.message


def test_comments_and_blank_lines_between_messages_are_ignored() -> None:
    line = _line_of(GOOD, b"MSG 2")
    lines = _lines(GOOD)
    raw = b"\n".join([*lines[:line - 1], b"# a note", b"", *lines[line - 1:]])
    assert len(_read(raw)) == 2


def test_a_body_over_the_limit_is_not_written() -> None:
    w = D.DumpWriter(io.BytesIO(), {})
    with pytest.raises(ValueError, match="MAX_DATA"):
        w.write(_md(1), None, bytes(D.MAX_DATA + 1))
