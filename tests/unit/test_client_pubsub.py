"""The clients' publish/subscribe logic without I/O (ferrymq.client.pubsub, the MQSUB and
MQSUBRQ flows of ferrymq.client.mqi, the resubscription of ferrymq.client.flows): checks
made before sending, options, and what a reconnect does to subscriptions."""

from __future__ import annotations

from typing import Any

import pytest
from test_client_flows import Scripted

from ferrymq.client import flows as F
from ferrymq.client import mqi, pubsub
from ferrymq.client import reconnect as R
from ferrymq.client.steps import Call, Exchange, Lost, Redial, Step
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E

LONG = "x" * (C.MQ_TOPIC_STR_LENGTH + 1)


@pytest.mark.parametrize(("field", "reason"), [
    ("object_string", C.MQRC_TOPIC_STRING_ERROR), ("sub_name", C.MQRC_SUB_NAME_ERROR),
    ("sub_user_data", C.MQRC_SUB_USER_DATA_ERROR), ("selection_string", C.MQRC_SELECTION_STRING_ERROR)])
def test_an_mqcharv_over_its_limit_is_refused_before_sending(field: str, reason: int) -> None:
    with pytest.raises(MQError) as info:
        pubsub.sub_event(1, E.Sub(0, C.MQSO_CREATE, **{field: LONG}))
    assert (info.value.comp, info.value.reason) == (C.MQCC_FAILED, reason)


@pytest.mark.parametrize("changes", [{"sub_correl_id": b"short"}, {"pub_accounting_token": b"x" * 33},
                                     {"pub_appl_identity_data": "a" * 33}])
def test_fixed_fields_of_the_wrong_length_are_sd_errors(changes: dict[str, Any]) -> None:
    with pytest.raises(MQError) as info:
        pubsub.sub_event(1, E.Sub(0, C.MQSO_CREATE, **changes))
    assert info.value.reason == C.MQRC_SD_ERROR


def test_a_topic_object_name_over_48_characters_gets_the_queue_managers_reason() -> None:
    with pytest.raises(MQError) as info:
        pubsub.sub_event(1, E.Sub(0, C.MQSO_CREATE, object_name="T" * 49))
    assert info.value.reason == C.MQRC_UNKNOWN_OBJECT_NAME  # as MQOPEN answers it (wire/mqod_names.py)


def test_pythonic_subscribe_options() -> None:
    plain = pubsub.sub_options(durable=False, wildcards="topic", new_only=False)
    assert plain == C.MQSO_CREATE | C.MQSO_MANAGED | C.MQSO_FAIL_IF_QUIESCING | C.MQSO_WILDCARD_TOPIC
    durable = pubsub.sub_options(durable=True, wildcards="char", new_only=True)
    assert durable & (C.MQSO_DURABLE | C.MQSO_RESUME | C.MQSO_CREATE | C.MQSO_WILDCARD_CHAR
                      | C.MQSO_NEW_PUBLICATIONS_ONLY) == (C.MQSO_DURABLE | C.MQSO_RESUME | C.MQSO_CREATE
                                                          | C.MQSO_WILDCARD_CHAR | C.MQSO_NEW_PUBLICATIONS_ONLY)
    with pytest.raises(ValueError):
        pubsub.sub_options(durable=False, wildcards="regex", new_only=False)


def test_close_keeps_a_durable_subscription_unless_asked() -> None:
    assert pubsub.close_options(True, None) == C.MQCO_NONE
    assert pubsub.close_options(True, True) == C.MQCO_REMOVE_SUB
    assert pubsub.close_options(False, None) == C.MQCO_REMOVE_SUB
    assert pubsub.close_options(False, False) == C.MQCO_NONE


def test_a_durable_subscription_is_resumed_a_non_durable_one_created_again() -> None:
    durable = E.Sub(0, C.MQSO_CREATE | C.MQSO_DURABLE | C.MQSO_MANAGED, sub_name="S")
    again = R.resubscription(durable, C.MQHO_NONE)
    assert again.options == C.MQSO_RESUME | C.MQSO_DURABLE | C.MQSO_MANAGED and again.sub_name == "S"
    plain = E.Sub(0, C.MQSO_CREATE | C.MQSO_RESUME, 4)
    assert R.resubscription(plain, 14) == E.Sub(0, C.MQSO_CREATE, 14)


def test_a_sent_durable_mqsub_is_interrupted_a_non_durable_one_sent_again() -> None:
    cause = MQError(C.MQCC_FAILED, C.MQRC_CONNECTION_BROKEN, "")
    conv = Scripted(lambda step: None)
    durable = E.Sub(5, C.MQSO_CREATE | C.MQSO_DURABLE | C.MQSO_MANAGED, sub_name="S")
    with pytest.raises(MQError) as info:
        conv.run(F.call_again(conv, durable, Lost(cause, sent=True), 0.0))
    assert info.value.reason == C.MQRC_CALL_INTERRUPTED
    conv = Scripted(lambda step: E.SubReply(step.ev.corr, 1, 2) if hasattr(step, "ev") else None)
    reply = conv.run(F.call_again(conv, E.Sub(5, C.MQSO_CREATE | C.MQSO_MANAGED), Lost(cause, sent=True), 0.0))
    assert reply.hsub == 1


def test_mqsub_numbers_the_subscription_and_its_managed_queue() -> None:
    def answer(step: Step) -> Any:
        assert isinstance(step, Call) and type(step.ev) is E.Sub
        return E.SubReply(step.ev.corr, 40, 41, "SYSTEM.MANAGED.NDURABLE.1", "a/b")

    conv = Scripted(answer)
    reply = mqi.mqsub(conv, E.Sub(0, C.MQSO_CREATE | C.MQSO_MANAGED, object_string="a/b"))
    assert (reply.hsub, reply.hobj) == (40, 41)
    assert conv.handles.current(40) == 40 and conv.handles.current(41) == 41
    kinds = [h.record.sub is not None for h in conv.handles.open.values()]
    assert kinds == [True, False]  # the subscription first: the reconnect makes its queue with it


def test_reconnect_remakes_subscriptions_after_their_queues() -> None:
    sent: list[E.Sub] = []
    new_open = {"PROVIDED": 50}

    def answer(step: Step) -> Any:
        if isinstance(step, Redial):
            return None
        if isinstance(step, Exchange):
            ev = step.ev
            if type(ev) is E.Open:
                return E.OpenReply(ev.corr, new_open[ev.object_name], ev.object_name)
            sent.append(ev)
            if ev.options & C.MQSO_MANAGED:
                return E.SubReply(ev.corr, 60, 61, "MANAGED.Q", ev.object_string)
            return E.SubReply(ev.corr, 62, ev.hobj, "PROVIDED", ev.object_string)
        return None

    conv = Scripted(answer)
    handles = conv.handles
    provided = handles.add_numbered(R.OpenRecord("PROVIDED", C.MQOO_INPUT_AS_Q_DEF, "", ""), 3)
    managed_q = R.NumberedHandle(pubsub.managed_queue_record("OLD.MANAGED"), 5, 5)
    durable = E.Sub(0, C.MQSO_CREATE | C.MQSO_DURABLE | C.MQSO_MANAGED, sub_name="D", object_string="d")
    handles.add_numbered(pubsub.subscription_record(durable), 4, managed_q)
    handles.keep(managed_q)
    plain = E.Sub(0, C.MQSO_CREATE, 3, object_string="p")
    handles.add_numbered(pubsub.subscription_record(plain), 6, provided)
    redial = R.Redialer(R.ReconnectPolicy(timeout=60, first=0.0), None)
    conv.run(F.reconnect(conv, redial, R.UnitOfWorkGuard(), MQError(C.MQCC_FAILED, C.MQRC_CONNECTION_BROKEN, "")))
    assert [s.options for s in sent] == [C.MQSO_RESUME | C.MQSO_DURABLE | C.MQSO_MANAGED, C.MQSO_CREATE]
    assert sent[1].hobj == 50  # the provided queue, re-opened first
    assert handles.remap == {3: 50, 4: 60, 5: 61, 6: 62}
    assert (handles.current(4), handles.current(5), handles.current(6)) == (60, 61, 62)


def test_a_subscription_that_cannot_be_remade_keeps_handle_0() -> None:
    def answer(step: Step) -> Any:
        if isinstance(step, Exchange):
            return E.Reply(step.ev.corr, C.MQCC_FAILED, C.MQRC_NO_SUBSCRIPTION)
        return None

    conv = Scripted(answer)
    managed_q = R.NumberedHandle(pubsub.managed_queue_record("M"), 5, 5)
    durable = E.Sub(0, C.MQSO_CREATE | C.MQSO_DURABLE | C.MQSO_MANAGED, sub_name="GONE")
    conv.handles.add_numbered(pubsub.subscription_record(durable), 4, managed_q)
    conv.handles.keep(managed_q)
    redial = R.Redialer(R.ReconnectPolicy(timeout=60, first=0.0), None)
    conv.run(F.reconnect(conv, redial, R.UnitOfWorkGuard(), MQError(C.MQCC_FAILED, C.MQRC_CONNECTION_BROKEN, "")))
    assert conv.handles.remap == {4: 0, 5: 0}  # its calls then fail with 2019


def test_topic_handles_close_the_least_recently_used() -> None:
    handles: pubsub.TopicHandles[int] = pubsub.TopicHandles()
    for i in range(pubsub.TOPIC_HANDLES):
        assert handles.add(f"t{i}", i) is None
    assert handles.get("t0") == 0  # now the most recently used
    assert handles.add("new", -1) == 1
