"""The topic tree against a reference: random DEFINE/ALTER/DELETE TOPIC (refused ones
included) and restarts from the journal, then every attribute of every topic string resolved
both ways. The reference keeps a dict from topic string to attributes and walks the levels
of a string from the longest prefix down; SYSTEM.BASE.TOPIC's values end the walk."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from ferrymq.engine.api import FakeClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.engine.topics import BASE_TOPIC, BASE_VALUES, TopicRegistry
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.store.memory import MemoryJournal

LEVELS = ["a", "b", ""]
STRINGS = st.lists(st.sampled_from(LEVELS), min_size=1, max_size=3).map("/".join).filter(bool)
NAMES = st.sampled_from(["T1", "T2", "T3", "T4"])
# Values each attribute may be given, ASPARENT (or blank) among them.
VALUES = {
    "DEFPRTY": st.sampled_from([C.MQPRI_PRIORITY_AS_PARENT, 0, 3, 9]),
    "PUB": st.sampled_from([C.MQTA_PUB_AS_PARENT, C.MQTA_PUB_ALLOWED, C.MQTA_PUB_INHIBITED]),
    "MDURMDL": st.sampled_from(["", "M.ONE", "M.TWO"]),
}
ATTRS = st.fixed_dictionaries({}, optional=VALUES)
AS_PARENT: dict[str, int | str] = {"DEFPRTY": C.MQPRI_PRIORITY_AS_PARENT, "PUB": C.MQTA_PUB_AS_PARENT, "MDURMDL": ""}


def reference_effective(objects: dict[str, tuple[str, dict[str, int | str]]], base: dict[str, int | str],
                        topic: str, attr: str) -> int | str:
    by_string = {s: a for s, a in objects.values()}
    levels = topic.split("/")
    for n in range(len(levels), 0, -1):
        prefix = "/".join(levels[:n])
        if prefix and prefix in by_string:
            value = by_string[prefix].get(attr, AS_PARENT[attr])
            if value != AS_PARENT[attr]:
                return value
    return base[attr]


class TopicTreeModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.journal = MemoryJournal()
        self.qm = QueueManager.start("QM1", self.journal, FakeClock())
        self.objects: dict[str, tuple[str, dict[str, int | str]]] = {}  # name -> (string, attrs given)
        self.base = {k: BASE_VALUES[k] for k in VALUES}

    @property
    def reg(self) -> TopicRegistry:
        return self.qm.state.topics

    @rule(name=NAMES, string=STRINGS, attrs=ATTRS, replace=st.booleans())
    def define(self, name: str, string: str, attrs: dict[str, int | str], replace: bool) -> None:
        taken = any(s == string and n != name for n, (s, _) in self.objects.items())
        exists = name in self.objects
        changes_string = exists and self.objects[name][0] != string
        try:
            self.reg.define(name, {"TOPICSTR": string, **attrs}, replace=replace)
        except MQError as exc:
            expected = (C.MQRC_OBJECT_ALREADY_EXISTS if exists and not replace else
                        C.MQRC_TOPIC_NOT_ALTERABLE if changes_string else None)
            assert exc.reason == expected or (taken and exc.reason != C.MQRC_OBJECT_ALREADY_EXISTS), exc
            return
        assert not taken and not (exists and not replace) and not changes_string
        self.objects[name] = (string, dict(attrs))

    @rule(name=NAMES, attrs=ATTRS)
    def alter(self, name: str, attrs: dict[str, int | str]) -> None:
        try:
            self.reg.alter(name, attrs)
        except MQError as exc:
            assert name not in self.objects and exc.reason == C.MQRC_UNKNOWN_OBJECT_NAME
            return
        self.objects[name][1].update(attrs)

    @rule(attrs=ATTRS)
    def alter_base(self, attrs: dict[str, int | str]) -> None:
        deferring = any(v == AS_PARENT[k] for k, v in attrs.items())
        try:
            self.reg.alter(BASE_TOPIC, attrs)
        except MQError as exc:
            assert deferring and exc.reason == C.MQRC_INHIBIT_VALUE_ERROR
            return
        assert not deferring
        self.base.update(attrs)

    @rule(name=NAMES)
    def delete(self, name: str) -> None:
        try:
            self.reg.delete(name)
        except MQError as exc:
            assert name not in self.objects and exc.reason == C.MQRC_UNKNOWN_OBJECT_NAME
            return
        del self.objects[name]

    @rule()
    def restart(self) -> None:
        # A definition's reply waits for the disk: once synced, a crash loses none of them.
        assert self.qm.take_sync_lsn() <= self.journal.appended_lsn
        self.journal.sync()
        self.journal = self.journal.crash()
        self.qm = QueueManager.start("QM1", self.journal, FakeClock())

    @invariant()
    def every_string_resolves_as_the_reference_does(self) -> None:
        assert {n: t.topic_string for n, t in self.reg.topics.items() if not n.startswith("SYSTEM.")} == \
            {n: s for n, (s, _) in self.objects.items()}
        for levels in (["a"], ["a", "b"], ["a", "", "b"], ["b", "a", "a"], ["", "a"], ["a", "b", "a", "b"]):
            topic = "/".join(levels)
            for attr in VALUES:
                assert self.reg.effective(topic, attr) == reference_effective(self.objects, self.base, topic, attr), \
                    (topic, attr)


TopicTreeModel.TestCase.settings = settings(max_examples=150, stateful_step_count=25, deadline=None)
TestTopicTreeModel = TopicTreeModel.TestCase
