"""Publish/subscribe against a simple reference: random subscribes (durable or not, with
wildcards), removals, publications (persistent or not, retained or not, under syncpoint or
not) and crash restarts; what each subscription receives must be what the reference says.

The reference: a subscription receives, in order, the retained publications its pattern
matches when it is made (in topic order), then every publication committed after it on a
matching topic (non-persistent on a non-durable subscription's temporary managed queue,
docs/pubsub.md). A restart keeps durable subscriptions and their persistent publications,
and persistent retained publications; everything else is gone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from ferrymq.engine.api import FakeClock, GetOptions, GetResult, ObjectDescriptor, PutOptions, SubDescriptor
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.mqmd import MQMD

TOPICS = ["a", "a/b", "a/c", "b", "b/a"]
PATTERNS = [*TOPICS, "a/#", "#", "a/+", "+/a"]
NAMES = ["S1", "S2", "S3", "S4"]


def matches(pattern: str, topic: str) -> bool:
    """The reference's own topic-based matching (levels; ``#`` any number, ``+`` one)."""
    p, t = pattern.split("/"), topic.split("/")
    if p and p[-1] == "#":
        head = p[:-1]
        return len(t) >= len(head) and all(x in ("+", y) for x, y in zip(head, t, strict=False))
    return len(p) == len(t) and all(x in ("+", y) for x, y in zip(p, t, strict=True))


@dataclass
class RefSub:
    pattern: str
    durable: bool
    # (where it stands on the queue, data, persistent): a publication's copy stands where its
    # MQPUT put it (under syncpoint too: its place is taken at MQPUT, not at the commit); the
    # retained publications a new subscription receives stand after every put so far, in
    # topic order.
    expected: list[tuple[tuple[int, ...], bytes, bool]] = field(default_factory=list)


class PubSubModel(RuleBasedStateMachine):
    @initialize()
    def setup(self) -> None:
        self.clock = FakeClock()
        self.journal = MemoryJournal()
        self.qm = QueueManager.start("QM1", self.journal, self.clock)
        self.hconn = self.qm.connect(user="model")
        self.subs: dict[str, RefSub] = {}
        self.handles: dict[str, tuple[int, int]] = {}  # open non-durable subs: name -> (hsub, hobj)
        self.retained: dict[str, tuple[bytes, bool]] = {}
        # Published under syncpoint, not committed, with the subscriptions it matched when it
        # was put: IBM makes a publication's copies at MQPUT, inside the unit of work, so a
        # subscription made before the commit does not receive it.
        self.pending: list[tuple[str, bytes, bool, bool, list[RefSub]]] = []
        self.n = 0

    def _data(self) -> bytes:
        self.n += 1
        return b"m%d" % self.n

    @rule(name=st.sampled_from(NAMES), pattern=st.sampled_from(PATTERNS), durable=st.booleans())
    def subscribe(self, name: str, pattern: str, durable: bool) -> None:
        sd = SubDescriptor(C.MQSO_CREATE | C.MQSO_MANAGED | (C.MQSO_DURABLE if durable else 0), object_string=pattern,
                           sub_name=name)
        if name in self.subs:
            try:
                self.qm.subscribe(self.hconn, sd)
            except MQError as exc:
                assert exc.reason in (C.MQRC_SUB_ALREADY_EXISTS, C.MQRC_SUBSCRIPTION_IN_USE)
            else:
                raise AssertionError("a second CREATE of one SubName succeeded")
            return
        res = self.qm.subscribe(self.hconn, sd)
        ref = self.subs[name] = RefSub(pattern, durable)
        kept = [self.retained[t] for t in sorted(self.retained) if matches(pattern, t)]
        ref.expected += [((self.n, 1, i), d, p and durable) for i, (d, p) in enumerate(kept)]
        if durable:
            self.qm.close(self.hconn, res.hsub)  # kept; its managed queue stays
            self.qm.close(self.hconn, res.hobj)
        else:
            self.handles[name] = (res.hsub, res.hobj)

    @rule(name=st.sampled_from(NAMES))
    def unsubscribe(self, name: str) -> None:
        ref = self.subs.pop(name, None)
        if ref is None:
            return
        if ref.durable:
            res = self.qm.subscribe(self.hconn, SubDescriptor(C.MQSO_RESUME | C.MQSO_DURABLE | C.MQSO_MANAGED,
                                                              sub_name=name))
            self.qm.close(self.hconn, res.hobj)
            self.qm.close(self.hconn, res.hsub, C.MQCO_REMOVE_SUB)
        else:
            hsub, hobj = self.handles.pop(name)
            self.qm.close(self.hconn, hsub)
            self.qm.close(self.hconn, hobj)

    @rule(topic=st.sampled_from(TOPICS), persistent=st.booleans(), retain=st.booleans(), syncpoint=st.booleans())
    def publish(self, topic: str, persistent: bool, retain: bool, syncpoint: bool) -> None:
        data = self._data()
        od = ObjectDescriptor(object_type=C.MQOT_TOPIC, object_string=topic)
        pmo = (C.MQPMO_RETAIN if retain else 0) | (C.MQPMO_SYNCPOINT if syncpoint else C.MQPMO_NO_SYNCPOINT)
        md = MQMD(persistence=C.MQPER_PERSISTENT if persistent else C.MQPER_NOT_PERSISTENT)
        self.qm.put1(self.hconn, od, md, PutOptions(pmo), data)
        targets = [ref for ref in self.subs.values() if matches(ref.pattern, topic)]
        if syncpoint:
            self.pending.append((topic, data, persistent, retain, targets))
        else:
            self._delivered(topic, data, persistent, retain, targets)

    def _delivered(self, topic: str, data: bytes, persistent: bool, retain: bool, targets: list[RefSub]) -> None:
        live = list(self.subs.values())
        for ref in targets:
            if any(ref is other for other in live):  # a copy on a removed subscription's queue went with it
                # a non-durable one's temporary queue holds it non-persistent
                ref.expected.append(((int(data[1:]), 0), data, persistent and ref.durable))
        if retain:
            self.retained[topic] = (data, persistent)

    @rule(commit=st.booleans())
    def end_unit(self, commit: bool) -> None:
        if commit:
            self.qm.commit(self.hconn)
            for item in self.pending:
                self._delivered(*item)
        else:
            self.qm.backout(self.hconn)
        self.pending = []

    @rule()
    def crash_restart(self) -> None:
        self.journal.sync()  # everything so far was acknowledged
        self.journal = self.journal.crash()
        self.qm = QueueManager.start("QM1", self.journal, self.clock)
        self.hconn = self.qm.connect(user="model")
        self.pending = []
        self.handles = {}
        self.subs = {n: r for n, r in self.subs.items() if r.durable}
        for ref in self.subs.values():
            ref.expected = [e for e in ref.expected if e[2]]
        self.retained = {t: v for t, v in self.retained.items() if v[1]}

    @rule(name=st.sampled_from(NAMES))
    def drain(self, name: str) -> None:
        ref = self.subs.get(name)
        if ref is None:
            return
        if ref.durable:
            res = self.qm.subscribe(self.hconn, SubDescriptor(C.MQSO_RESUME | C.MQSO_DURABLE | C.MQSO_MANAGED,
                                                              sub_name=name))
            hsub, hobj = res.hsub, res.hobj
        else:
            hsub, hobj = self.handles[name]
        got = []
        while True:
            try:
                r = self.qm.get(self.hconn, hobj, MQMD(), GetOptions(C.MQGMO_NO_WAIT | C.MQGMO_NO_SYNCPOINT), 1 << 10)
            except MQError as exc:
                assert exc.reason == C.MQRC_NO_MSG_AVAILABLE
                break
            assert isinstance(r, GetResult)
            got.append((r.data, r.md.persistence == C.MQPER_PERSISTENT))
        expected = [(d, p) for _, d, p in sorted(ref.expected)]
        assert got == expected, (name, ref)
        ref.expected = []
        if ref.durable:
            self.qm.close(self.hconn, hsub)
            self.qm.close(self.hconn, hobj)

    @invariant()
    def registry_agrees(self) -> None:
        if hasattr(self, "qm"):
            assert sorted(s.key for s in self.qm.subscriptions) == sorted(self.subs)


PubSubModel.TestCase.settings = settings(max_examples=300, stateful_step_count=40, deadline=None)
TestPubSubModel = PubSubModel.TestCase
