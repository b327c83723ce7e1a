"""Whatever names, types and values an application gives, the property calls (MQSETMP,
MQINQMP, MQDLTMP, MQMHBUF) and a put and every kind of get answer with a result or an
MQError, never another exception; a put either refuses the message or stores one that every
getter receives, an MQRFH2 getter one that a put reads again (issue 24).

CI runs a few seconds; the full-size run:

    FERRYMQ_PROPERTY_EXAMPLES=5000 .venv/bin/pytest -q tests/property/test_properties_any_input.py
"""

from __future__ import annotations

import contextlib
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ferrymq.engine.api import FakeClock, GetOptions, GetResult, ObjectDescriptor, PutOptions
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.properties.buffers import Buffer, handle_to_buffer
from ferrymq.properties.handle import MessageHandleState
from ferrymq.properties.model import TYPES, PropertySet
from ferrymq.properties.rfh2map import absorb
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.mqmd import MQMD

EXAMPLES = int(os.environ.get("FERRYMQ_PROPERTY_EXAMPLES", "60"))
ANY = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Names from the characters that matter: separators, wildcards, markup, surrogates, letters
# past U+FFFF, blanks, digits, reserved prefixes.
names = st.one_of(
    st.text(st.sampled_from([*"ab.%<>&'\" $_-:9é", "\ud800", "\U0001d400", "\0"]), max_size=8),
    st.sampled_from(["", "JMSPriority", "Root.MQMD.Priority", "Body", "mqps.Top", "usr.x", "x.y.z", "a" * 4096]),
)
values = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(),
                   st.text(st.sampled_from([*"ab<&'\n\r", "\ud800", "\udfff", "\U0001f600"]), max_size=6),
                   st.binary(max_size=4))
types = st.one_of(st.sampled_from(TYPES), st.integers(-3, 20))
PROPCTLS = (C.MQPROP_COMPATIBILITY, C.MQPROP_NONE, C.MQPROP_ALL, C.MQPROP_FORCE_MQRFH2, C.MQPROP_V6COMPAT)
GET_OPTIONS = (0, C.MQGMO_PROPERTIES_FORCE_MQRFH2, C.MQGMO_NO_PROPERTIES, C.MQGMO_PROPERTIES_IN_HANDLE,
               C.MQGMO_PROPERTIES_COMPATIBILITY)


@given(st.lists(st.tuples(names, values, types), max_size=6), st.booleans(), names)
@ANY
def test_the_property_calls_answer_or_refuse(calls: list[tuple[str, object, int]], validate: bool,
                                             inquired: str) -> None:
    h = MessageHandleState(C.MQCMHO_VALIDATE if validate else C.MQCMHO_NO_VALIDATION)
    for name, value, ptype in calls:
        with contextlib.suppress(MQError):
            h.set(name, value, ptype)
    for call in (lambda: h.inquire(inquired), lambda: h.inquire(inquired, C.MQIMPO_CONVERT_TYPE, C.MQTYPE_STRING),
                 lambda: h.delete(inquired),
                 lambda: handle_to_buffer(h, "%", 0, Buffer(b"", C.MQFMT_STRING, C.MQENC_NATIVE, 1208), 1 << 20)):
        with contextlib.suppress(MQError):
            call()


@given(st.dictionaries(names, values, max_size=5), st.sampled_from(PROPCTLS), st.sampled_from(GET_OPTIONS),
       st.booleans(), st.booleans())
@ANY
def test_a_put_refuses_or_every_getter_receives(props: dict[str, object], propctl: int, option: int, handle: bool,
                                                put1: bool) -> None:
    qm = QueueManager.start("QM1", MemoryJournal(), FakeClock())
    qm.objects.define("QLOCAL", "Q", {"PROPCTL": propctl})
    hconn = qm.connect()
    hobj = qm.open(hconn, ObjectDescriptor("Q"), C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED | C.MQOO_BROWSE).hobj
    try:
        typed = PropertySet(props)
    except (TypeError, ValueError):
        return  # a value no property type holds: the client's own refusal, before any call
    try:
        if put1:
            qm.put1(hconn, ObjectDescriptor("Q"), MQMD(format=C.MQFMT_STRING), PutOptions(), b"body", typed)
        else:
            qm.put(hconn, hobj, MQMD(format=C.MQFMT_STRING), PutOptions(), b"body", typed)
    except MQError:
        assert qm.objects.require("Q").messages.depth == 0
        return
    for opts in (C.MQGMO_BROWSE_FIRST | option, option):  # a browse, then the get that takes it
        try:
            got = qm.get(hconn, hobj, MQMD(), GetOptions(C.MQGMO_NO_WAIT | opts, 0, 0, msg_handle=handle), 1 << 20)
        except MQError as exc:
            assert exc.reason == C.MQRC_HMSG_ERROR and option == C.MQGMO_PROPERTIES_IN_HANDLE and not handle
            return
        assert isinstance(got, GetResult) and got.reason == C.MQRC_NONE
        if got.md.format.rstrip() == "MQHRF2":  # a getter's MQRFH2 is put again as it is
            absorb(got.data, got.md.format, got.md.encoding, got.md.coded_char_set_id)
    assert qm.objects.require("Q").messages.depth == 0
