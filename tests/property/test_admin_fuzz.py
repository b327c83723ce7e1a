"""Fuzzing administration: PCF requests through the command server (in-process, real
engine), and MQSC text through the parser. Each test runs a CI-sized number of examples
(a few seconds); FERRYMQ_FUZZ_EXAMPLES raises it, as each test's docstring shows.
``--hypothesis-show-statistics`` shows how far the PCF requests got (reasons answered)."""

from __future__ import annotations

import os
import re
import struct

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ferrymq.admin.mqsc import MqscSyntaxError, commands, parse, to_command
from ferrymq.engine.api import FakeClock, GetOptions, GetResult, ObjectDescriptor, PutOptions
from ferrymq.engine.qmgr import QueueManager
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.messages import from_command
from ferrymq.pcf.model import Command, Filter
from ferrymq.server.cmdserver import COMMAND_QUEUE, CommandServer
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire import pcf as P
from ferrymq.wire.mqdlh import MQDLH
from ferrymq.wire.mqmd import MQMD

SCALE = int(os.environ.get("FERRYMQ_FUZZ_EXAMPLES", "0"))  # 0: CI size
FUZZ = settings(max_examples=SCALE or 300, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Valid requests like those of tests/unit/test_admin_commands.py, to mutate.
SEEDS = [
    Command(F.MQCMD_CREATE_Q, {C.MQCA_Q_NAME: "APP.A", C.MQIA_Q_TYPE: C.MQQT_LOCAL, C.MQIA_MAX_Q_DEPTH: 10,
                               C.MQCA_Q_DESC: "orders"}),
    Command(F.MQCMD_CREATE_Q, {C.MQCA_Q_NAME: "APP.AL", C.MQIA_Q_TYPE: C.MQQT_ALIAS, C.MQCA_BASE_Q_NAME: "APP.L"}),
    Command(F.MQCMD_CHANGE_Q, {C.MQCA_Q_NAME: "APP.L", C.MQIA_Q_TYPE: C.MQQT_LOCAL, C.MQIA_DEF_PRIORITY: 4,
                               C.MQIA_INHIBIT_GET: C.MQQA_GET_INHIBITED}),
    Command(F.MQCMD_COPY_Q, {F.MQCACF_FROM_Q_NAME: "APP.L", F.MQCACF_TO_Q_NAME: "APP.C", C.MQIA_Q_TYPE: 1}),
    Command(F.MQCMD_DELETE_Q, {C.MQCA_Q_NAME: "APP.L", F.MQIACF_PURGE: F.MQPO_YES}),
    Command(F.MQCMD_CLEAR_Q, {C.MQCA_Q_NAME: "APP.L"}),
    Command(F.MQCMD_INQUIRE_Q, {C.MQCA_Q_NAME: "*", C.MQIA_Q_TYPE: C.MQQT_LOCAL,
                                F.MQIACF_Q_ATTRS: (C.MQIA_MAX_Q_DEPTH, C.MQCA_Q_DESC)},
            [Filter(C.MQIA_MAX_Q_DEPTH, F.MQCFOP_LESS, 25)]),
    Command(F.MQCMD_INQUIRE_Q, {C.MQCA_Q_NAME: "*"}, [Filter(C.MQCA_Q_NAME, F.MQCFOP_LIKE, "APP.*")]),
    Command(F.MQCMD_INQUIRE_Q_NAMES, {C.MQCA_Q_NAME: "SYSTEM.*", C.MQIA_Q_TYPE: C.MQQT_ALL}),
    Command(F.MQCMD_INQUIRE_Q_STATUS, {C.MQCA_Q_NAME: "APP.L", F.MQIACF_Q_STATUS_TYPE: F.MQIACF_Q_HANDLE}),
    Command(F.MQCMD_INQUIRE_CONNECTION, {F.MQBACF_GENERIC_CONNECTION_ID: b"",
                                         F.MQIACF_CONN_INFO_TYPE: F.MQIACF_CONN_INFO_ALL}),
    Command(F.MQCMD_INQUIRE_Q_MGR, {F.MQIACF_Q_MGR_ATTRS: (C.MQCA_Q_MGR_DESC, C.MQIA_MAX_HANDLES)}),
    Command(F.MQCMD_CHANGE_Q_MGR, {C.MQCA_Q_MGR_DESC: "test qm", C.MQIA_MAX_HANDLES: 500}),
    Command(F.MQCMD_PING_Q_MGR),
    # Topics and subscriptions (engine/commands/topics.py, subs.py).
    Command(F.MQCMD_CREATE_TOPIC, {C.MQCA_TOPIC_NAME: "APP.T", C.MQCA_TOPIC_STRING: "app/t", C.MQIA_DEF_PRIORITY: 4,
                                   C.MQIA_INHIBIT_PUB: C.MQTA_PUB_INHIBITED, C.MQCA_MODEL_DURABLE_Q: "M"}),
    Command(F.MQCMD_CHANGE_TOPIC, {C.MQCA_TOPIC_NAME: "APP.T", C.MQIA_WILDCARD_OPERATION: C.MQTA_BLOCK}),
    Command(F.MQCMD_COPY_TOPIC, {F.MQCACF_FROM_TOPIC_NAME: "APP.T", F.MQCACF_TO_TOPIC_NAME: "APP.U",
                                 C.MQCA_TOPIC_STRING: "app/u"}),
    Command(F.MQCMD_DELETE_TOPIC, {C.MQCA_TOPIC_NAME: "APP.T"}),
    Command(F.MQCMD_INQUIRE_TOPIC, {C.MQCA_TOPIC_NAME: "*", F.MQIACF_TOPIC_ATTRS: (C.MQIA_DEF_PRIORITY,)},
            [Filter(C.MQIA_DEF_PRIORITY, F.MQCFOP_EQUAL, 4)]),
    Command(F.MQCMD_INQUIRE_TOPIC_NAMES, {C.MQCA_TOPIC_NAME: "*"}),
    Command(F.MQCMD_INQUIRE_TOPIC_STATUS, {C.MQCA_TOPIC_STRING: "app/#", F.MQIACF_TOPIC_STATUS_TYPE: F.MQIACF_TOPIC_SUB}),
    Command(F.MQCMD_CLEAR_TOPIC_STRING, {C.MQCA_TOPIC_STRING: "app/t", F.MQIACF_CLEAR_TYPE: F.MQCLRT_RETAINED}),
    Command(F.MQCMD_CREATE_SUBSCRIPTION, {F.MQCACF_SUB_NAME: "S", C.MQCA_TOPIC_STRING: "app/t",
                                          F.MQIACF_DESTINATION_CLASS: C.MQDC_PROVIDED, F.MQCACF_DESTINATION: "APP.L",
                                          F.MQBACF_DESTINATION_CORREL_ID: b"c" * 24}),
    Command(F.MQCMD_CHANGE_SUBSCRIPTION, {F.MQCACF_SUB_NAME: "S", F.MQCACF_SUB_USER_DATA: "u"}),
    Command(F.MQCMD_COPY_SUBSCRIPTION, {F.MQCACF_FROM_SUB_NAME: "S", F.MQCACF_TO_SUB_NAME: "S2"}),
    Command(F.MQCMD_DELETE_SUBSCRIPTION, {F.MQCACF_SUB_NAME: "S"}),
    Command(F.MQCMD_INQUIRE_SUBSCRIPTION, {F.MQCACF_SUB_NAME: "*", F.MQIACF_SUB_ATTRS: (F.MQIACF_ALL,)}),
    Command(F.MQCMD_INQUIRE_SUB_STATUS, {F.MQBACF_SUB_ID: b"s" * 24}),
]
ENCODING = {from_command(c).pack(e): e for c in SEEDS for e in (P.NATIVE, P.REVERSED)}  # request -> its encoding
RAW = list(ENCODING)
EDGES = [struct.pack("<i", v) for v in (0, 1, -1, 16, 2**31 - 1, -(2**31))]


COMMANDS = sorted({c.command for c in SEEDS} | {F.MQCMD_NONE, F.MQCMD_START_CHANNEL, -1, 2**31 - 1})
SELECTORS = sorted({s for c in SEEDS for s in c.params} | {f.parameter for c in SEEDS for f in c.filters}
                   | {C.MQIA_INHIBIT_PUT, C.MQIA_DEFINITION_TYPE, C.MQCA_Q_MGR_NAME, F.MQIACF_ALL, 0, -1})
NAMES = ["APP.L", "APP.*", "*", "", " ", "SYSTEM.ADMIN.COMMAND.QUEUE", "FUZZ.REPLY", "X" * 49, "a b", "\u00e9"]
INTS = st.one_of(st.sampled_from([0, 1, -1, 2, 3, 999_999_999, 2**31 - 1, -(2**31)]), st.integers(-(2**31), 2**31 - 1))
VALUES = st.one_of(INTS, st.sampled_from(NAMES), st.binary(max_size=30), st.lists(INTS, max_size=4).map(tuple),
                   st.lists(st.sampled_from(NAMES), max_size=3).map(tuple))


@st.composite
def changed(draw: st.DrawFn) -> tuple[bytes, int]:
    """A seed request with parameters changed, added or dropped: reaches the executors."""
    seed = draw(st.sampled_from(SEEDS))
    cmd = Command(seed.command, dict(seed.params), list(seed.filters))
    for _ in range(draw(st.integers(1, 4))):
        match draw(st.integers(0, 4)):
            case 0:
                cmd.command = draw(st.sampled_from(COMMANDS))
            case 1 if cmd.params:
                cmd.params.pop(draw(st.sampled_from(sorted(cmd.params))))
            case 2:
                cmd.filters = [Filter(draw(st.sampled_from(SELECTORS)), draw(st.integers(-1, 20)),
                                      draw(st.one_of(INTS, st.sampled_from(NAMES))))]
            case _:
                cmd.params[draw(st.sampled_from(SELECTORS))] = draw(VALUES)
    encoding = draw(st.sampled_from([P.NATIVE, P.REVERSED]))
    return from_command(cmd).pack(encoding), encoding


@st.composite
def mutated(draw: st.DrawFn) -> tuple[bytes, int]:
    """A seed request with a few bytes changed, 32-bit fields set to edge values, cut or grown."""
    seed = draw(st.sampled_from(RAW))
    raw = bytearray(seed)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(raw)))
        match draw(st.integers(0, 3)):
            case 0 if at < len(raw):
                raw[at] = draw(st.integers(0, 255))
            case 1:
                word = draw(st.sampled_from(EDGES))
                raw[at & ~3:(at & ~3) + 4] = word if ENCODING[seed] == P.REVERSED else word[::-1]
            case 2:
                del raw[at:at + draw(st.integers(1, 12))]
            case _:
                raw[at:at] = draw(st.binary(min_size=1, max_size=12))
    return bytes(raw), ENCODING[seed]


class Admin:
    """An engine, its command server and a requester, in-process (fake clock, memory journal)."""

    def __init__(self) -> None:
        self.qm = QueueManager.start("QM1", MemoryJournal(), FakeClock())
        self.qm.objects.define("QLOCAL", "APP.L")
        self.qm.objects.define("QLOCAL", "FUZZ.REPLY")
        # A topic object and a subscription for the topic and subscription commands to find.
        self.qm.state.topics.define("APP.T", {"TOPICSTR": "app/t"})
        self.qm.subscriber.define("S", {"TOPICSTR": "app/t", "DEST": "APP.L"})
        self.hconn = self.qm.connect(appl_name="fuzzer")
        self.cs = CommandServer(self.qm, lambda lsn, send: send())
        self.cs.pump()

    def request(self, data: bytes, encoding: int) -> list[P.PCFMessage]:
        """Put ``data`` as a PCF request; the responses found (on the ReplyToQ or, when a
        command made it refuse them, on the dead-letter queue)."""
        md = MQMD(msg_type=C.MQMT_REQUEST, format=C.MQFMT_ADMIN, reply_to_q="FUZZ.REPLY", encoding=encoding)
        put = self.qm.put1(self.hconn, ObjectDescriptor(object_name=COMMAND_QUEUE), md,
                           PutOptions(C.MQPMO_NO_SYNCPOINT), data)
        for d in self.qm.take_deliveries():
            assert self.cs.deliver(d)
        if self.cs.idle:  # the command disabled gets on its own queue: what a tick does once enabled
            self.enable_gets()
        out = []
        for queue in ("FUZZ.REPLY", "SYSTEM.DEAD.LETTER.QUEUE"):
            hobj = self.qm.open(self.hconn, ObjectDescriptor(object_name=queue), C.MQOO_INPUT_SHARED).hobj
            while self.qm.objects.require(queue).messages.depth:
                got = self.qm.get(self.hconn, hobj, MQMD(), GetOptions(C.MQGMO_NO_WAIT), 1 << 22)
                assert isinstance(got, GetResult)
                body, encoding = got.data, got.md.encoding
                if got.md.format.strip() == C.MQFMT_DEAD_LETTER_HEADER.strip():
                    dlh = MQDLH.unpack_from(body)
                    assert dlh.reason != C.MQRC_UNEXPECTED_ERROR, "a request failed unexpectedly (a defect)"
                    body, encoding = body[C.MQDLH_LENGTH_1:], dlh.encoding
                if got.md.correl_id == put.md.msg_id:
                    out.append(P.PCFMessage.unpack(body, encoding))
            self.qm.close(self.hconn, hobj)
        return out

    def enable_gets(self) -> None:
        hobj = self.qm.open(self.hconn, ObjectDescriptor(object_name=COMMAND_QUEUE), C.MQOO_SET).hobj
        self.qm.set(self.hconn, hobj, {C.MQIA_INHIBIT_GET: C.MQQA_GET_ALLOWED}, {})
        self.qm.close(self.hconn, hobj)
        self.cs.pump()

    def check(self, data: bytes, encoding: int) -> None:
        """The only outcomes: PCF responses, the last one final, none a contained defect;
        and a DISPLAY QMGR answered after."""
        out = self.request(data, encoding)
        assert out, "no reply"
        event(f"reason {out[-1].header.reason}")  # --hypothesis-show-statistics: how deep the requests got
        assert all(m.header.type == F.MQCFT_RESPONSE for m in out)
        assert out[-1].header.control == F.MQCFC_LAST
        assert F.MQRCCF_COMMAND_FAILED not in {m.header.reason for m in out}
        display = from_command(Command(F.MQCMD_INQUIRE_Q_MGR)).pack(P.NATIVE)
        assert [(m.header.comp_code, m.header.control) for m in self.request(display, P.NATIVE)] == [
            (C.MQCC_OK, F.MQCFC_LAST)]


@FUZZ
@given(st.one_of(changed(), mutated()))
def test_mutated_pcf_requests_get_pcf_responses(request: tuple[bytes, int]) -> None:
    """Mutated valid requests: PCF responses only, and DISPLAY QMGR still answered.
    Full size: FERRYMQ_FUZZ_EXAMPLES=20000 pytest tests/property/test_admin_fuzz.py -k mutated"""
    Admin().check(*request)


@FUZZ
@given(st.binary(max_size=200), st.sampled_from([P.NATIVE, P.REVERSED]))
def test_random_bytes_get_pcf_responses(data: bytes, encoding: int) -> None:
    """Random bytes: PCF responses only, and DISPLAY QMGR still answered.
    Full size: FERRYMQ_FUZZ_EXAMPLES=20000 pytest tests/property/test_admin_fuzz.py -k random"""
    Admin().check(data, encoding)


MQSC = """\
DEFINE QLOCAL(ORDERS.IN) MAXDEPTH(1000) DESCR('Incoming orders') +
       DEFPSIST(YES)
DEFINE QLOCAL(ORDERS.OUT) LIKE(ORDERS.IN) DESCR('It''s out')
DEFINE QALIAS(ORDERS) TARGET(ORDERS.IN) REPLACE
DEFINE QMODEL(ORDERS.REPLY) DEFTYPE(TEMPDYN)
ALTER QLOCAL(ORDERS.IN) BOTHRESH(3) BOQNAME(ORDERS.BACKOUT) NOSHARE TRIGGER GET(DISABLED)
ALTER QMGR DESCR('test') MAXHANDS(500)
ALTER QLOCAL(ORDERS.IN) MAXDEPTH(5000) MAXMSGL(1024) DEFPRTY(5) DESCR('deep')
ALTER QMGR MAXHANDS(500) MAXMSGL(4194304) DESCR('Main QM')
DISPLAY QUEUE(*) WHERE(MAXDEPTH LT 100)
DELETE QLOCAL(ORDERS.OUT) PURGE
CLEAR QLOCAL(ORDERS.IN)
DISPLAY QUEUE(ORDERS*) MAXDEPTH DEFPSIST
DISPLAY QLOCAL(*) WHERE(CURDEPTH GT 0)
DIS Q(*) WHERE(DESCR LK 'In*')
DISPLAY QSTATUS(ORDERS.*) TYPE(HANDLE) ALL
DISPLAY CONN(*) TYPE(ALL)
DISPLAY CONN(414D5143514D3120) ALL
DISPLAY QMGR DEADQ
PING QMGR
DEFINE TOPIC(SPORT) TOPICSTR('Sport/Tennis') DEFPRTY(4) PUB(DISABLED) REPLACE
DEF TOPIC(GOLF) LIKE(SPORT) TOPICSTR('Sport/Golf') MDURMDL(' ')
ALTER TOPIC(SPORT) DEFPSIST(ASPARENT) WILDCARD(BLOCK)
DISPLAY TOPIC(*) TYPE(LOCAL) WHERE(DEFPRTY GT 3)
DIS TPSTATUS('Sport/#') TYPE(SUB) SUBID NUMMSGS
DISPLAY TPSTATUS('#') WHERE(SUBCOUNT GT 0)
CLEAR TOPICSTR('Sport/Tennis') CLRTYPE(RETAINED) SCOPE(LOCAL)
DEFINE SUB('scores') TOPICSTR('Sport/+') DESTCLAS(MANAGED) DESTCORL(00FF) PUBPRTY(ASPUB) EXPIRY(100)
ALTER SUB('scores') USERDATA('u') SUBID(0A0B)
DISPLAY SUB(*) DURABLE(YES) SUBTYPE(ADMIN) WHERE(DESTCLAS EQ MANAGED)
DISPLAY SBSTATUS('scores') SUBID(0A0B) ALL
DELETE SUB('scores')
DELETE TOPIC(GOLF)
* a comment
END""".splitlines()
PIECES = ["(", ")", "'", "''", "+", "-", " ", "WHERE(", "*", "GT", "LK", "CTG", "ALL", "TYPE(", "QMGR", "QL(",
          "-1", "2147483648", "99999999999999999999", "1_0", "\u0663", "\x00", "\u00e9", "\udce9", "\n", "\t"]


NUMBERS = ["2147483648", "-2147483649", "99999999999999999999", "1_0", "\u0663", "2147483647", "-1", "+7", " 5 ", "",
           "YES"]
TEXTS = ["\udce9", "caf\udce9", "\ud800x", "", "a''b", "x" * 300, "(", ")", "\u00e9"]
VALUES_MQSC = ["*", "CURDEPTH GT 5", "DESCR LK 'x*'", "MAXDEPTH EQ 2147483648", "GET EQ DISABLED", "(", "'", ""]


@st.composite
def mqsc_line(draw: st.DrawFn) -> str:
    """A line of MQSC like a person writes, with a number, a quoted text or a whole value
    swapped for an awkward one, and then (sometimes) a few characters changed."""
    line = draw(st.sampled_from(MQSC))
    numbers = [m.span() for m in re.finditer(r"(?<=[ (])-?[0-9]+(?=\))", line)]
    texts = [m.span(1) for m in re.finditer(r"'((?:[^']|'')*)'", line)]
    groups = [m.span(1) for m in re.finditer(r"\(([^()]*)\)", line)]
    for spans, choices in ((numbers, NUMBERS), (texts, TEXTS), (groups, VALUES_MQSC)):
        if spans and draw(st.booleans()):
            start, end = draw(st.sampled_from(spans))
            line = line[:start] + draw(st.sampled_from(choices)) + line[end:]
            break
    text = list(line)
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2, 4]))):
        at = draw(st.integers(0, len(text)))
        match draw(st.integers(0, 2)):
            case 0:
                text[at:at] = list(draw(st.sampled_from(PIECES)))
            case 1:
                del text[at:at + draw(st.integers(1, 6))]
            case _:
                text[at:at] = list(draw(st.text(max_size=6)))
    return "".join(text)


@FUZZ
@given(st.lists(st.one_of(mqsc_line(), mqsc_line(), st.text(max_size=60)), min_size=1, max_size=5))
def test_mqsc_lines_parse_or_are_syntax_errors(lines: list[str]) -> None:
    """A parse result that PCF can carry, or MqscSyntaxError; never another exception.
    Full size: FERRYMQ_FUZZ_EXAMPLES=20000 pytest tests/property/test_admin_fuzz.py -k mqsc"""
    for text in commands(iter(lines)):
        try:
            parsed = parse(text)
            if parsed.verb == "END":
                continue
            cmd = to_command(parsed)
        except MqscSyntaxError:
            continue
        for encoding in (P.NATIVE, P.REVERSED):
            from_command(cmd).pack(encoding)  # what ferrymq mqsc sends
