"""Objects: system defaults, define/alter/delete/display, open rules, dynamic queues, inquire/set."""

from __future__ import annotations

import pytest
from engine_helpers import Env

from ferrymq.engine.api import ObjectDescriptor
from ferrymq.errors import MQError
from ferrymq.mq import constants as C


def test_system_objects_exist(env: Env) -> None:
    names = env.qm.objects.names("SYSTEM.*")
    for n in ("SYSTEM.DEAD.LETTER.QUEUE", "SYSTEM.DEFAULT.LOCAL.QUEUE", "SYSTEM.DEFAULT.MODEL.QUEUE",
              "SYSTEM.ADMIN.COMMAND.QUEUE", "SYSTEM.DEFAULT.ALIAS.QUEUE"):
        assert n in names
    assert env.qm.objects.display_qmgr()["DEADQ"] == "SYSTEM.DEAD.LETTER.QUEUE"


def test_define_defaults_like_replace_and_errors(env: Env) -> None:
    q = env.qm.objects.define("QLOCAL", "APP.ONE", {"MAXDEPTH": 10, "DESCR": "first"})
    assert (q["MAXDEPTH"], q["MAXMSGL"], q["DEFPSIST"], q["SHARE"]) == (10, 4194304, 0, 1)
    two = env.qm.objects.define("QLOCAL", "APP.TWO", {}, like="APP.ONE")
    assert two["MAXDEPTH"] == 10
    with pytest.raises(MQError) as e:
        env.qm.objects.define("QLOCAL", "APP.ONE", {})
    assert e.value.reason == C.MQRC_OBJECT_ALREADY_EXISTS
    env.qm.objects.define("QLOCAL", "APP.ONE", {"MAXDEPTH": 20}, replace=True)
    assert env.qm.objects.require("APP.ONE")["MAXDEPTH"] == 20
    with pytest.raises(MQError) as e:
        env.qm.objects.define("QALIAS", "APP.ONE", {}, replace=True)
    assert e.value.reason == C.MQRC_OBJECT_TYPE_ERROR
    with pytest.raises(MQError) as e:
        env.qm.objects.define("QLOCAL", "BAD NAME", {})
    assert e.value.reason == C.MQRC_OBJECT_NAME_ERROR
    with pytest.raises(MQError) as e:
        env.qm.objects.define("QLOCAL", "X", {"MAXDEPTH": -1})
    assert "MAXDEPTH" in str(e.value)
    with pytest.raises(MQError) as e:
        env.qm.objects.define("QLOCAL", "X", {"NOSUCH": 1})
    assert e.value.reason == C.MQRC_SELECTOR_ERROR
    assert [r["QUEUE"] for r in env.qm.objects.display("APP.*")] == ["APP.ONE", "APP.TWO"]
    row = env.qm.objects.display("APP.ONE", attrs=["CURDEPTH", "MAXDEPTH"])[0]
    assert row == {"QUEUE": "APP.ONE", "TYPE": "QLOCAL", "CURDEPTH": 0, "MAXDEPTH": 20}


def test_delete_rules(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    env.put(h)
    with pytest.raises(MQError) as e:
        env.qm.objects.delete("Q1")
    assert e.value.reason == C.MQRC_OBJECT_IN_USE
    env.qm.close(env.hconn, h)
    with pytest.raises(MQError) as e:
        env.qm.objects.delete("Q1")
    assert e.value.reason == C.MQRC_Q_NOT_EMPTY
    env.qm.objects.delete("Q1", purge=True)
    assert env.qm.objects.find("Q1") is None


def test_open_errors(env: Env) -> None:
    env.define("Q1")
    cases = [
        (ObjectDescriptor("NOPE"), C.MQOO_OUTPUT, C.MQRC_UNKNOWN_OBJECT_NAME),
        (ObjectDescriptor("Q1"), 0, C.MQRC_OPTIONS_ERROR),
        (ObjectDescriptor("Q1"), C.MQOO_INPUT_SHARED | C.MQOO_INPUT_EXCLUSIVE, C.MQRC_OPTIONS_ERROR),
        (ObjectDescriptor("Q1", object_type=C.MQOT_TOPIC + 100), C.MQOO_OUTPUT, C.MQRC_OBJECT_TYPE_ERROR),
        (ObjectDescriptor("Q1", object_q_mgr_name="OTHER"), C.MQOO_OUTPUT, C.MQRC_UNKNOWN_REMOTE_Q_MGR),
        (ObjectDescriptor("", object_type=C.MQOT_Q_MGR), C.MQOO_OUTPUT, C.MQRC_OPTION_NOT_VALID_FOR_TYPE),
    ]
    for od, opts, reason in cases:
        with pytest.raises(MQError) as e:
            env.qm.open(env.hconn, od, opts)
        assert e.value.reason == reason, (od, opts)
    assert env.qm.objects.require("Q1").handles == set()


def test_alias_resolution_errors(env: Env) -> None:
    env.qm.objects.define("QALIAS", "A.MISSING", {"TARGET": "NOPE"})
    env.qm.objects.define("QALIAS", "A.MODEL", {"TARGET": "SYSTEM.DEFAULT.MODEL.QUEUE"})
    for name, reason in (("A.MISSING", C.MQRC_UNKNOWN_ALIAS_BASE_Q), ("A.MODEL", C.MQRC_ALIAS_BASE_Q_TYPE_ERROR)):
        with pytest.raises(MQError) as e:
            env.open(name, C.MQOO_OUTPUT)
        assert e.value.reason == reason


def test_exclusive_and_shared_input(env: Env) -> None:
    env.define("Q1")
    env.define("Q2", SHARE="NOSHARE")
    env.define("Q3", DEFSOPT="EXCL")
    env.open("Q1", C.MQOO_INPUT_SHARED)
    env.open("Q1", C.MQOO_INPUT_SHARED)
    with pytest.raises(MQError) as e:
        env.open("Q1", C.MQOO_INPUT_EXCLUSIVE)
    assert e.value.reason == C.MQRC_OBJECT_IN_USE
    for name in ("Q2", "Q3"):
        env.open(name, C.MQOO_INPUT_AS_Q_DEF)
        with pytest.raises(MQError) as e:
            env.open(name, C.MQOO_INPUT_SHARED)
        assert e.value.reason == C.MQRC_OBJECT_IN_USE


def test_temporary_dynamic_queue_lifecycle(env: Env) -> None:
    res = env.qm.open(env.hconn, ObjectDescriptor("SYSTEM.DEFAULT.MODEL.QUEUE", dynamic_q_name="REPLY.*"),
                      C.MQOO_INPUT_EXCLUSIVE)
    assert res.object_name.startswith("REPLY.") and len(res.object_name) <= 48
    q = env.qm.objects.require(res.object_name)
    assert q.temporary and q.qtype == "QLOCAL"
    env.qm.close(env.hconn, res.hobj)
    assert env.qm.objects.find(res.object_name) is None
    res = env.qm.open(env.hconn, ObjectDescriptor("SYSTEM.DEFAULT.MODEL.QUEUE"), C.MQOO_INPUT_EXCLUSIVE)
    other = env.qm.connect()
    h2 = env.qm.open(other, ObjectDescriptor(res.object_name), C.MQOO_OUTPUT).hobj
    env.qm.disconnect(env.hconn)
    assert env.qm.objects.find(res.object_name) is None
    with pytest.raises(MQError) as e:
        env.put(h2, hconn=other)
    assert e.value.reason == C.MQRC_Q_DELETED
    with pytest.raises(MQError) as e:
        env.qm.open(other, ObjectDescriptor("SYSTEM.DEFAULT.MODEL.QUEUE", dynamic_q_name="*BAD"), C.MQOO_INPUT_EXCLUSIVE)
    assert e.value.reason == C.MQRC_DYNAMIC_Q_NAME_ERROR


def test_permanent_dynamic_queue_close_delete(env: Env) -> None:
    od = ObjectDescriptor("SYSTEM.DURABLE.MODEL.QUEUE", dynamic_q_name="PERM.*")
    res = env.qm.open(env.hconn, od, C.MQOO_INPUT_EXCLUSIVE | C.MQOO_OUTPUT)
    env.put(res.hobj)
    with pytest.raises(MQError) as e:
        env.qm.close(env.hconn, res.hobj, C.MQCO_DELETE)
    assert e.value.reason == C.MQRC_Q_NOT_EMPTY
    env.qm.close(env.hconn, res.hobj, C.MQCO_DELETE_PURGE)
    assert env.qm.objects.find(res.object_name) is None
    env.define("Q1")
    h = env.open("Q1")
    with pytest.raises(MQError) as e:
        env.qm.close(env.hconn, h, C.MQCO_DELETE)
    assert e.value.reason == C.MQRC_OPTION_NOT_VALID_FOR_TYPE


def test_inquire_and_set(env: Env) -> None:
    env.define("Q1", MAXDEPTH=77)
    h = env.open("Q1", C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE | C.MQOO_SET)
    env.put(h)
    r = env.qm.inquire(env.hconn, h, [C.MQIA_CURRENT_Q_DEPTH, C.MQIA_MAX_Q_DEPTH, C.MQIA_OPEN_INPUT_COUNT,
                                      C.MQIA_OPEN_OUTPUT_COUNT, C.MQIA_Q_TYPE], [C.MQCA_Q_NAME])
    assert r.ints == [1, 77, 1, 1, C.MQQT_LOCAL] and r.chars == ["Q1"] and r.reason == C.MQRC_NONE
    r = env.qm.inquire(env.hconn, h, [C.MQIA_BASE_TYPE], [])
    assert (r.ints, r.comp, r.reason) == ([C.MQIAV_NOT_APPLICABLE], C.MQCC_WARNING, C.MQRC_SELECTOR_NOT_FOR_TYPE)
    with pytest.raises(MQError) as e:
        env.qm.inquire(env.hconn, h, [5000], [])
    assert e.value.reason == C.MQRC_SELECTOR_ERROR
    env.qm.set(env.hconn, h, {C.MQIA_INHIBIT_PUT: C.MQQA_PUT_INHIBITED}, {})
    assert env.qm.objects.require("Q1")["PUT"] == C.MQQA_PUT_INHIBITED
    for sel, val, reason in ((C.MQIA_INHIBIT_GET, 7, C.MQRC_INHIBIT_VALUE_ERROR),
                             (C.MQIA_MAX_Q_DEPTH, 5, C.MQRC_SELECTOR_ERROR),
                             (C.MQIA_TRIGGER_DEPTH, 0, C.MQRC_TRIGGER_DEPTH_ERROR)):
        with pytest.raises(MQError) as e:
            env.qm.set(env.hconn, h, {sel: val}, {})
        assert e.value.reason == reason
    ro = env.open("Q1", C.MQOO_OUTPUT)
    with pytest.raises(MQError) as e:
        env.qm.inquire(env.hconn, ro, [C.MQIA_CURRENT_Q_DEPTH], [])
    assert e.value.reason == C.MQRC_NOT_OPEN_FOR_INQUIRE
    with pytest.raises(MQError) as e:
        env.qm.set(env.hconn, ro, {C.MQIA_INHIBIT_PUT: 0}, {})
    assert e.value.reason == C.MQRC_NOT_OPEN_FOR_SET
    hq = env.qm.open(env.hconn, ObjectDescriptor(object_type=C.MQOT_Q_MGR), C.MQOO_INQUIRE).hobj
    r = env.qm.inquire(env.hconn, hq, [C.MQIA_MAX_PRIORITY, C.MQIA_PLATFORM], [C.MQCA_Q_MGR_NAME, C.MQCA_DEAD_LETTER_Q_NAME])
    assert r.ints == [9, C.MQPL_UNIX] and r.chars == ["QM1", "SYSTEM.DEAD.LETTER.QUEUE"]


def test_alias_inquire_reports_alias_attributes(env: Env) -> None:
    env.define("Q1")
    env.qm.objects.define("QALIAS", "A1", {"TARGET": "Q1", "DESCR": "alias"})
    h = env.open("A1", C.MQOO_INQUIRE | C.MQOO_OUTPUT)
    r = env.qm.inquire(env.hconn, h, [C.MQIA_Q_TYPE], [C.MQCA_BASE_Q_NAME, C.MQCA_Q_DESC])
    assert r.ints == [C.MQQT_ALIAS] and r.chars == ["Q1", "alias"]


def test_temporary_dynamic_queue_survives_other_handles_of_its_connection(env: Env) -> None:
    res = env.qm.open(env.hconn, ObjectDescriptor("SYSTEM.DEFAULT.MODEL.QUEUE"), C.MQOO_INPUT_EXCLUSIVE)
    from ferrymq.engine.api import PutOptions
    from ferrymq.wire.mqmd import MQMD

    env.qm.put1(env.hconn, ObjectDescriptor(res.object_name), MQMD(), PutOptions(), b"to myself")
    assert env.get(res.hobj).data == b"to myself"
    env.qm.close(env.hconn, res.hobj)
    assert env.qm.objects.find(res.object_name) is None
