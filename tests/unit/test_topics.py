"""TOPIC objects and the topic tree: combining ObjectName and ObjectString, ASPARENT
resolution, WILDCARD(BLOCK), persistence across restarts, and every refusal's reason
(with nothing changed by it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ferrymq.engine import attrs as A
from ferrymq.engine.api import FakeClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.engine.topics import BASE_TOPIC, DEFAULT_TOPIC, KIND_TOPIC, TopicRegistry, decode_topic, parents
from ferrymq.errors import DecodeError, MQError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.store.file import FileJournal
from ferrymq.store.memory import MemoryJournal


@pytest.fixture
def qm() -> QueueManager:
    return QueueManager.start("QM1", MemoryJournal(), FakeClock())


def topics(qm: QueueManager) -> TopicRegistry:
    return qm.state.topics


def snapshot(qm: QueueManager) -> tuple[object, ...]:
    """Everything a refused command must leave as it was."""
    reg = topics(qm)
    return ({n: (dict(t.attrs), t.altered, t.record_id) for n, t in reg.topics.items()},
            {s: t.name for s, t in reg.by_string.items()}, qm.objects.epoch, qm.journal.appended_lsn)


def refused(qm: QueueManager, reason: int, call: object, *args: object, **kw: object) -> None:
    before = snapshot(qm)
    with pytest.raises(MQError) as err:
        call(*args, **kw)  # type: ignore[operator]
    assert (err.value.comp, err.value.reason) == (C.MQCC_FAILED, reason), err.value.detail
    assert snapshot(qm) == before


# -- the system objects -----------------------------------------------------------------
def test_system_topics_as_ibm_ships_them(qm: QueueManager) -> None:
    base = topics(qm).require(BASE_TOPIC)
    assert base.topic_string == ""
    for attr in A.TOPIC_ATTRS:
        if attr.name not in ("CLUSTER",):
            assert not A.as_parent(attr, base.status(attr.name)), attr.name
    assert base.status("MDURMDL") == "SYSTEM.DURABLE.MODEL.QUEUE"
    assert base.status("MNDURMDL") == "SYSTEM.NDURABLE.MODEL.QUEUE"
    assert (base.status("PMSGDLV"), base.status("NPMSGDLV")) == (C.MQDLV_ALL_DUR, C.MQDLV_ALL_AVAIL)
    default = topics(qm).require(DEFAULT_TOPIC)
    for attr in A.TOPIC_ATTRS:
        if "ASPARENT" in attr.words or attr.name in A.INHERITED_BLANK:
            assert A.as_parent(attr, default.status(attr.name)), attr.name
    model = qm.objects.require("SYSTEM.NDURABLE.MODEL.QUEUE")
    assert (model.qtype, model["DEFTYPE"]) == (A.QMODEL, C.MQQDT_TEMPORARY_DYNAMIC)


# -- combining topic strings --------------------------------------------------------------
@pytest.mark.parametrize(("topicstr", "object_string", "full"), [
    # IBM, "Combining topic strings" (Using topic strings), Table 1.
    ("Football/Scores", "", "Football/Scores"),
    (None, "Football/Scores", "Football/Scores"),
    ("Football", "Scores", "Football/Scores"),
    ("Football", "/Scores", "Football//Scores"),
    ("/Football", "Scores", "/Football/Scores"),
])
def test_combining_topic_strings(qm: QueueManager, topicstr: str | None, object_string: str, full: str) -> None:
    name = ""
    if topicstr is not None:
        topics(qm).define("T1", {"TOPICSTR": topicstr})
        name = "T1"
    assert topics(qm).full_string(name, object_string) == full


def test_a_field_is_present_only_when_its_first_character_is_not_blank_or_null(qm: QueueManager) -> None:
    topics(qm).define("T1", {"TOPICSTR": "a"})
    assert topics(qm).full_string("T1" + " " * 46, " b") == "a"
    assert topics(qm).full_string("T1", "\0b") == "a"
    assert topics(qm).full_string("\0T1", "b") == "b"


def test_combining_refusals(qm: QueueManager) -> None:
    reg = topics(qm)
    refused(qm, C.MQRC_UNKNOWN_OBJECT_NAME, reg.full_string, "", "")
    refused(qm, C.MQRC_UNKNOWN_OBJECT_NAME, reg.full_string, " ", "\0")
    refused(qm, C.MQRC_UNKNOWN_OBJECT_NAME, reg.full_string, "NO.SUCH.TOPIC", "a")
    # SYSTEM.BASE.TOPIC's string is blank: alone it makes an empty topic string (IBM: 2425).
    refused(qm, C.MQRC_TOPIC_STRING_ERROR, reg.full_string, BASE_TOPIC, "")
    assert reg.full_string(BASE_TOPIC, "x/y") == "x/y"
    reg.define("LONG", {"TOPICSTR": "x" * 10_000})
    refused(qm, C.MQRC_TOPIC_STRING_ERROR, reg.full_string, "LONG", "y" * 300)  # each fits; together not
    # ObjectString itself over MQ_TOPIC_STR_LENGTH: IBM's ObjectString field error, first.
    refused(qm, C.MQRC_OBJECT_STRING_ERROR, reg.full_string, "", "y" * 10_241)
    refused(qm, C.MQRC_OBJECT_STRING_ERROR, reg.full_string, "NO.SUCH.TOPIC", "y" * 10_241)
    assert reg.full_string("", "y" * 10_240) == "y" * 10_240


# -- the tree and ASPARENT ----------------------------------------------------------------
def test_parents() -> None:
    assert list(parents("a/b/c")) == ["a/b/c", "a/b", "a"]
    assert list(parents("/a")) == ["/a"]
    assert list(parents("a//b/")) == ["a//b/", "a//b", "a/", "a"]
    assert list(parents("")) == []


def test_asparent_resolves_down_a_three_level_tree(qm: QueueManager) -> None:
    reg = topics(qm)
    reg.define("SPORT", {"TOPICSTR": "Sport", "DEFPRTY": 7, "PUB": "DISABLED", "MDURMDL": "SPORT.MODEL"})
    reg.define("TENNIS", {"TOPICSTR": "Sport/Tennis", "DEFPRTY": "ASPARENT", "DEFPSIST": "YES", "PUB": "ENABLED"})
    reg.define("FINAL", {"TOPICSTR": "Sport/Tennis/Final", "DEFPSIST": "ASPARENT", "DURSUB": "NO"})
    assert reg.node_for("Sport/Tennis/Final/Set1").name == "FINAL"
    assert reg.node_for("Sport/Golf").name == "SPORT"
    assert reg.node_for("Chess").name == BASE_TOPIC
    assert reg.node_for("Sport/Tennis").name == "TENNIS"
    # DEFPRTY: FINAL (ASPARENT) -> TENNIS (ASPARENT) -> SPORT 7.
    assert reg.effective("Sport/Tennis/Final/Set1", "DEFPRTY") == 7
    # DEFPSIST: FINAL -> TENNIS YES.
    assert reg.effective("Sport/Tennis/Final", "DEFPSIST") == C.MQPER_PERSISTENT
    # PUB: TENNIS overrides SPORT's DISABLED below it, not beside it.
    assert reg.effective("Sport/Tennis/Final", "PUB") == C.MQTA_PUB_ALLOWED
    assert reg.effective("Sport/Golf", "PUB") == C.MQTA_PUB_INHIBITED
    # DURSUB: FINAL's own; others to SYSTEM.BASE.TOPIC's YES.
    assert reg.effective("Sport/Tennis/Final/x", "DURSUB") == C.MQSUB_DURABLE_INHIBITED
    assert reg.effective("Sport/Tennis", "DURSUB") == C.MQSUB_DURABLE_ALLOWED
    # A blank model queue name is "as parent" too.
    assert reg.effective("Sport/Tennis/Final", "MDURMDL") == "SPORT.MODEL"
    assert reg.effective("Chess", "MNDURMDL") == "SYSTEM.NDURABLE.MODEL.QUEUE"
    assert reg.effective("Chess", "DEFPRTY") == 0
    # Changing the middle changes what is below it; deleting it hands over to the next up.
    reg.alter("TENNIS", {"DEFPRTY": 3})
    assert reg.effective("Sport/Tennis/Final/Set1", "DEFPRTY") == 3
    reg.delete("TENNIS")
    assert reg.effective("Sport/Tennis/Final/Set1", "DEFPRTY") == 7
    assert reg.effective("Sport/Tennis/Final", "DEFPSIST") == C.MQPER_NOT_PERSISTENT
    # SYSTEM.BASE.TOPIC itself resolves the root.
    reg.alter(BASE_TOPIC, {"DEFPRTY": 4})
    assert reg.effective("Chess", "DEFPRTY") == 4


def test_the_root_resolves_to_shipped_values_while_base_topic_is_deleted(qm: QueueManager) -> None:
    reg = topics(qm)
    reg.alter(BASE_TOPIC, {"DEFPRTY": 4})
    reg.delete(BASE_TOPIC)
    assert reg.node_for("x").name == BASE_TOPIC
    assert reg.effective("x", "DEFPRTY") == 0
    assert reg.effective("x", "MDURMDL") == "SYSTEM.DURABLE.MODEL.QUEUE"


def test_wildcard_block(qm: QueueManager) -> None:
    reg = topics(qm)
    reg.define("PRIVATE", {"TOPICSTR": "a/private", "WILDCARD": "BLOCK"})
    blocked = reg.wildcard_blocked
    assert blocked("#", "a/private/x", char_wildcards=False)
    assert blocked("a/+/x", "a/private/x", char_wildcards=False)
    assert blocked("a/#", "a/private", char_wildcards=False)
    assert not blocked("a/private/#", "a/private/x", char_wildcards=False)  # made at the node
    assert not blocked("a/private/+", "a/private/x", char_wildcards=False)
    assert not blocked("a/private/x", "a/private/x", char_wildcards=False)  # no wildcard
    assert not blocked("#", "a/public", char_wildcards=False)
    assert blocked("a/*", "a/private/x", char_wildcards=True)
    assert not blocked("a/private*", "a/private/x", char_wildcards=True)
    reg.alter("PRIVATE", {"WILDCARD": "PASSTHRU"})
    assert not blocked("#", "a/private/x", char_wildcards=False)


def test_every_change_moves_the_epoch(qm: QueueManager) -> None:
    reg = topics(qm)
    e0 = qm.objects.epoch
    reg.define("T1", {"TOPICSTR": "t"})
    reg.alter("T1", {"DEFPRTY": 1})
    reg.define("T1", {"TOPICSTR": "t"}, replace=True)
    reg.delete("T1")
    assert qm.objects.epoch == e0 + 4


# -- define / alter / delete rules -------------------------------------------------------
def test_define_takes_system_default_topic_and_like(qm: QueueManager) -> None:
    reg = topics(qm)
    reg.alter(DEFAULT_TOPIC, {"DEFPRTY": 5, "DESCR": "from default"})
    t1 = reg.define("T1", {"TOPICSTR": "t1"})
    assert (t1.status("DEFPRTY"), t1.status("DESCR"), t1.status("PUB")) == (5, "from default", C.MQTA_PUB_AS_PARENT)
    reg.alter("T1", {"USEDLQ": "NO"})
    t2 = reg.define("T2", {"TOPICSTR": "t2"}, like="T1")
    assert (t2.status("USEDLQ"), t2.status("DEFPRTY"), t2.topic_string) == (C.MQUSEDLQ_NO, 5, "t2")
    assert reg.display("T*", ["DEFPRTY"]) == [{"TOPIC": "T1", "TYPE": C.MQTOPT_LOCAL, "DEFPRTY": 5},
                                              {"TOPIC": "T2", "TYPE": C.MQTOPT_LOCAL, "DEFPRTY": 5}]
    assert reg.names("T*") == ["T1", "T2"]
    assert [t.name for t in reg] == sorted(reg.topics)


def test_define_refusals_change_nothing(qm: QueueManager) -> None:
    reg = topics(qm)
    reg.define("T1", {"TOPICSTR": "a/b"})
    refused(qm, C.MQRC_OBJECT_ALREADY_EXISTS, reg.define, "T1", {"TOPICSTR": "a/c"})
    refused(qm, F.MQRCCF_TOPICSTR_ALREADY_EXISTS, reg.define, "T2", {"TOPICSTR": "a/b"})
    refused(qm, F.MQRCCF_PARM_MISSING, reg.define, "T2", {})
    refused(qm, F.MQRCCF_PARM_MISSING, reg.define, "T2", {"TOPICSTR": "  "})
    refused(qm, C.MQRC_TOPIC_NOT_ALTERABLE, reg.define, "T1", {"TOPICSTR": "a/c"}, replace=True)
    refused(qm, C.MQRC_UNKNOWN_OBJECT_NAME, reg.define, "T2", {"TOPICSTR": "x"}, like="NOPE")
    refused(qm, F.MQRCCF_TOPICSTR_ALREADY_EXISTS, reg.define, "T2", {}, like="T1")  # LIKE copies TOPICSTR too
    refused(qm, C.MQRC_OBJECT_NAME_ERROR, reg.define, "BAD NAME", {"TOPICSTR": "x"})
    refused(qm, C.MQRC_OBJECT_NAME_ERROR, reg.define, "X" * 49, {"TOPICSTR": "x"})
    refused(qm, C.MQRC_TOPIC_STRING_ERROR, reg.define, "T2", {"TOPICSTR": "a\0b"})
    refused(qm, C.MQRC_CHAR_ATTR_LENGTH_ERROR, reg.define, "T2", {"TOPICSTR": "x" * 10_241})
    refused(qm, C.MQRC_INHIBIT_VALUE_ERROR, reg.define, "T2", {"TOPICSTR": "x", "DEFPRTY": 10})
    refused(qm, C.MQRC_INHIBIT_VALUE_ERROR, reg.define, "T2", {"TOPICSTR": "x", "PMSGDLV": "SOME"})
    refused(qm, C.MQRC_INHIBIT_VALUE_ERROR, reg.define, "T2", {"TOPICSTR": "x", "TYPE": "CLUSTER"})
    refused(qm, C.MQRC_SELECTOR_ERROR, reg.define, "T2", {"TOPICSTR": "x", "MAXDEPTH": 5})
    refused(qm, C.MQRC_SELECTOR_ERROR, reg.define, "T2", {"TOPICSTR": "x", "CRDATE": "2020-01-01"})
    refused(qm, C.MQRC_CHAR_ATTR_LENGTH_ERROR, reg.define, "T2", {"TOPICSTR": "x", "DESCR": "d" * 65})
    assert reg.find("T2") is None


def test_alter_refusals_change_nothing(qm: QueueManager) -> None:
    reg = topics(qm)
    reg.define("T1", {"TOPICSTR": "a/b"})
    reg.define("T2", {"TOPICSTR": "a/c"})
    refused(qm, C.MQRC_TOPIC_NOT_ALTERABLE, reg.alter, "T1", {"TOPICSTR": "a/d"})
    refused(qm, C.MQRC_TOPIC_NOT_ALTERABLE, reg.alter, "T1", {"TOPICSTR": "a/c"})
    refused(qm, C.MQRC_UNKNOWN_OBJECT_NAME, reg.alter, "T9", {"DEFPRTY": 1})
    refused(qm, C.MQRC_INHIBIT_VALUE_ERROR, reg.alter, "T1", {"DEFPRTY": 1, "MCAST": 9})
    reg.alter("T1", {"TOPICSTR": "a/b", "DEFPRTY": 2})  # the same string is no change
    assert reg.require("T1").status("DEFPRTY") == 2
    # The root refuses to defer to a parent it does not have.
    for key, value in [("DEFPSIST", "ASPARENT"), ("DEFPRTY", "ASPARENT"), ("PUB", "ASPARENT"),
                       ("PMSGDLV", "ASPARENT"), ("MDURMDL", ""), ("MNDURMDL", " "), ("MCAST", "ASPARENT")]:
        refused(qm, C.MQRC_INHIBIT_VALUE_ERROR, reg.alter, BASE_TOPIC, {key: value})
        refused(qm, C.MQRC_INHIBIT_VALUE_ERROR, reg.define, BASE_TOPIC, {key: value}, replace=True)
    reg.alter(BASE_TOPIC, {"CLUSTER": "", "DEFPRTY": 1})


def test_delete_refusal_and_reuse_of_the_string(qm: QueueManager) -> None:
    reg = topics(qm)
    refused(qm, C.MQRC_UNKNOWN_OBJECT_NAME, reg.delete, "T1")
    reg.define("T1", {"TOPICSTR": "a/b"})
    reg.delete("T1")
    assert reg.find("T1") is None and "a/b" not in reg.by_string
    reg.define("T2", {"TOPICSTR": "a/b"})
    assert reg.node_for("a/b/c").name == "T2"


# -- persistence --------------------------------------------------------------------------
@pytest.fixture
def journal_dir(tmp_path: Path) -> Path:
    return tmp_path / "journal"


def test_definitions_survive_a_restart_with_the_file_journal(journal_dir: Path) -> None:
    clock = FakeClock()
    qm = QueueManager.start("QM1", FileJournal(journal_dir), clock)
    reg = topics(qm)
    reg.define("SPORT", {"TOPICSTR": "Sport", "DEFPRTY": 6, "DESCR": "all sport"})
    reg.define("GONE", {"TOPICSTR": "Gone"})
    reg.define("TENNIS", {"TOPICSTR": "Sport/Tennis", "WILDCARD": "BLOCK"})
    clock.advance(3600)
    reg.alter("SPORT", {"PUB": "DISABLED"})
    reg.delete("GONE")
    reg.alter(BASE_TOPIC, {"DEFPSIST": "YES"})
    assert qm.take_sync_lsn() > 0  # a definition's reply waits for the disk
    before = {t.name: (dict(t.attrs), t.created, t.altered) for t in reg}
    qm.journal.sync()
    qm.journal.close()

    qm2 = QueueManager.start("QM1", FileJournal(journal_dir), FakeClock(clock.now() + 60))
    reg2 = topics(qm2)
    assert {t.name: (dict(t.attrs), t.created, t.altered) for t in reg2} == before
    assert reg2.find("GONE") is None and "Gone" not in reg2.by_string
    assert reg2.effective("Sport/Tennis/x", "DEFPRTY") == 6
    assert reg2.effective("Sport/Tennis/x", "PUB") == C.MQTA_PUB_INHIBITED
    assert reg2.effective("Chess", "DEFPSIST") == C.MQPER_PERSISTENT
    assert reg2.wildcard_blocked("#", "Sport/Tennis/x", char_wildcards=False)
    # Changes after the restart update the same records, not new ones.
    reg2.alter("SPORT", {"DEFPRTY": 1})
    qm2.journal.sync()
    qm2.journal.close()
    qm3 = QueueManager.start("QM1", FileJournal(journal_dir), FakeClock(clock.now() + 120))
    assert topics(qm3).require("SPORT").status("DEFPRTY") == 1
    assert len(topics(qm3)) == len(reg2)
    qm3.journal.close()


def test_records_are_json_of_kind_topic_and_one_per_object() -> None:
    journal = MemoryJournal()
    qm = QueueManager.start("QM1", journal, FakeClock())
    topics(qm).define("T1", {"TOPICSTR": "a"})
    topics(qm).alter("T1", {"DEFPRTY": 2})
    journal.sync()
    restarted = journal.crash()
    records = [r for r in restarted.load().records if r.kind == KIND_TOPIC]
    docs = {json.loads(bytes(r.payload))["name"]: json.loads(bytes(r.payload)) for r in records}
    assert sorted(docs) == sorted([BASE_TOPIC, DEFAULT_TOPIC, "T1"])
    assert docs["T1"]["attrs"]["DEFPRTY"] == 2


@pytest.mark.parametrize("payload", [b"not json", b"[]", b'{"name": "T1"}', b'{"name": "BAD NAME", "attrs": {},'
                                     b' "created": ["a", "b"], "altered": ["a", "b"]}', bytes(range(256))])
def test_an_unreadable_topic_record_is_skipped_and_the_rest_starts(payload: bytes,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    journal = MemoryJournal()
    qm = QueueManager.start("QM1", journal, FakeClock())
    topics(qm).define("GOOD", {"TOPICSTR": "good", "DEFPRTY": 3})
    journal.add(qm.new_record_id(), KIND_TOPIC, payload)
    journal.sync()
    restarted = QueueManager.start("QM1", journal.crash(), FakeClock())
    assert topics(restarted).require("GOOD").status("DEFPRTY") == 3
    assert "event=unreadable_definition" in caplog.text
    with pytest.raises(DecodeError):
        decode_topic(payload, 0.0)


def test_attributes_a_later_version_added_are_dropped_at_recovery() -> None:
    doc = {"name": "T1", "attrs": {"TOPICSTR": "t", "DEFPRTY": 2, "FUTURE": 1, "PUB": True},
           "created": ["2026-01-01", "10.00.00"], "altered": ["2026-01-02", "11.00.00"]}
    obj = decode_topic(json.dumps(doc).encode(), 0.0)
    assert obj.attrs == {"TOPICSTR": "t", "DEFPRTY": 2}
    assert (obj.created, obj.altered) == (("2026-01-01", "10.00.00"), ("2026-01-02", "11.00.00"))
