"""Distribution lists in the engine (engine.distlist): MQOPEN with object records, MQPUT and
MQPUT1 with put-message records, per-destination responses and counts, and the one message
with an MQDH that several destinations at one remote queue manager share."""

from __future__ import annotations

import struct

import pytest
from engine_helpers import Env

from ferrymq.engine.api import PutOptions
from ferrymq.engine.distlist import overall
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.wire.mqdh import MQDH, MQPMR
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.mqxqh import unpack_xmit

FAILED, WARNING, OK = C.MQCC_FAILED, C.MQCC_WARNING, C.MQCC_OK


def setup() -> Env:
    env = Env()
    for name in ("A", "B", "C"):
        env.define(name)
    env.qm.objects.define("QLOCAL", "QM2", {"USAGE": "XMITQ"})
    return env


def state_of(env: Env) -> tuple[object, ...]:
    return ({n: (q.output_count, len(q.handles), q.messages.depth) for n, q in env.qm.objects.queues.items()},
            len(env.qm.state.handles))


def bodies(env: Env, queue: str) -> list[tuple[MQMD, bytes]]:
    h = env.open(queue, C.MQOO_INPUT_AS_Q_DEF)
    out = []
    while True:
        try:
            got = env.get(h)
        except MQError:
            break
        out.append((got.md, got.data))
    env.qm.close(env.hconn, h)
    return out


def test_overall_reason_rules() -> None:
    assert overall([(OK, 0), (OK, 0)]) == (OK, 0)
    assert overall([(FAILED, 2085), (FAILED, 2085)]) == (FAILED, 2085)
    assert overall([(FAILED, 2085), (FAILED, 2035)]) == (FAILED, C.MQRC_MULTIPLE_REASONS)
    assert overall([(OK, 0), (FAILED, 2085)]) == (WARNING, C.MQRC_MULTIPLE_REASONS)


def test_open_counts_and_responses_then_put_to_every_queue_with_its_record() -> None:
    env = setup()
    out = env.qm.open_list(env.hconn, [("A", ""), ("NOPE", ""), ("B", ""), ("X", "QM2"), ("Y", "QM2")], C.MQOO_OUTPUT)
    assert (out.comp, out.reason) == (WARNING, C.MQRC_MULTIPLE_REASONS)
    assert out.responses == [(OK, 0), (FAILED, C.MQRC_UNKNOWN_OBJECT_NAME), (OK, 0), (OK, 0), (OK, 0)]
    assert (out.known, out.unknown, out.invalid) == (2, 2, 1) and out.hobj
    recs = [MQPMR(correl_id=bytes([i]) * 24, feedback=300 + i) for i in range(5)]
    fields = C.MQPMRF_CORREL_ID | C.MQPMRF_FEEDBACK
    md = MQMD(format="MQSTR", persistence=C.MQPER_NOT_PERSISTENT)
    put = env.qm.put_list(env.hconn, out.hobj, md, PutOptions(C.MQPMO_NEW_MSG_ID), b"hello", fields, recs)
    assert (put.comp, put.reason) == (WARNING, C.MQRC_MULTIPLE_REASONS)
    assert put.responses[1] == (FAILED, C.MQRC_UNKNOWN_OBJECT_NAME) and put.responses.count((OK, 0)) == 4
    assert (put.known, put.unknown, put.invalid) == (2, 2, 1)
    msg_ids = [m for m, _ in put.ids]
    assert len({m for i, m in enumerate(msg_ids) if i != 1}) == 4  # a new MsgId per destination
    (a_md, a_data), = bodies(env, "A")
    assert (a_data, a_md.correl_id, a_md.feedback, a_md.msg_id) == (b"hello", b"\0" * 24, 300, msg_ids[0])
    (b_md, _), = bodies(env, "B")
    assert (b_md.correl_id, b_md.feedback) == (b"\2" * 24, 302)
    # X and Y at QM2: one message behind MQXQH + MQDH with both destinations' records
    (_, x_data), = bodies(env, "QM2")
    xqh, inner, at = unpack_xmit(x_data)
    assert (xqh.remote_q_name, xqh.remote_q_mgr_name) == ("", "QM2")
    assert inner.format.rstrip() == "MQHDIST" and inner.correl_id == b"\3" * 24
    dh = MQDH.unpack_from(x_data, at)
    assert [(o.object_name, o.object_q_mgr_name) for o in dh.objects] == [("X", "QM2"), ("Y", "QM2")]
    assert dh.put_msg_rec_fields == fields | C.MQPMRF_MSG_ID and dh.format.rstrip() == "MQSTR"
    assert [(r.msg_id, r.correl_id, r.feedback) for r in dh.put_msg_recs] == [
        (msg_ids[3], b"\3" * 24, 303), (msg_ids[4], b"\4" * 24, 304)]
    assert x_data[at + dh.struc_length:] == b"hello"
    # byte-exact MQDH at the spec's offsets (ibmmq-reference.md §4.3), native little-endian
    assert x_data[at:at + 4] == b"DH  " and struct.unpack_from("<iiiii", x_data, at + 28) == (
        0, fields | 1, 2, 48, 48 + 2 * 96)
    env.qm.close(env.hconn, out.hobj)
    assert all(q.output_count == 0 for q in env.qm.objects.queues.values())


def test_all_fail_opens_nothing_and_same_reason_is_kept() -> None:
    env = setup()
    before = state_of(env)
    out = env.qm.open_list(env.hconn, [("N1", ""), ("N2", "")], C.MQOO_OUTPUT)
    assert (out.comp, out.reason, out.hobj, out.invalid) == (FAILED, C.MQRC_UNKNOWN_OBJECT_NAME, 0, 2)
    assert state_of(env) == before


def test_whole_call_refusals_change_nothing() -> None:
    env = setup()
    before = state_of(env)
    with pytest.raises(MQError) as e:
        env.qm.open_list(env.hconn, [("A", "")], C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED)
    assert e.value.reason == C.MQRC_OPTION_NOT_VALID_FOR_TYPE
    with pytest.raises(MQError) as e:
        env.qm.open_list(env.hconn, [], C.MQOO_OUTPUT)
    assert e.value.reason == C.MQRC_RECS_PRESENT_ERROR
    out = env.qm.open_list(env.hconn, [("A", ""), ("B", "")], C.MQOO_OUTPUT)
    mid = state_of(env)
    for fields, options in ((0x20, 0), (C.MQPMRF_ACCOUNTING_TOKEN, 0)):
        with pytest.raises(MQError) as e:
            env.qm.put_list(env.hconn, out.hobj, MQMD(), PutOptions(options), b"x", fields, [MQPMR()] * 2)
        assert e.value.reason == C.MQRC_PMO_RECORD_FLAGS_ERROR
    assert state_of(env) == mid
    with pytest.raises(MQError) as e:
        env.qm.close(env.hconn, out.hobj, C.MQCO_DELETE)
    assert e.value.reason == C.MQRC_OPTION_NOT_VALID_FOR_TYPE
    env.qm.close(env.hconn, out.hobj)
    assert state_of(env) == before


def test_plain_put_through_a_list_handle_and_put1() -> None:
    env = setup()
    out = env.qm.open_list(env.hconn, [("A", ""), ("B", "")], C.MQOO_OUTPUT)
    env.put(out.hobj, b"plain")
    assert env.depth("A") == env.depth("B") == 1
    env.qm.close(env.hconn, out.hobj)
    before = state_of(env)
    r = env.qm.put1_list(env.hconn, [("A", ""), ("C", ""), ("ZZ", "")], MQMD(), PutOptions(), b"one")
    assert (r.comp, r.reason, r.known, r.invalid, r.hobj) == (WARNING, C.MQRC_MULTIPLE_REASONS, 2, 1, 0)
    after = state_of(env)
    assert after[1] == before[1]  # nothing stays open
    assert env.depth("A") == 2 and env.depth("C") == 1


def test_accounting_token_record_with_set_identity_context() -> None:
    env = setup()
    out = env.qm.open_list(env.hconn, [("A", "")], C.MQOO_OUTPUT | C.MQOO_SET_IDENTITY_CONTEXT)
    r = env.qm.put_list(env.hconn, out.hobj, MQMD(), PutOptions(C.MQPMO_SET_IDENTITY_CONTEXT), b"x",
                        C.MQPMRF_ACCOUNTING_TOKEN, [MQPMR(accounting_token=b"T" * 32)])
    assert (r.comp, r.reason) == (OK, 0)
    (md, _), = bodies(env, "A")
    assert md.accounting_token == b"T" * 32


def test_put_inhibited_destination_gets_its_own_response() -> None:
    env = setup()
    out = env.qm.open_list(env.hconn, [("A", ""), ("B", "")], C.MQOO_OUTPUT)
    env.qm.objects.queues["B"].attrs["PUT"] = C.MQQA_PUT_INHIBITED
    r = env.qm.put_list(env.hconn, out.hobj, MQMD(), PutOptions(), b"x")
    assert r.responses == [(OK, 0), (FAILED, C.MQRC_PUT_INHIBITED)] and r.reason == C.MQRC_MULTIPLE_REASONS
    assert env.depth("A") == 1 and env.depth("B") == 0
