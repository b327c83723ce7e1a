"""Channel events (CHLEV) against IBM's event descriptions: Channel Started, Stopped (with its
reason qualifiers and error data), Stopped By User and Conversion Error, which ones
EXCEPTION lets through, and the agents' rules (a stop only after a start, once; an event
never fails the channel), each decoded with ferrymq's PCF codec."""

from __future__ import annotations

import pytest
from engine_helpers import Env

from ferrymq.channels.events import ChannelEvents, ended_qualifier
from ferrymq.channels.host import EngineHost
from ferrymq.engine.events import CHANNEL_EVENTS
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.wire import pcf as P


def channel_events(env: Env) -> list[tuple[P.CFH, list[tuple[int, object]]]]:
    """Take every message on SYSTEM.ADMIN.CHANNEL.EVENT: its header and its parameters in order."""
    q = env.qm.objects.require(CHANNEL_EVENTS)
    out = []
    for msg in list(q.messages.by_seq.values()):
        assert msg.md.format == C.MQFMT_EVENT.rstrip() and msg.md.put_appl_type == C.MQAT_QMGR
        assert msg.md.msg_type == C.MQMT_DATAGRAM and msg.md.put_appl_name.strip() == "QM1"
        decoded = P.PCFMessage.unpack(msg.data, msg.md.encoding)
        out.append((decoded.header, [(p.parameter, getattr(p, "value", None)) for p in decoded.params]))
        q.messages.remove(msg)
    return out


def host_of(env: Env) -> tuple[EngineHost, list[int]]:
    calls: list[int] = []
    return EngineHost(env.qm, lambda lsn, fn: fn(), lambda: calls.append(1) or 0), calls


def test_every_channel_event_with_ibms_parameters_under_chlev_enabled() -> None:
    env = Env()
    env.qm.objects.alter_qmgr({"CHLEV": "ENABLED"})
    ev = env.qm.events
    ev.channel_started("QM1.TO.QM2", "QM2", "127.0.0.1(1414)")
    ev.channel_started("QM2.TO.QM1", "", "127.0.0.1(50000)")  # a receiver: no XmitQName
    ev.channel_stopped("QM1.TO.QM2", F.MQRQ_CHANNEL_STOPPED_RETRY, "QM2", "127.0.0.1(1414)", error=2009,
                       detail="the remote end closed the connection")
    ev.channel_stopped_by_user("QM1.TO.QM2")
    ev.channel_conversion_error("QM1.TO.QM2", C.MQRC_FORMAT_ERROR, "MQSTR", "QM2", "127.0.0.1(1414)")
    got = channel_events(env)
    assert [(h.type, h.command, h.comp_code, h.control, h.reason) for h, _ in got] == [
        (F.MQCFT_EVENT, F.MQCMD_CHANNEL_EVENT, C.MQCC_WARNING, F.MQCFC_LAST, reason)
        for reason in (C.MQRC_CHANNEL_STARTED, C.MQRC_CHANNEL_STARTED, C.MQRC_CHANNEL_STOPPED,
                       C.MQRC_CHANNEL_STOPPED_BY_USER, C.MQRC_CHANNEL_CONV_ERROR)]
    started, received, stopped, by_user, conversion = (params for _, params in got)
    assert started == [(C.MQCA_Q_MGR_NAME, "QM1"), (F.MQCACH_CHANNEL_NAME, "QM1.TO.QM2"),
                       (F.MQCACH_XMIT_Q_NAME, "QM2"), (F.MQCACH_CONNECTION_NAME, "127.0.0.1(1414)")]
    assert received == [(C.MQCA_Q_MGR_NAME, "QM1"), (F.MQCACH_CHANNEL_NAME, "QM2.TO.QM1"),
                        (F.MQCACH_CONNECTION_NAME, "127.0.0.1(50000)")]
    assert stopped == [(C.MQCA_Q_MGR_NAME, "QM1"), (F.MQIACF_REASON_QUALIFIER, F.MQRQ_CHANNEL_STOPPED_RETRY),
                       (F.MQCACH_CHANNEL_NAME, "QM1.TO.QM2"), (F.MQIACF_ERROR_IDENTIFIER, 2009),
                       (F.MQIACF_AUX_ERROR_DATA_INT_1, 2009), (F.MQIACF_AUX_ERROR_DATA_INT_2, 0),
                       (F.MQCACF_AUX_ERROR_DATA_STR_1, "the remote end closed the connection"),
                       (F.MQCACF_AUX_ERROR_DATA_STR_2, ""), (F.MQCACF_AUX_ERROR_DATA_STR_3, ""),
                       (F.MQCACH_XMIT_Q_NAME, "QM2"), (F.MQCACH_CONNECTION_NAME, "127.0.0.1(1414)")]
    assert by_user == [(C.MQCA_Q_MGR_NAME, "QM1"), (F.MQIACF_REASON_QUALIFIER, F.MQRQ_CHANNEL_STOPPED_DISABLED),
                       (F.MQCACH_CHANNEL_NAME, "QM1.TO.QM2")]
    assert conversion == [(C.MQCA_Q_MGR_NAME, "QM1"), (F.MQIACF_CONV_REASON_CODE, C.MQRC_FORMAT_ERROR),
                          (F.MQCACH_CHANNEL_NAME, "QM1.TO.QM2"), (F.MQCACH_FORMAT_NAME, "MQSTR"),
                          (F.MQCACH_XMIT_Q_NAME, "QM2"), (F.MQCACH_CONNECTION_NAME, "127.0.0.1(1414)")]


def emit_all(env: Env) -> list[tuple[int, int]]:
    """Every kind of channel event once; the (reason, qualifier) of those put."""
    ev = env.qm.events
    ev.channel_started("C", "XQ", "h(1)")
    for qualifier in (F.MQRQ_CHANNEL_STOPPED_OK, F.MQRQ_CHANNEL_STOPPED_ERROR, F.MQRQ_CHANNEL_STOPPED_RETRY,
                      F.MQRQ_CHANNEL_STOPPED_DISABLED):
        ev.channel_stopped("C", qualifier, "XQ", "h(1)")
    ev.channel_stopped_by_user("C")
    ev.channel_conversion_error("C", C.MQRC_NOT_CONVERTED, "MQSTR", "XQ", "h(1)")
    return [(h.reason, dict(p).get(F.MQIACF_REASON_QUALIFIER, 0)) for h, p in channel_events(env)]  # type: ignore[misc]


def test_chlev_exception_leaves_out_started_and_stopped_ok_and_disabled_puts_none() -> None:
    env = Env()
    assert env.qm.qmgr_attr("CHLEV") == F.MQEVR_DISABLED  # IBM's default
    assert emit_all(env) == []
    env.qm.objects.alter_qmgr({"CHLEV": "EXCEPTION"})
    assert emit_all(env) == [
        (C.MQRC_CHANNEL_STOPPED, F.MQRQ_CHANNEL_STOPPED_ERROR), (C.MQRC_CHANNEL_STOPPED, F.MQRQ_CHANNEL_STOPPED_RETRY),
        (C.MQRC_CHANNEL_STOPPED, F.MQRQ_CHANNEL_STOPPED_DISABLED),
        (C.MQRC_CHANNEL_STOPPED_BY_USER, F.MQRQ_CHANNEL_STOPPED_DISABLED), (C.MQRC_CHANNEL_CONV_ERROR, 0)]
    env.qm.objects.alter_qmgr({"CHLEV": "ENABLED"})
    assert len(emit_all(env)) == 7


def test_an_instance_reports_its_stop_only_after_its_start_and_once() -> None:
    env = Env()
    env.qm.objects.alter_qmgr({"CHLEV": "ENABLED"})
    host, calls = host_of(env)
    events = ChannelEvents(host, "QM1.TO.QM2", "QM2")
    events.stopped(F.MQRQ_CHANNEL_STOPPED_RETRY, 2009, "refused")  # never RUNNING: no event (IBM's rule)
    assert channel_events(env) == []
    events.started("127.0.0.1(1414)")
    events.stopped(F.MQRQ_CHANNEL_STOPPED_OK)
    events.stopped(F.MQRQ_CHANNEL_STOPPED_DISABLED)  # the end was reported already
    got = channel_events(env)
    assert [h.reason for h, _ in got] == [C.MQRC_CHANNEL_STARTED, C.MQRC_CHANNEL_STOPPED]
    assert dict(got[1][1])[F.MQCACH_CONNECTION_NAME] == "127.0.0.1(1414)"  # type: ignore[index]
    assert len(calls) == 2  # the driver hears of each event put


def test_an_event_that_cannot_be_put_never_fails_the_channel() -> None:
    env = Env()
    env.qm.objects.alter_qmgr({"CHLEV": "ENABLED"})
    env.qm.objects.delete(CHANNEL_EVENTS)  # nowhere to go: the dead-letter queue, or nothing
    host, _ = host_of(env)
    events = ChannelEvents(host, "QM2.TO.QM1")
    events.started("127.0.0.1(50000)")
    events.stopped(F.MQRQ_CHANNEL_STOPPED_ERROR, 2009, "broken")
    assert not events.running


@pytest.mark.parametrize(("stopped", "error", "qualifier"), [
    (True, False, F.MQRQ_CHANNEL_STOPPED_DISABLED), (True, True, F.MQRQ_CHANNEL_STOPPED_DISABLED),
    (False, True, F.MQRQ_CHANNEL_STOPPED_ERROR), (False, False, F.MQRQ_CHANNEL_STOPPED_OK)])
def test_ended_qualifier(stopped: bool, error: bool, qualifier: int) -> None:
    assert ended_qualifier(stopped, error) == qualifier
