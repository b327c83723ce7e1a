"""A run of publications (MQPUTs gathered in one PutBatch: engine.publishing ``publish_run``)
against the same MQPUTs made one by one, differentially: two queue managers with the same
subscriptions (managed and provided queues, durable and not, SubUserData, selectors, a
subscription of the publisher's own connection, a queue that fills) take the same
publications, one as a run and one publication per call; every outcome, every copy on
every queue (descriptor, data, properties), every retained publication and the units of
work must be the same.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ferrymq.engine.api import FakeClock, ObjectDescriptor, PutOptions, SubDescriptor
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.properties import model as props_model
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.mqmd import MQMD

TOPIC = "run/t"
CORREL_A = "JMSCorrelationID = 'ID:410000000000000000000000000000000000000000000000'"  # chooses among the publications of a run
PMOS = [0, 0, C.MQPMO_SYNCPOINT, C.MQPMO_NEW_MSG_ID, C.MQPMO_NEW_CORREL_ID, C.MQPMO_NOT_OWN_SUBS, C.MQPMO_RETAIN,
        C.MQPMO_WARN_IF_NO_SUBS_MATCHED, C.MQPMO_SUPPRESS_REPLYTO, C.MQPMO_SYNCPOINT | C.MQPMO_RETAIN]
SUB = st.fixed_dictionaries({
    "pattern": st.sampled_from([TOPIC, TOPIC, "run/#", "other"]),
    "durable": st.booleans(),
    "provided_depth": st.sampled_from([None, None, 1, 3]),  # a queue of its own, this deep
    "user_data": st.sampled_from(["", "", "desk"]),
    "selector": st.sampled_from(["", "", "", "Root.MQMD.Priority > 4", CORREL_A]),
    "own": st.booleans(),  # made on the publisher's connection
    "pub_priority": st.sampled_from([C.MQPRI_PRIORITY_AS_PUBLISHED] * 3 + [2]),
})
ROW = st.tuples(st.sampled_from([b"", b"M"]), st.sampled_from([b"", b"A"]), st.sampled_from([b"x", b"data", bytes(50)]))


def _side(subs: list[dict[str, Any]], npmsgdlv: str, pmsgdlv: str, usedlq: str) -> tuple[QueueManager, int, int, list[str]]:
    qm = QueueManager.start("QM1", MemoryJournal(), FakeClock())
    qm.state.topics.define("RUNT", {"TOPICSTR": TOPIC, "NPMSGDLV": npmsgdlv, "PMSGDLV": pmsgdlv, "USEDLQ": usedlq})
    publisher, other = qm.connect(appl_name="pub", user="u1"), qm.connect(appl_name="subs", user="u2")
    queues = []
    for i, s in enumerate(subs):
        hconn = publisher if s["own"] else other
        options = C.MQSO_CREATE | C.MQSO_WILDCARD_TOPIC | (C.MQSO_DURABLE if s["durable"] else C.MQSO_NON_DURABLE)
        hobj = C.MQHO_NONE
        if s["provided_depth"] is None:
            options |= C.MQSO_MANAGED
        else:
            name = f"SUBQ{i}"
            qm.objects.define("QLOCAL", name, {"MAXDEPTH": s["provided_depth"]})
            hobj = qm.open(hconn, ObjectDescriptor(name), C.MQOO_INPUT_AS_Q_DEF).hobj
        sd = SubDescriptor(options, object_string=s["pattern"], sub_name=f"S{i}" if s["durable"] else "",
                           sub_user_data=s["user_data"], selection_string=s["selector"],
                           pub_priority=s["pub_priority"])
        res = qm.subscribe(hconn, sd, hobj)
        queues.append(qm.handles[res.hobj].queue.name if s["provided_depth"] is None else f"SUBQ{i}")  # type: ignore[union-attr]
    topic = qm.open(publisher, ObjectDescriptor(object_type=C.MQOT_TOPIC, object_string=TOPIC), C.MQOO_OUTPUT).hobj
    return qm, publisher, topic, [*queues, "SYSTEM.DEAD.LETTER.QUEUE"]


def _held(qm: QueueManager, queues: list[str]) -> list[Any]:
    out = []
    for name in queues:
        q = qm.objects.require(name)
        out.append([(m.md_bytes(), m.data, props_model.pack(m.properties) if m.properties else None)
                    for m in sorted(q.messages.by_seq.values(), key=lambda m: m.key)])
        out.append(q.messages.uncommitted)
    return out


@given(subs=st.lists(SUB, max_size=5), rows=st.lists(ROW, min_size=1, max_size=6), pmo=st.sampled_from(PMOS),
       priority=st.sampled_from([C.MQPRI_PRIORITY_AS_TOPIC_DEF, 1, 7]),
       persistence=st.sampled_from([C.MQPER_PERSISTENCE_AS_TOPIC_DEF, C.MQPER_NOT_PERSISTENT, C.MQPER_PERSISTENT]),
       npmsgdlv=st.sampled_from(["ALLAVAIL", "ALL"]), pmsgdlv=st.sampled_from(["ALLDUR", "ALLAVAIL", "ALL"]),
       usedlq=st.sampled_from(["NO", "NO", "YES"]), reply=st.sampled_from(["", "R"]), commit=st.booleans())
@settings(max_examples=150, deadline=None)
def test_a_run_publishes_as_the_same_puts_one_by_one(subs: list[dict[str, Any]], rows: list[tuple[bytes, bytes, bytes]],
                                                     pmo: int, priority: int, persistence: int, npmsgdlv: str,
                                                     pmsgdlv: str, usedlq: str, reply: str,
                                                     commit: bool) -> None:
    md = MQMD(priority=priority, persistence=persistence, reply_to_q=reply)
    seen = []
    for as_run in (True, False):
        qm, publisher, topic, queues = _side(subs, npmsgdlv, pmsgdlv, usedlq)
        if as_run:
            outcomes = qm.put_columns(publisher, topic, md, PutOptions(pmo), [d for _, _, d in rows],
                                      msg_ids=[m.ljust(24, b"\0") for m, _, _ in rows],
                                      correl_ids=[c.ljust(24, b"\0") for _, c, _ in rows])
            got: list[Any] = [None if o is None else (o.comp, o.reason) for o in outcomes]
        else:
            got = []
            for msg_id, correl_id, data in rows:
                one = md.replace(msg_id=msg_id.ljust(24, b"\0"), correl_id=correl_id.ljust(24, b"\0"))
                try:
                    res = qm.put(publisher, topic, one, PutOptions(pmo), data)
                except MQError as exc:
                    got.append((exc.comp, exc.reason))
                else:
                    got.append(None if not res.reason else (res.comp, res.reason))
        before = _held(qm, queues)
        (qm.commit if commit else qm.backout)(publisher)
        retained = qm.publisher.retained.get(TOPIC)
        seen.append((got, before, _held(qm, queues), None if retained is None else (retained.md, retained.data)))
    assert seen[0] == seen[1]
