"""QREMOTE through MQSC and PCF (both integer encodings): define, alter, display, delete."""

from __future__ import annotations

import pytest
from engine_helpers import Env
from test_admin_commands import ok, run

from ferrymq.admin.session import Session
from ferrymq.engine.commands.pcfmap import run as run_command
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.model import Command, Filter
from ferrymq.wire import pcf as P

REMOTE_ATTRS = (C.MQCA_REMOTE_Q_NAME, C.MQCA_REMOTE_Q_MGR_NAME, C.MQCA_XMIT_Q_NAME, C.MQIA_DEF_PRIORITY)


@pytest.mark.parametrize("encoding", [P.NATIVE, P.REVERSED], ids=["normal", "reversed"])
def test_pcf_round_trip(encoding: int) -> None:
    env = Env()
    ok(env, Command(F.MQCMD_CREATE_Q, {C.MQCA_Q_NAME: "R.Q", C.MQIA_Q_TYPE: C.MQQT_REMOTE, C.MQCA_REMOTE_Q_NAME: "APP.IN",
                                       C.MQCA_REMOTE_Q_MGR_NAME: "QM2", C.MQCA_XMIT_Q_NAME: "TO.QM2",
                                       C.MQIA_DEF_PRIORITY: 3}), encoding)
    got = ok(env, Command(F.MQCMD_INQUIRE_Q, {C.MQCA_Q_NAME: "R.Q", F.MQIACF_Q_ATTRS: REMOTE_ATTRS}), encoding)
    assert got == [{C.MQCA_Q_NAME: "R.Q", C.MQIA_Q_TYPE: C.MQQT_REMOTE, C.MQCA_REMOTE_Q_NAME: "APP.IN",
                    C.MQCA_REMOTE_Q_MGR_NAME: "QM2", C.MQCA_XMIT_Q_NAME: "TO.QM2", C.MQIA_DEF_PRIORITY: 3}]
    ok(env, Command(F.MQCMD_CHANGE_Q, {C.MQCA_Q_NAME: "R.Q", C.MQIA_Q_TYPE: C.MQQT_REMOTE,
                                       C.MQCA_XMIT_Q_NAME: ""}), encoding)
    assert env.qm.objects.require("R.Q")["XMITQ"] == ""
    full = ok(env, Command(F.MQCMD_INQUIRE_Q, {C.MQCA_Q_NAME: "R.Q"}), encoding)[0]
    assert C.MQIA_MAX_Q_DEPTH not in full and C.MQIA_INHIBIT_GET not in full and full[C.MQIA_SCOPE] == 1
    # a filter on a remote attribute, and the type in the names list
    got = ok(env, Command(F.MQCMD_INQUIRE_Q, {C.MQCA_Q_NAME: "*", F.MQIACF_Q_ATTRS: (C.MQCA_REMOTE_Q_NAME,)},
                          [Filter(C.MQCA_REMOTE_Q_MGR_NAME, F.MQCFOP_EQUAL, "QM2")]), encoding)
    assert [r[C.MQCA_Q_NAME] for r in got] == ["R.Q"]
    names = ok(env, Command(F.MQCMD_INQUIRE_Q_NAMES, {C.MQCA_Q_NAME: "R.*", C.MQIA_Q_TYPE: C.MQQT_REMOTE}), encoding)
    assert names == [{F.MQCACF_Q_NAMES: ("R.Q",), F.MQIACF_Q_TYPES: (C.MQQT_REMOTE,)}]
    # a local queue's attribute is no remote queue's
    bad = run(env, Command(F.MQCMD_CHANGE_Q, {C.MQCA_Q_NAME: "R.Q", C.MQIA_Q_TYPE: C.MQQT_REMOTE,
                                              C.MQIA_MAX_Q_DEPTH: 5}), encoding)
    assert bad[0].header.comp_code == C.MQCC_FAILED
    ok(env, Command(F.MQCMD_DELETE_Q, {C.MQCA_Q_NAME: "R.Q", C.MQIA_Q_TYPE: C.MQQT_REMOTE}), encoding)
    assert env.qm.objects.find("R.Q") is None


def test_mqsc_define_display_alter_delete() -> None:
    env = Env()
    s = Session(lambda cmd: run_command(env.qm, cmd))

    def lines(text: str) -> list[str]:
        return s.execute(text).messages

    assert lines("DEFINE QLOCAL(QM2) USAGE(XMITQ)") == ["AMQ8006I: Queue created."]
    assert lines("DEFINE QREMOTE(R.Q) RNAME(APP.IN) RQMNAME(QM2) XMITQ(QM2) DESCR('to QM2')") == [
        "AMQ8006I: Queue created."]
    assert lines("DEFINE QR(QM2.ALIAS) RQMNAME(QM2)") == ["AMQ8006I: Queue created."]
    shown = lines("DISPLAY QREMOTE(R.Q) ALL")
    assert "   QUEUE(R.Q)                              TYPE(QREMOTE)" in shown
    assert any("RNAME(APP.IN)" in x for x in shown) and any("RQMNAME(QM2)" in x for x in shown)
    assert any("XMITQ(QM2)" in x for x in shown) and any("SCOPE(QMGR)" in x for x in shown)
    assert not any("MAXDEPTH" in x for x in shown)
    every = lines("DISPLAY QUEUE(*)")
    assert "   QUEUE(R.Q)                              TYPE(QREMOTE)" in every
    assert "   QUEUE(SYSTEM.DEFAULT.REMOTE.QUEUE)      TYPE(QREMOTE)" in every
    assert [x for x in lines("DISPLAY QUEUE(*) WHERE(RQMNAME EQ QM2)") if not x.startswith("AMQ8409I")] == [
        "   QUEUE(QM2.ALIAS)                        TYPE(QREMOTE)", "   RQMNAME(QM2)",
        "   QUEUE(R.Q)                              TYPE(QREMOTE)", "   RQMNAME(QM2)"]
    assert lines("ALTER QREMOTE(R.Q) RNAME(APP.OTHER) PUT(DISABLED)") == ["AMQ8008I: Queue changed."]
    assert env.qm.objects.require("R.Q")["RNAME"] == "APP.OTHER"
    assert lines("ALTER QREMOTE(R.Q) MAXDEPTH(5)")[0].startswith("AMQ8405E")  # not an attribute of QREMOTE
    assert lines("ALTER QLOCAL(R.Q) DESCR(x)")[0] != "AMQ8008I: Queue changed."  # the wrong type
    assert lines("DELETE QREMOTE(R.Q)") == ["AMQ8007I: Queue deleted."]
    assert env.qm.objects.find("R.Q") is None
    assert lines("ALTER QMGR DEFXMITQ(QM2)") == ["AMQ8005I: Queue manager changed."]
    assert env.qm.objects.display_qmgr()["DEFXMITQ"] == "QM2"
