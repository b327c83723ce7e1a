"""Publish/subscribe as TOPIC objects direct it: PUB, SUB, DURSUB, DEFPSIST, DEFPRTY,
PMSGDLV, NPMSGDLV, USEDLQ, MNDURMDL and WILDCARD(BLOCK), resolved up the topic tree."""

from __future__ import annotations

import pytest
from engine_helpers import Env
from test_engine_pubsub import MANAGED, fails, provided, publish, received, sub

from ferrymq.engine.api import ObjectDescriptor, PutOptions, SubDescriptor
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD


@pytest.fixture
def env() -> Env:
    return Env()


def topic(env: Env, name: str, topic_string: str, **attrs: object) -> None:
    env.qm.state.topics.define(name, {"TOPICSTR": topic_string, **attrs})


def test_pub_disabled_refuses_the_put_not_the_open(env: Env) -> None:
    topic(env, "SPORT", "sport", PUB="DISABLED")
    s = sub(env, "sport/#")
    h = env.qm.open(env.hconn, ObjectDescriptor(object_type=C.MQOT_TOPIC, object_name="SPORT", object_string="golf"),
                    C.MQOO_OUTPUT)
    assert h.res_object_string == "sport/golf"
    fails(C.MQRC_PUT_INHIBITED, env.qm.put, env.hconn, h.hobj, MQMD(), PutOptions(), b"x")
    env.qm.state.topics.alter("SPORT", {"PUB": "ENABLED"})
    assert env.qm.put(env.hconn, h.hobj, MQMD(), PutOptions(), b"x").reason == C.MQRC_NONE
    assert len(received(env, s.hobj)) == 1


def test_sub_disabled_and_dursub_no(env: Env) -> None:
    topic(env, "CLOSED", "closed", SUB="DISABLED")
    topic(env, "NODUR", "nodur", DURSUB="NO")
    fails(C.MQRC_SUB_INHIBITED, sub, env, "closed/x")
    fails(C.MQRC_DURABILITY_NOT_ALLOWED, sub, env, "nodur/x", MANAGED | C.MQSO_DURABLE, sub_name="D")
    fails(C.MQRC_DURABILITY_NOT_ALLOWED, env.qm.subscriber.define, "ADM", {"TOPICSTR": "nodur", "DESTCLAS": "MANAGED"})
    assert sub(env, "nodur/x").hsub  # non-durable is allowed
    assert len(env.qm.subscriptions) == 1


def test_topic_defaults_for_priority_and_persistence(env: Env) -> None:
    topic(env, "DEFS", "defs", DEFPSIST="YES", DEFPRTY=6)
    s = sub(env, "defs/a", MANAGED | C.MQSO_DURABLE, sub_name="D")
    publish(env, "defs/a")  # MQMD priority and persistence "as topic definition"
    [got] = received(env, s.hobj)
    assert (got.md.priority, got.md.persistence) == (6, C.MQPER_PERSISTENT)


def test_pmsgdlv_all_fails_for_a_non_durable_copy_too(env: Env) -> None:
    env.qm.objects.alter_qmgr({"DEADQ": ""})
    topic(env, "STRICT", "strict", PMSGDLV="ALL", NPMSGDLV="ALL")
    full = provided(env, "FULL", "strict", durable=False, MAXDEPTH=1)
    ok = provided(env, "OK", "strict", durable=False)
    publish(env, "strict", b"1")
    fails(C.MQRC_PUBLICATION_FAILURE, publish, env, "strict", b"2")
    fails(C.MQRC_PUBLICATION_FAILURE, publish, env, "strict", b"3", persistence=C.MQPER_PERSISTENT)
    assert [r.data for r in received(env, ok.hobj)] == [b"1"]
    assert [r.data for r in received(env, full.hobj)] == [b"1"]


def test_usedlq_no_keeps_failures_off_the_dead_letter_queue(env: Env) -> None:
    topic(env, "NODLQ", "nodlq", USEDLQ="NO", NPMSGDLV="ALLAVAIL")
    provided(env, "FULL", "nodlq", durable=False, MAXDEPTH=1)
    publish(env, "nodlq", b"1")
    before = env.depth("SYSTEM.DEAD.LETTER.QUEUE")
    assert publish(env, "nodlq", b"2") == C.MQRC_NONE
    assert env.depth("SYSTEM.DEAD.LETTER.QUEUE") == before


def test_wildcard_block_hides_topics_below_it_from_wildcards_above(env: Env) -> None:
    topic(env, "PRIVATE", "a/private", WILDCARD="BLOCK")
    above = sub(env, "a/#")
    at = sub(env, "a/private/#")
    exact = sub(env, "a/private/x")
    publish(env, "a/private/x")
    publish(env, "a/public")
    assert [r.properties["mqps.Top"] for r in received(env, above.hobj) if r.properties] == ["a/public"]
    assert len(received(env, at.hobj)) == 1
    assert len(received(env, exact.hobj)) == 1


def test_managed_queue_model_from_the_topic(env: Env) -> None:
    env.qm.objects.define("QMODEL", "MY.MODEL", {"MAXDEPTH": 3, "DEFTYPE": "TEMPDYN"})
    topic(env, "MODELLED", "modelled", MNDURMDL="MY.MODEL")
    s = sub(env, "modelled/x")
    assert env.qm.objects.require(s.queue_name)["MAXDEPTH"] == 3
    fails(C.MQRC_UNKNOWN_OBJECT_NAME, env.qm.subscribe, env.hconn, SubDescriptor(MANAGED, object_name="NO.SUCH.TOPIC"))


def test_inquire_on_a_topic_handle_gives_its_resolved_attributes(env: Env) -> None:
    topic(env, "INQ", "inq", DEFPRTY=4, PUB="DISABLED")
    h = env.qm.open(env.hconn, ObjectDescriptor(object_type=C.MQOT_TOPIC, object_string="inq/below"),
                    C.MQOO_INQUIRE).hobj
    res = env.qm.inquire(env.hconn, h, [C.MQIA_DEF_PRIORITY, C.MQIA_INHIBIT_PUB, C.MQIA_DURABLE_SUB],
                         [C.MQCA_TOPIC_STRING])
    assert res.ints == [4, C.MQTA_PUB_INHIBITED, C.MQSUB_DURABLE_ALLOWED]  # the last from SYSTEM.BASE.TOPIC
    assert res.chars == ["inq"]
    assert env.qm.inquire(env.hconn, h, [C.MQIA_CURRENT_Q_DEPTH], []).reason == C.MQRC_SELECTOR_NOT_FOR_TYPE
    fails(C.MQRC_OPTION_NOT_VALID_FOR_TYPE, env.qm.open, env.hconn,
          ObjectDescriptor(object_type=C.MQOT_TOPIC, object_string="inq"), C.MQOO_SET)
    fails(C.MQRC_NOT_OPEN_FOR_OUTPUT, env.qm.put, env.hconn, h, MQMD(), PutOptions(), b"x")
