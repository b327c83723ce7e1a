"""Security over real TCP against a queue manager made by ``ferrymq create`` (issue 20):
passwords refused with 2035 after FAILDELAY, the identity adopted, context forgery and
administration by a non-administrator refused, authority records kept across a SIGKILL,
and the CLI's setmqaut/dspmqaut spellings."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from qm_process import ADMIN_PASSWORD, ADMIN_USER, QueueManagerProcess

import ferrymq.pymqi as pymqi
from ferrymq.client import connect
from ferrymq.errors import MQError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C

pytestmark = pytest.mark.timeout(180)

APP, APP_PASSWORD = "app", "app-pw"
SETUP = """\
DEFINE QLOCAL(APP.Q)
ALTER AUTHINFO(SYSTEM.DEFAULT.AUTHINFO.IDPWOS) AUTHTYPE(IDPWOS) FAILDLAY(1)
SET AUTHREC PROFILE(QM1) OBJTYPE(QMGR) PRINCIPAL('app') AUTHADD(CONNECT,INQ)
SET AUTHREC PROFILE(APP.**) OBJTYPE(QUEUE) GROUP('apps') AUTHADD(GET,PUT,BROWSE,INQ)
SET AUTHREC PROFILE(SYSTEM.ADMIN.COMMAND.QUEUE) OBJTYPE(QUEUE) PRINCIPAL('app') AUTHADD(PUT,INQ)
SET AUTHREC PROFILE(SYSTEM.DEFAULT.MODEL.QUEUE) OBJTYPE(QUEUE) PRINCIPAL('app') AUTHADD(GET,DSP,INQ)
"""


@pytest.fixture
def qm(tmp_path: Path) -> Iterator[QueueManagerProcess]:
    qm = QueueManagerProcess(tmp_path / "home", "QM1")
    qm.add_user(APP, APP_PASSWORD, "apps")
    qm.start()
    out = qm.mqsc(SETUP)
    assert "could not be processed" not in out or "All valid MQSC commands were processed" in out, out
    yield qm
    qm.stop()


def refused(call: object) -> tuple[int, float]:
    start = time.monotonic()
    with pytest.raises(MQError) as info:
        call()  # type: ignore[operator]
    return info.value.reason, time.monotonic() - start


def test_passwords_are_checked_and_a_refusal_waits_for_faildelay(qm: QueueManagerProcess) -> None:
    addr = qm.conn_name
    for user, password in ((APP, "wrong"), ("nobody", "x"), (ADMIN_USER, ADMIN_PASSWORD + "x"), (ADMIN_USER, "")):
        reason, took = refused(lambda user=user, password=password: connect("QM1", addr, user=user,
                                                                             password=password))
        assert reason == C.MQRC_NOT_AUTHORIZED
        if password:  # a wrong password is answered only after FAILDLAY(1)
            assert took >= 0.9, (user, took)
    reason, _ = refused(lambda: pymqi.connect("QM1", "DEV.APP.SVRCONN", addr, APP, "wrong"))
    assert reason == C.MQRC_NOT_AUTHORIZED
    # CHCKCLNT(REQDADM), IBM's default: no user at all is refused (none in the environment
    # either, and SYSTEM.DEF.SVRCONN has no MCAUSER); a non-administrator needs no password ...
    reason, _ = refused(lambda: connect("QM1", addr, user="", password=""))
    assert reason == C.MQRC_NOT_AUTHORIZED
    with connect("QM1", addr, user=APP, password="") as c:
        assert c.session is not None
    # ... until CHCKCLNT(REQUIRED)
    qm.mqsc("ALTER AUTHINFO(SYSTEM.DEFAULT.AUTHINFO.IDPWOS) AUTHTYPE(IDPWOS) CHCKCLNT(REQUIRED)\n")
    reason, _ = refused(lambda: connect("QM1", addr, user=APP, password=""))
    assert reason == C.MQRC_NOT_AUTHORIZED
    with connect("QM1", addr, user=APP, password=APP_PASSWORD) as c:
        assert c.session is not None
    log = (qm.home / "qmgrs" / "QM1" / "ferrymq.log").read_text()
    assert "event=connect_refused" in log and "wrong" not in log and ADMIN_PASSWORD not in log


def test_no_client_runs_as_an_administrator_without_a_password(qm: QueueManagerProcess) -> None:
    """CHCKCLNT(REQDADM) lets a channel's MCAUSER connect without a password, never an
    administrator: not as the channel's MCAUSER, nor as the user its records map to."""
    qm.mqsc(f"DEFINE CHANNEL(APP.MCA) CHLTYPE(SVRCONN) MCAUSER('{APP}')\n"
            f"DEFINE CHANNEL(ADMIN.MCA) CHLTYPE(SVRCONN) MCAUSER('{ADMIN_USER}')\n")
    with connect("QM1", qm.conn_name, channel="APP.MCA", user="", password="") as c, c.open("APP.Q") as q:
        q.put(b"as the channel's user")
        assert q.get(wait=1).md.user_identifier.strip() == APP

    def refused_on(channel: str, user: str = "") -> None:
        reason, _ = refused(lambda: connect("QM1", qm.conn_name, channel=channel, user=user, password=""))
        assert reason == C.MQRC_NOT_AUTHORIZED, channel
        log = (qm.home / "qmgrs" / "QM1" / "ferrymq.log").read_text()
        assert f"channel={channel} user={user!r} reason=2035 detail=\"administrator {ADMIN_USER!r} must give" in log

    refused_on("ADMIN.MCA")  # the queue manager's channel records are off (qm_process)
    # a record that maps to an administrator, on a channel whose records let administrators in
    qm.mqsc(f"DEFINE CHANNEL(MAPPED) CHLTYPE(SVRCONN)\n"
            f"SET CHLAUTH('MAPPED') TYPE(ADDRESSMAP) ADDRESS('*') USERSRC(MAP) MCAUSER('{ADMIN_USER}')\n"
            "SET CHLAUTH('MAPPED') TYPE(BLOCKUSER) USERLIST('nobody')\n"
            "ALTER QMGR CHLAUTH(ENABLED)\n")
    refused_on("MAPPED", APP)


def test_the_identity_is_the_authenticated_user_and_context_cannot_be_forged(qm: QueueManagerProcess) -> None:
    app = pymqi.connect("QM1", "DEV.APP.SVRCONN", qm.conn_name, APP, APP_PASSWORD)
    app.put1("APP.Q", b"mine")
    got = pymqi.MD()
    pymqi.Queue(app, "APP.Q").get(None, got)
    assert got.UserIdentifier.strip() == APP.encode()
    forged = pymqi.MD(UserIdentifier=b"ferrytest", PutApplName=b"payroll")
    for pmo in (C.MQPMO_SET_IDENTITY_CONTEXT, C.MQPMO_SET_ALL_CONTEXT):
        with pytest.raises(pymqi.MQMIError) as info:
            app.put1("APP.Q", b"forged", forged, pymqi.PMO(Options=pmo))
        assert info.value.reason == C.MQRC_NOT_AUTHORIZED
    for oo in (C.MQOO_OUTPUT | C.MQOO_SET_ALL_CONTEXT, C.MQOO_OUTPUT | C.MQOO_SET_IDENTITY_CONTEXT):
        with pytest.raises(pymqi.MQMIError) as info:
            pymqi.Queue(app, "APP.Q", oo)
        assert info.value.reason == C.MQRC_NOT_AUTHORIZED
    for name in ("SYSTEM.DEAD.LETTER.QUEUE", "SYSTEM.ADMIN.COMMAND.QUEUE", "NOT.DEFINED"):
        with pytest.raises(pymqi.MQMIError) as info:
            pymqi.Queue(app, name, C.MQOO_INPUT_AS_Q_DEF)
        assert info.value.reason == C.MQRC_NOT_AUTHORIZED, name
    app.disconnect()


def test_a_non_administrator_cannot_administer(qm: QueueManagerProcess) -> None:
    app = pymqi.connect("QM1", "DEV.APP.SVRCONN", qm.conn_name, APP, APP_PASSWORD)
    pcf = pymqi.PCFExecute(app)
    attempts = [lambda: pcf.MQCMD_DELETE_Q({C.MQCA_Q_NAME: b"SYSTEM.DEAD.LETTER.QUEUE"}),
                lambda: pcf.MQCMD_CHANGE_Q_MGR({C.MQCA_DEAD_LETTER_Q_NAME: b"APP.Q"}),
                lambda: pcf.MQCMD_CHANGE_Q({C.MQCA_Q_NAME: b"SYSTEM.ADMIN.COMMAND.QUEUE",
                                            C.MQIA_Q_TYPE: C.MQQT_LOCAL, C.MQIA_INHIBIT_GET: C.MQQA_GET_INHIBITED}),
                lambda: pcf.MQCMD_SET_AUTH_REC({F.MQCACF_AUTH_PROFILE_NAME: b"**", F.MQIACF_OBJECT_TYPE: C.MQOT_Q,
                                                F.MQCACF_PRINCIPAL_ENTITY_NAMES: [b"app"],
                                                F.MQIACF_AUTH_ADD_AUTHS: [F.MQAUTH_ALL]})]
    for attempt in attempts:
        with pytest.raises(pymqi.MQMIError) as info:
            attempt()
        assert info.value.reason == C.MQRC_NOT_AUTHORIZED
    app.disconnect()
    out = qm.mqsc("DISPLAY QMGR DEADQ\nDISPLAY QLOCAL(SYSTEM.DEAD.LETTER.QUEUE)\nDISPLAY QLOCAL(SYSTEM.ADMIN.COMMAND.QUEUE) GET\n")
    assert "DEADQ(SYSTEM.DEAD.LETTER.QUEUE)" in out and "GET(ENABLED)" in out
    admin = pymqi.connect("QM1", "DEV.APP.SVRCONN", qm.conn_name, ADMIN_USER, ADMIN_PASSWORD)  # mqm: may
    pymqi.PCFExecute(admin).MQCMD_CHANGE_Q_MGR({C.MQCA_Q_MGR_DESC: b"changed by an administrator"})
    admin.disconnect()


def test_records_survive_a_kill_and_the_cli_spellings(qm: QueueManagerProcess) -> None:
    qm._cli("setmqaut", "QM1", "-t", "queue", "-n", "PAY.*", "-p", APP, "+put", "+get", "+browse")
    qm._cli("setmqaut", "QM1", "-t", "queue", "-n", "PAY.*", "-p", APP, "-browse")
    qm.mqsc("DEFINE QLOCAL(PAY.Q)\n")
    qm.kill()
    qm.start()
    shown = json.loads(qm._cli("dspmqaut", "QM1", "-t", "queue", "-n", "PAY.Q", "-p", APP, "--output", "json"))
    assert shown["commands"][0]["objects"][0]["AUTHLIST"] == "GET,PUT"
    with connect("QM1", qm.conn_name, user=APP, password=APP_PASSWORD) as c, c.open("PAY.Q") as q:
        q.put(b"kept")
        assert q.get(wait=1).data == b"kept"
    records = qm.mqsc("DISPLAY AUTHREC OBJTYPE(QUEUE)\n")
    assert "PROFILE(APP.**)" in records and "PROFILE(PAY.*)" in records
