"""MQSC parsing and runmqsc output, driven straight into the engine's executor (the
embedded route: the same Command objects the PCF route carries)."""

from __future__ import annotations

import contextlib

import pytest
from engine_helpers import Env
from hypothesis import given, settings
from hypothesis import strategies as st

from ferrymq.admin.mqsc import MqscSyntaxError, commands, parse, to_command
from ferrymq.admin.session import Session, columns
from ferrymq.engine.commands.pcfmap import run
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C


def session() -> tuple[Env, Session]:
    env = Env()
    return env, Session(lambda cmd: run(env.qm, cmd))


def lines(s: Session, text: str) -> list[str]:
    return s.execute(text).messages


def test_keywords_synonyms_case_and_quoting() -> None:
    cmd = to_command(parse("def ql(app.in) descr('It''s mine') maxdepth(10) noshare trigger defpsist(yes)"))
    assert cmd.command == F.MQCMD_CREATE_Q
    assert cmd.params[C.MQCA_Q_NAME] == "APP.IN" and cmd.params[C.MQIA_Q_TYPE] == C.MQQT_LOCAL
    assert cmd.params[C.MQCA_Q_DESC] == "It's mine" and cmd.params[C.MQIA_MAX_Q_DEPTH] == 10
    assert cmd.params[C.MQIA_SHAREABILITY] == C.MQQA_NOT_SHAREABLE and cmd.params[C.MQIA_TRIGGER_CONTROL] == C.MQTC_ON
    assert cmd.params[C.MQIA_DEF_PERSISTENCE] == C.MQPER_PERSISTENT
    alias = to_command(parse("DEFINE QALIAS(A) TARGQ(B) REPLACE"))
    assert alias.params[C.MQCA_BASE_Q_NAME] == "B" and alias.params[F.MQIACF_REPLACE] == F.MQRP_YES
    like = to_command(parse("DEFINE QLOCAL(NEW) LIKE(OLD)"))
    assert like.command == F.MQCMD_COPY_Q and like.params[F.MQCACF_FROM_Q_NAME] == "OLD"
    assert like.params[F.MQCACF_TO_Q_NAME] == "NEW"


@pytest.mark.parametrize(("text", "why"), [
    ("DEFINE", "object type"),
    ("DEFINE QLOCAL", "name"),
    ("DEFINE QLOCAL(A) MAXDEPTH", "needs a value"),
    ("DEFINE QLOCAL(A) COLOUR(RED)", "not an attribute"),
    ("DEFINE QLOCAL(A) DEFPSIST(MAYBE)", "NO|YES"),
    ("DEFINE QLOCAL(A) DESCR('open", "not closed"),
    ("DEFINE QLOCAL(A) CURDEPTH(3)", "not a settable"),
    ("DEFINE QMGR", "not a valid"),
    ("DELETE QLOCAL(A) MAXDEPTH(3)", "does not take"),
    ("DISPLAY QUEUE(*) WHERE(MAXDEPTH ZZ 3)", "operator"),
    ("DISPLAY QSTATUS(A) TYPE(BOTH)", "QUEUE or HANDLE"),
    ("FROB QLOCAL(A)", "not an MQSC verb"),
    # Every number travels as a PCF MQLONG, written in ASCII digits (int() takes more).
    ("ALTER QLOCAL(A) MAXDEPTH(9999999999999999999)", "MQLONG range"),
    ("DISPLAY QUEUE(*) WHERE(CURDEPTH GT -2147483649)", "MQLONG range"),
    ("ALTER QLOCAL(A) MAXDEPTH(1_0)", "0..999999999"),
    ("DISPLAY QUEUE(*) WHERE(CURDEPTH GT \u0663)", "compares with a number"),
    # Undecodable input bytes (kept as lone surrogates) cannot be sent as PCF text.
    ("ALTER QMGR DESCR('caf\udce9')", "valid UTF-8"),
])
def test_syntax_errors_say_why(text: str, why: str) -> None:
    with pytest.raises(MqscSyntaxError, match=why):
        to_command(parse(text))


def test_script_comments_and_continuations() -> None:
    script = ["* a comment", "", "DEFINE QLOCAL(A) +", "     MAXDEPTH(5)", "DISPLAY -", "QLOCAL(A)", "PING QMGR"]
    assert list(commands(iter(script))) == ["DEFINE QLOCAL(A) MAXDEPTH(5)", "DISPLAY QLOCAL(A)", "PING QMGR"]


def test_every_queue_verb_and_the_summary() -> None:
    env, s = session()
    assert lines(s, "DEFINE QLOCAL(APP.IN) MAXDEPTH(100)") == ["AMQ8006I: Queue created."]
    assert lines(s, "DEFINE QMODEL(APP.M) DEFTYPE(PERMDYN)") == ["AMQ8006I: Queue created."]
    assert lines(s, "DEFINE QALIAS(APP.A) TARGET(APP.IN)") == ["AMQ8006I: Queue created."]
    assert lines(s, "ALTER QLOCAL(APP.IN) PUT(DISABLED)") == ["AMQ8008I: Queue changed."]
    assert env.qm.objects.require("APP.IN")["PUT"] == C.MQQA_PUT_INHIBITED
    assert lines(s, "DEFINE QLOCAL(APP.IN)")[0].startswith("AMQ8150E")
    assert lines(s, "DEFINE QLOCAL(APP.IN) REPLACE MAXDEPTH(7)") == ["AMQ8006I: Queue created."]
    assert lines(s, "DIS QL(APP.IN) MAXDEPTH") == ["AMQ8409I: Display Queue details.",
                                                   "   QUEUE(APP.IN)                           TYPE(QLOCAL)",
                                                   "   MAXDEPTH(7)"]
    shown = lines(s, "DISPLAY QUEUE(APP.*)")
    assert "   QUEUE(APP.M)                            TYPE(QMODEL)" in shown and len(shown) == 6
    assert lines(s, "DISPLAY QMODEL(APP.M) DEFTYPE")[-1] == "   DEFTYPE(PERMDYN)"
    assert lines(s, "CLEAR QLOCAL(APP.IN)") == ["AMQ8022I: Queue cleared."]
    assert lines(s, "DELETE QALIAS(APP.A)") == ["AMQ8007I: Queue deleted."]
    assert lines(s, "DELETE QLOCAL(NOPE)")[0] == "AMQ8147E: Object NOPE not found."
    assert lines(s, "ALTER QLOCAL(APP.IN) DEFPRTY(10)") == [
        "AMQ8426E: A value is not valid for its attribute.",
        "   reason 4005 (MQRCCF_ATTR_VALUE_ERROR) for DEFPRTY: DEFPRTY(10) is outside 0..9"]
    assert lines(s, "ALTER QMGR DESCR('hello')") == ["AMQ8005I: Queue manager changed."]
    assert "   QMNAME(QM1)                             DESCR(hello)" in lines(s, "DISPLAY QMGR DESCR")
    assert lines(s, "PING QMGR") == ["AMQ8415I: Ping Queue Manager command complete."]
    assert lines(s, "NONSENSE")[0].startswith("AMQ8405E")
    assert s.summary() == ["17 MQSC commands read.", "One command has a syntax error.",
                           "3 valid MQSC commands could not be processed."]
    assert s.exit_code == 10


def test_where_filters_and_status_displays() -> None:
    env, s = session()
    for text in ("DEFINE QLOCAL(A1) MAXDEPTH(10)", "DEFINE QLOCAL(A2) MAXDEPTH(500)", "DEFINE QALIAS(A3) TARGET(A1)"):
        s.execute(text)
    shown = lines(s, "DISPLAY QUEUE(A*) WHERE(MAXDEPTH LT 100)")
    assert shown == ["AMQ8409I: Display Queue details.", "   QUEUE(A1)                               TYPE(QLOCAL)",
                     "   MAXDEPTH(10)"]
    assert len(lines(s, "DISPLAY QUEUE(*) WHERE(DESCR LK 'Dead*')")) == 3
    hobj = env.open("A1", C.MQOO_INPUT_EXCLUSIVE | C.MQOO_OUTPUT)
    env.put(hobj, b"x")
    env.clock.advance(5)
    status = s.execute("DISPLAY QSTATUS(A1) TYPE(QUEUE)").objects[0]
    assert status["CURDEPTH"] == 1 and status["IPPROCS"] == 1 and status["MSGAGE"] == 5
    handle = s.execute("DISPLAY QSTATUS(A1) TYPE(HANDLE) ALL").objects[0]
    assert handle["APPLTAG"] == "tests" and handle["INPUT"] == "EXCL" and handle["OUTPUT"] == "YES"
    conn = s.execute("DISPLAY CONN(*) ALL").objects
    assert [c["APPLTAG"] for c in conn] == ["tests"] and conn[0]["USERID"] == "tester"
    assert conn[0]["APPLTYPE"] == "USER"
    assert lines(s, "DISPLAY QSTATUS(A3)")[0].startswith("AMQ8149E")


def test_two_column_layout_puts_long_values_alone() -> None:
    assert columns([("A", "1"), ("B", ""), ("DESCR", "x" * 40), ("C", "3")]) == [
        "   A(1)                                    B( )", "   DESCR(" + "x" * 40 + ")", "   C(3)"]


@settings(max_examples=300)
@given(st.text(alphabet="DEFINQLOCAWHRSTPY()'*+-. 0123456789abc", max_size=80))
def test_any_text_parses_or_is_a_syntax_error(text: str) -> None:
    with contextlib.suppress(MqscSyntaxError):
        to_command(parse(text))


def test_lists_of_quoted_items_as_ibm_reads_them() -> None:
    def value(text: str) -> object:
        return dict(parse("ALTER CHANNEL(C) CHLTYPE(SDR) " + text).keywords)["MSGDATA"]

    # items separated by a comma, blanks or both; blanks around an item dropped
    assert value("MSGDATA('a','b')") == ("a", "b")
    assert value("MSGDATA( 'a' , 'b' ,'c' )") == ("a", "b", "c")
    assert value("MSGDATA('a' 'b')") == ("a", "b")
    # commas and parentheses inside a quoted item are its own; '' is one quote
    assert value("MSGDATA('a,b','(c)')") == ("a,b", "(c)")
    assert value("MSGDATA('it''s','''')") == ("it's", "'")
    # blanks inside a quoted item are kept; an unquoted item in the list is upper-cased
    assert value("MSGDATA(' a ', b)") == (" a ", "B")
    # one quoted item is a string, commas and all
    assert value("MSGDATA('a,b')") == "a,b"
    assert value("MSGDATA('')") == ""
    for bad in ("MSGDATA('a',)", "MSGDATA('a' b)", "MSGDATA('a','b'", "MSGDATA('a','b)"):
        with pytest.raises(MqscSyntaxError):
            parse("ALTER CHANNEL(C) CHLTYPE(SDR) " + bad)
    cmd = to_command(parse("ALTER CHANNEL(C) CHLTYPE(SDR) MSGEXIT('m:a','m:b') MSGDATA('x,y')"))
    assert cmd.params[F.MQCACH_MSG_EXIT_NAME] == ("m:a", "m:b") and cmd.params[F.MQCACH_MSG_EXIT_USER_DATA] == "x,y"
    # a list where one value is taken
    for text in ("ALTER QLOCAL(Q) DESCR('a','b')", "DEFINE QLOCAL('a','b')", "DISPLAY CHANNEL(C) WHERE('a','b')"):
        with pytest.raises(MqscSyntaxError, match="list"):
            to_command(parse(text))
