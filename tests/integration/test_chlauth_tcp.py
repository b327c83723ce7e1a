"""Channel authentication records over real TCP against a queue manager made by ``ferrymq
create`` with CHLAUTH(ENABLED) and IBM's default records: each record type refusing or
mapping a client, a blocked administrator, USERSRC(NOACCESS), MCAUSER (the channel's and a
record's) deciding what the connection may do and whose messages it puts, the refusals in
the log with the rule that refused them, and the Not Authorized events on
SYSTEM.ADMIN.QMGR.EVENT decoded both with the project's PCF codec and with pymqi's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from channel_pair import setup_pair, wait_for
from pcf_events import decode_event
from qm_process import ADMIN_PASSWORD, ADMIN_USER, QueueManagerProcess

import ferrymq.pymqi as pymqi
from ferrymq.client import connect
from ferrymq.client.errors import NoMessageAvailable
from ferrymq.errors import MQError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pymqi import CMQCFC
from ferrymq.wire import pcf as P
from ferrymq.wire.mqdlh import MQDLH

pytestmark = pytest.mark.timeout(180)

APP, APP_PASSWORD = "app", "app-pw"
READER, READER_PASSWORD = "reader", "reader-pw"
SETUP = """\
DEFINE QLOCAL(APP.Q)
DEFINE CHANNEL(APP.SVRCONN) CHLTYPE(SVRCONN)
ALTER AUTHINFO(SYSTEM.DEFAULT.AUTHINFO.IDPWOS) AUTHTYPE(IDPWOS) FAILDLAY(0)
SET AUTHREC PROFILE(QM1) OBJTYPE(QMGR) GROUP('apps') AUTHADD(CONNECT,INQ)
SET AUTHREC PROFILE(APP.Q) OBJTYPE(QUEUE) PRINCIPAL('app') AUTHADD(GET,PUT,BROWSE,INQ)
SET AUTHREC PROFILE(APP.Q) OBJTYPE(QUEUE) PRINCIPAL('reader') AUTHADD(GET,BROWSE,INQ)
"""


@pytest.fixture
def qm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[QueueManagerProcess]:
    monkeypatch.setenv("FERRYMQ_HOME", str(tmp_path / "home"))  # connect("QM1"): its local socket
    qm = QueueManagerProcess(tmp_path / "home", "QM1", create_args=("--chlauth", "enabled"))
    qm.add_user(APP, APP_PASSWORD, "apps")
    qm.add_user(READER, READER_PASSWORD, "apps")
    qm.start()
    mqsc(qm, SETUP)
    yield qm
    qm.stop()


def mqsc(qm: QueueManagerProcess, script: str) -> str:
    out = qm.mqsc(script)  # over the local socket: no channel, no channel authentication
    assert "All valid MQSC commands were processed" in out, out
    return out


def reason_of(call: object) -> int:
    with pytest.raises(MQError) as info:
        call()  # type: ignore[operator]
    return info.value.reason


def log_of(qm: QueueManagerProcess) -> str:
    return (qm.home / "qmgrs" / "QM1" / "ferrymq.log").read_text()


def test_ibms_default_records_are_there_and_enforced(qm: QueueManagerProcess) -> None:
    shown = mqsc(qm, "DISPLAY CHLAUTH(*)\nDISPLAY QMGR CHLAUTH\n")
    for line in ("CHLAUTH(SYSTEM.ADMIN.SVRCONN)", "CHLAUTH(SYSTEM.*)", "USERLIST(*MQADMIN)", "USERSRC(NOACCESS)",
                 "USERSRC(CHANNEL)", "CHLAUTH(ENABLED)"):
        assert line in shown, shown
    addr = qm.conn_name
    # SYSTEM.* channels are nobody's; the application on its own channel connects.
    assert reason_of(lambda: connect("QM1", addr, user=APP, password=APP_PASSWORD, channel="SYSTEM.DEF.SVRCONN")) \
        == C.MQRC_NOT_AUTHORIZED
    assert reason_of(lambda: pymqi.connect("QM1", "SYSTEM.DEF.SVRCONN", addr, APP, APP_PASSWORD)) \
        == C.MQRC_NOT_AUTHORIZED
    with connect("QM1", addr, user=APP, password=APP_PASSWORD, channel="APP.SVRCONN") as c:
        c.put1("APP.Q", b"hello")
    # SYSTEM.ADMIN.SVRCONN is open, but not to an administrator, password or not.
    with connect("QM1", addr, user=APP, password=APP_PASSWORD, channel="SYSTEM.ADMIN.SVRCONN"):
        pass
    for channel in ("SYSTEM.ADMIN.SVRCONN", "APP.SVRCONN"):
        assert reason_of(lambda channel=channel: connect("QM1", addr, user=ADMIN_USER, password=ADMIN_PASSWORD,
                                                         channel=channel)) == C.MQRC_NOT_AUTHORIZED
    log = log_of(qm)
    assert "channel=SYSTEM.DEF.SVRCONN" in log and "CHLAUTH('SYSTEM.*') TYPE(ADDRESSMAP)" in log
    assert "USERLIST('*MQADMIN')" in log and f"user={ADMIN_USER!r}" in log
    assert ADMIN_PASSWORD not in log and APP_PASSWORD not in log
    # One line per refused connection.
    assert log.count("event=connect_refused") == 4


def test_a_channel_blockuser_record_lets_administrators_use_that_channel(qm: QueueManagerProcess) -> None:
    mqsc(qm, "DEFINE CHANNEL(ADMIN.SVRCONN) CHLTYPE(SVRCONN)\n"
             "SET CHLAUTH('ADMIN.SVRCONN') TYPE(BLOCKUSER) USERLIST('nobody') DESCR('lift *MQADMIN here')\n")
    with connect("QM1", qm.conn_name, user=ADMIN_USER, password=ADMIN_PASSWORD, channel="ADMIN.SVRCONN") as c:
        c.put1("APP.Q", b"from the administrator")
    assert reason_of(lambda: connect("QM1", qm.conn_name, user=ADMIN_USER, password=ADMIN_PASSWORD,
                                     channel="APP.SVRCONN")) == C.MQRC_NOT_AUTHORIZED
    # Disabled, the records are kept but not checked (ALTER QMGR CHLAUTH).
    mqsc(qm, "ALTER QMGR CHLAUTH(DISABLED)\n")
    with connect("QM1", qm.conn_name, user=ADMIN_USER, password=ADMIN_PASSWORD, channel="APP.SVRCONN"):
        pass


def test_blockaddr_and_addressmap_by_the_partners_address(qm: QueueManagerProcess) -> None:
    addr = qm.conn_name
    mqsc(qm, "SET CHLAUTH('*') TYPE(BLOCKADDR) ADDRLIST('127.0.0.1-9')\n")
    assert reason_of(lambda: connect("QM1", addr, user=APP, password=APP_PASSWORD, channel="APP.SVRCONN")) \
        == C.MQRC_NOT_AUTHORIZED
    assert "TYPE(BLOCKADDR) ADDRLIST('127.0.0.1-9')" in log_of(qm)
    mqsc(qm, "SET CHLAUTH('*') TYPE(BLOCKADDR) ADDRLIST('127.0.0.1-9') ACTION(REMOVE)\n"
             "SET CHLAUTH('APP.SVRCONN') TYPE(ADDRESSMAP) ADDRESS('*') USERSRC(NOACCESS)\n"
             "SET CHLAUTH('APP.SVRCONN') TYPE(ADDRESSMAP) ADDRESS('127.0.0.*') USERSRC(CHANNEL)\n")
    with connect("QM1", addr, user=APP, password=APP_PASSWORD, channel="APP.SVRCONN"):
        pass  # the more specific address lets it in
    mqsc(qm, "SET CHLAUTH('APP.SVRCONN') TYPE(ADDRESSMAP) ADDRESS('127.0.0.*') ACTION(REMOVE)\n")
    assert reason_of(lambda: connect("QM1", addr, user=APP, password=APP_PASSWORD, channel="APP.SVRCONN")) \
        == C.MQRC_NOT_AUTHORIZED


def test_usermap_noaccess_and_map_change_who_the_connection_is(qm: QueueManagerProcess) -> None:
    addr = qm.conn_name
    mqsc(qm, "SET CHLAUTH('APP.SVRCONN') TYPE(USERMAP) CLNTUSER('reader') USERSRC(NOACCESS)\n")
    assert reason_of(lambda: connect("QM1", addr, user=READER, password=READER_PASSWORD, channel="APP.SVRCONN")) \
        == C.MQRC_NOT_AUTHORIZED
    # app mapped to reader: it connects (its own password checked) but may only read.
    mqsc(qm, "SET CHLAUTH('APP.SVRCONN') TYPE(USERMAP) CLNTUSER('app') USERSRC(MAP) MCAUSER('reader')\n")
    with connect("QM1", addr, user=APP, password=APP_PASSWORD, channel="APP.SVRCONN") as c:
        assert reason_of(lambda: c.put1("APP.Q", b"no")) == C.MQRC_NOT_AUTHORIZED
    assert reason_of(lambda: connect("QM1", addr, user=APP, password="wrong", channel="APP.SVRCONN")) \
        == C.MQRC_NOT_AUTHORIZED  # the mapping does not spare the password check
    runcheck = mqsc(qm, "DISPLAY CHLAUTH('APP.SVRCONN') MATCH(RUNCHECK) ADDRESS('127.0.0.1') CLNTUSER('app')\n")
    assert "MCAUSER(reader)" in runcheck, runcheck


def test_mcauser_of_the_channel_and_of_a_record_are_the_identity_of_puts(qm: QueueManagerProcess) -> None:
    addr = qm.conn_name
    mqsc(qm, "DEFINE CHANNEL(MCA.SVRCONN) CHLTYPE(SVRCONN) MCAUSER('app')\n"
             "ALTER AUTHINFO(SYSTEM.DEFAULT.AUTHINFO.IDPWOS) AUTHTYPE(IDPWOS) ADOPTCTX(NO)\n")
    # ADOPTCTX(NO): the channel's MCAUSER is who reader's connection is, and may put.
    with connect("QM1", addr, user=READER, password=READER_PASSWORD, channel="MCA.SVRCONN") as c:
        c.put1("APP.Q", b"as app")
    mqsc(qm, "ALTER AUTHINFO(SYSTEM.DEFAULT.AUTHINFO.IDPWOS) AUTHTYPE(IDPWOS) ADOPTCTX(YES)\n")
    with connect("QM1", addr, user=READER, password=READER_PASSWORD, channel="MCA.SVRCONN") as c:
        assert reason_of(lambda: c.put1("APP.Q", b"no")) == C.MQRC_NOT_AUTHORIZED  # the adopted user wins
    # A USERSRC(MAP) record wins over both.
    mqsc(qm, "SET CHLAUTH('MCA.SVRCONN') TYPE(ADDRESSMAP) ADDRESS('127.0.0.1') USERSRC(MAP) MCAUSER('app')\n")
    with connect("QM1", addr, user=READER, password=READER_PASSWORD, channel="MCA.SVRCONN") as c:
        c.put1("APP.Q", b"mapped to app")
    with connect("QM1") as local:  # the local socket: the queue manager's own user
        q = local.open("APP.Q")
        users = [q.get(wait=1).md.user_identifier.strip() for _ in range(2)]
    assert users == [APP, APP]


def events(qm: QueueManagerProcess, queue: str = "SYSTEM.ADMIN.QMGR.EVENT") -> list[bytes]:
    out = []
    with connect("QM1") as local:
        q = local.open(queue)
        while True:
            try:
                out.append(q.get(wait=0.5).data)
            except NoMessageAvailable:
                return out


def test_authority_events_for_refused_connections_opens_and_commands(qm: QueueManagerProcess) -> None:
    addr = qm.conn_name
    mqsc(qm, "ALTER QMGR AUTHOREV(ENABLED) CHLEV(ENABLED)\n"
             "SET AUTHREC PROFILE(SYSTEM.ADMIN.COMMAND.QUEUE) OBJTYPE(QUEUE) PRINCIPAL('reader') AUTHADD(PUT,INQ)\n"
             "SET AUTHREC PROFILE(SYSTEM.DEFAULT.MODEL.QUEUE) OBJTYPE(QUEUE) PRINCIPAL('reader') AUTHADD(GET,DSP,INQ)\n"
             # pymqi's PCFExecute inquires on its own reply queue
             "SET AUTHREC PROFILE(PYMQPCF.**) OBJTYPE(QUEUE) PRINCIPAL('reader') AUTHADD(GET,INQ)\n")
    assert reason_of(lambda: connect("QM1", addr, user=APP, password="wrong", channel="APP.SVRCONN")) \
        == C.MQRC_NOT_AUTHORIZED
    assert reason_of(lambda: connect("QM1", addr, user=APP, password=APP_PASSWORD, channel="SYSTEM.DEF.SVRCONN")) \
        == C.MQRC_NOT_AUTHORIZED
    reader = pymqi.connect("QM1", "APP.SVRCONN", addr, READER, READER_PASSWORD)
    try:
        with pytest.raises(pymqi.MQMIError) as info:
            pymqi.Queue(reader, "APP.Q", C.MQOO_OUTPUT)
        assert info.value.reason == C.MQRC_NOT_AUTHORIZED
        with pytest.raises(pymqi.MQMIError) as info:
            reader.put1("APP.Q", b"no")
        assert info.value.reason == C.MQRC_NOT_AUTHORIZED
        with pytest.raises(pymqi.MQMIError) as info:
            pymqi.PCFExecute(reader).MQCMD_DELETE_Q({C.MQCA_Q_NAME: b"APP.Q"})
        assert info.value.reason == C.MQRC_NOT_AUTHORIZED
    finally:
        reader.disconnect()
    # Decoded as the MQMD's Encoding says; the queue also holds the Queue Manager Active event.
    pairs = [(P.PCFMessage.unpack(m, C.MQENC_NATIVE), m) for m in events(qm)]
    got = [m for d, m in pairs if d.header.reason == C.MQRC_NOT_AUTHORIZED]
    ours = [d for d, m in pairs if d.header.reason == C.MQRC_NOT_AUTHORIZED]
    assert [d.header.reason for d, m in pairs if d not in ours] == [C.MQRC_Q_MGR_ACTIVE]
    assert all(m.header.type == F.MQCFT_EVENT and m.header.command == F.MQCMD_Q_MGR_EVENT
               and m.header.comp_code == C.MQCC_WARNING for m in ours)
    decoded = [decode_event(m)[1] for m in got]
    qualifiers = [d[CMQCFC.MQIACF_REASON_QUALIFIER] for d in decoded]
    assert qualifiers == [F.MQRQ_CONN_NOT_AUTHORIZED, F.MQRQ_OPEN_NOT_AUTHORIZED, F.MQRQ_OPEN_NOT_AUTHORIZED,
                          F.MQRQ_CMD_NOT_AUTHORIZED]
    conn_wrong, opened, put1, command = decoded
    assert conn_wrong[CMQCFC.MQCACF_USER_IDENTIFIER] == b"app"
    assert conn_wrong[CMQCFC.MQCACH_CHANNEL_NAME] == b"APP.SVRCONN"
    assert conn_wrong[CMQCFC.MQCACH_CONNECTION_NAME] == b"127.0.0.1"
    assert opened[C.MQCA_Q_NAME] == b"APP.Q" and opened[CMQCFC.MQIACF_OPEN_OPTIONS] == C.MQOO_OUTPUT
    assert opened[CMQCFC.MQCACF_USER_IDENTIFIER] == b"reader"
    assert put1[C.MQCA_Q_NAME] == b"APP.Q"
    assert command[CMQCFC.MQIACF_COMMAND] == F.MQCMD_DELETE_Q
    assert command[CMQCFC.MQCACF_USER_IDENTIFIER] == b"reader"
    assert [p.parameter for p in ours[0].params][:2] == [C.MQCA_Q_MGR_NAME, F.MQIACF_REASON_QUALIFIER]
    # The channel its records refused: a Channel Blocked event, as IBM reports it (CHLEV).
    [blocked] = events(qm, "SYSTEM.ADMIN.CHANNEL.EVENT")
    header, params = decode_event(blocked)
    assert (header.Command, header.Reason) == (CMQCFC.MQCMD_CHANNEL_EVENT, C.MQRC_CHANNEL_BLOCKED)
    assert params[CMQCFC.MQIACF_REASON_QUALIFIER] == F.MQRQ_CHANNEL_BLOCKED_NOACCESS
    assert params[CMQCFC.MQCACH_CHANNEL_NAME] == b"SYSTEM.DEF.SVRCONN"
    assert params[CMQCFC.MQCACH_CLIENT_USER_ID] == b"app" and params[CMQCFC.MQCACH_CONNECTION_NAME] == b"127.0.0.1"


def test_set_chlauth_by_pcf_as_pymqis_own_tests_do(qm: QueueManagerProcess) -> None:
    mqsc(qm, "DEFINE CHANNEL(ADMIN.SVRCONN) CHLTYPE(SVRCONN)\n"
             "SET CHLAUTH('ADMIN.SVRCONN') TYPE(BLOCKUSER) USERLIST('nobody')\n")
    admin = pymqi.connect("QM1", "ADMIN.SVRCONN", qm.conn_name, ADMIN_USER, ADMIN_PASSWORD)
    try:
        pcf = pymqi.PCFExecute(admin)
        pcf.MQCMD_SET_CHLAUTH_REC([
            pymqi.CFST(Parameter=CMQCFC.MQCACH_CHANNEL_NAME, String=b"TLS.SVRCONN"),
            pymqi.CFIN(Parameter=CMQCFC.MQIACF_CHLAUTH_TYPE, Value=CMQCFC.MQCAUT_USERMAP),
            pymqi.CFIN(Parameter=CMQCFC.MQIACF_ACTION, Value=CMQCFC.MQACT_REPLACE),
            pymqi.CFST(Parameter=CMQCFC.MQCACH_CLIENT_USER_ID, String=APP.encode()),
            pymqi.CFIN(Parameter=C.MQIA_CHECK_CLIENT_BINDING, Value=CMQCFC.MQCHK_REQUIRED_ADMIN),
            pymqi.CFIN(Parameter=CMQCFC.MQIACH_USER_SOURCE, Value=C.MQUSRC_MAP),
            pymqi.CFST(Parameter=CMQCFC.MQCACH_MCA_USER_ID, String=READER.encode())])
        pcf.MQCMD_SET_CHLAUTH_REC([
            pymqi.CFST(Parameter=CMQCFC.MQCACH_CHANNEL_NAME, String=b"TLS.SVRCONN"),
            pymqi.CFIN(Parameter=CMQCFC.MQIACF_CHLAUTH_TYPE, Value=CMQCFC.MQCAUT_BLOCKUSER),
            pymqi.CFST(Parameter=CMQCFC.MQCACH_MCA_USER_ID_LIST, String=b"nobody"),
            pymqi.CFIN(Parameter=CMQCFC.MQIACH_WARNING, Value=C.MQWARN_NO),
            pymqi.CFIN(Parameter=CMQCFC.MQIACF_ACTION, Value=CMQCFC.MQACT_REPLACE)])
        found = pcf.MQCMD_INQUIRE_CHLAUTH_RECS({CMQCFC.MQCACH_CHANNEL_NAME: b"TLS.SVRCONN"})
        kinds = sorted(r[CMQCFC.MQIACF_CHLAUTH_TYPE] for r in found)
        assert kinds == [CMQCFC.MQCAUT_BLOCKUSER, CMQCFC.MQCAUT_USERMAP]
        mapped = next(r for r in found if r[CMQCFC.MQIACF_CHLAUTH_TYPE] == CMQCFC.MQCAUT_USERMAP)
        assert mapped[CMQCFC.MQCACH_MCA_USER_ID].strip() == READER.encode()
        with pytest.raises(pymqi.MQMIError) as info:  # ADD of a record that exists
            pcf.MQCMD_SET_CHLAUTH_REC([
                pymqi.CFST(Parameter=CMQCFC.MQCACH_CHANNEL_NAME, String=b"TLS.SVRCONN"),
                pymqi.CFIN(Parameter=CMQCFC.MQIACF_CHLAUTH_TYPE, Value=CMQCFC.MQCAUT_USERMAP),
                pymqi.CFST(Parameter=CMQCFC.MQCACH_CLIENT_USER_ID, String=APP.encode()),
                pymqi.CFIN(Parameter=CMQCFC.MQIACH_USER_SOURCE, Value=C.MQUSRC_NOACCESS)])
        assert info.value.reason == CMQCFC.MQRCCF_CHLAUTH_ALREADY_EXISTS
        for kind in (CMQCFC.MQCAUT_USERMAP, CMQCFC.MQCAUT_BLOCKUSER):
            pcf.MQCMD_SET_CHLAUTH_REC([
                pymqi.CFST(Parameter=CMQCFC.MQCACH_CHANNEL_NAME, String=b"TLS.SVRCONN"),
                pymqi.CFIN(Parameter=CMQCFC.MQIACF_CHLAUTH_TYPE, Value=kind),
                pymqi.CFIN(Parameter=CMQCFC.MQIACF_ACTION, Value=CMQCFC.MQACT_REMOVEALL)])
        with pytest.raises(pymqi.MQMIError) as info:
            pcf.MQCMD_INQUIRE_CHLAUTH_RECS({CMQCFC.MQCACH_CHANNEL_NAME: b"TLS.SVRCONN"})
        assert info.value.reason == CMQCFC.MQRCCF_CHLAUTH_NOT_FOUND
    finally:
        admin.disconnect()
    qm.kill()  # the records are journal records: they survive a SIGKILL
    qm.start()
    assert "CHLAUTH(ADMIN.SVRCONN)" in mqsc(qm, "DISPLAY CHLAUTH('ADMIN.SVRCONN') MATCH(EXACT)\n")


def test_a_receivers_records_and_mcauser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """QM1's sender to QM2's receiver: QMGRMAP NOACCESS refuses it; once allowed, each
    message is put with the receiver's MCAUSER's authority (a queue it may not put to gets
    the message dead-lettered with 2035), with the context the message carries."""
    monkeypatch.setenv("FERRYMQ_HOME", str(tmp_path))
    enabled = ("--chlauth", "enabled")
    qm1, qm2 = setup_pair(tmp_path, create_args={"QM1": enabled, "QM2": enabled})
    try:
        qm2.add_user("partner", "partner-pw")
        mqsc(qm2, "ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(RCVR) MCAUSER('partner')\n"
                  "DEFINE QLOCAL(APP.OTHER)\n"
                  "SET AUTHREC PROFILE(APP.IN) OBJTYPE(QUEUE) PRINCIPAL('partner') AUTHADD(PUT,SETALL)\n"
                  "SET CHLAUTH('QM1.TO.QM2') TYPE(QMGRMAP) QMNAME('QM1') USERSRC(NOACCESS)\n")
        with connect("QM1") as c1:
            c1.open("TO.QM2.APP").put(b"for APP.IN", persistent=True)
            c1.open("APP.OTHER", object_q_mgr_name="QM2").put(b"for APP.OTHER", persistent=True)
        wait_for(lambda: "TYPE(QMGRMAP) QMNAME('QM1') USERSRC(NOACCESS)" in log_of_qm(qm2, "QM2"), 30.0)
        assert "event=channel_refused channel=QM1.TO.QM2" in log_of_qm(qm2, "QM2")
        mqsc(qm2, "SET CHLAUTH('QM1.TO.QM2') TYPE(QMGRMAP) QMNAME('QM1') USERSRC(CHANNEL) ACTION(REPLACE)\n")
        with connect("QM2") as c2:
            arrived = c2.open("APP.IN").get(wait=30.0)
            assert arrived.data == b"for APP.IN"
            assert arrived.md.user_identifier.strip() != "partner"  # the context it carried
            dead = c2.open("SYSTEM.DEAD.LETTER.QUEUE").get(wait=30.0)
            dlh = MQDLH.unpack_from(dead.data)
            assert (dlh.reason, dlh.dest_q_name.strip()) == (C.MQRC_NOT_AUTHORIZED, "APP.OTHER")
    finally:
        qm1.stop()
        qm2.stop()


def log_of_qm(qm: QueueManagerProcess, name: str) -> str:
    return (qm.home / "qmgrs" / name / "ferrymq.log").read_text()

