"""Channel authentication and status over TLS against a queue-manager process made by
``ferrymq create`` with CHLAUTH(ENABLED), certificates made by ``ferrymq tls
create-dev-certs``: SSLPEERMAP records mapping a client certificate's DN to an MCAUSER and
refusing others, over real sockets on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from qm_process import QueueManagerProcess

from ferrymq.client import ClientTLS, connect
from ferrymq.client.errors import NoMessageAvailable
from ferrymq.errors import MQError
from ferrymq.mq import constants as C

pytestmark = pytest.mark.timeout(120)

ANY = "ANY_TLS12_OR_HIGHER"
APP, APP_PASSWORD = "app", "app-pw"
READER, READER_PASSWORD = "reader", "reader-pw"
SETUP = """\
DEFINE QLOCAL(APP.Q)
DEFINE CHANNEL(APP.TLS) CHLTYPE(SVRCONN) SSLCIPH(ANY_TLS12_OR_HIGHER)
ALTER AUTHINFO(SYSTEM.DEFAULT.AUTHINFO.IDPWOS) AUTHTYPE(IDPWOS) FAILDLAY(0)
SET AUTHREC PROFILE(QM1) OBJTYPE(QMGR) GROUP('apps') AUTHADD(CONNECT,INQ)
SET AUTHREC PROFILE(APP.Q) OBJTYPE(QUEUE) PRINCIPAL('app') AUTHADD(GET,PUT,BROWSE,INQ)
SET AUTHREC PROFILE(APP.Q) OBJTYPE(QUEUE) PRINCIPAL('reader') AUTHADD(GET,BROWSE,INQ)
"""


@pytest.fixture
def qm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[QueueManagerProcess]:
    monkeypatch.setenv("FERRYMQ_HOME", str(tmp_path / "home"))
    qm = QueueManagerProcess(tmp_path / "home", "QM1", create_args=("--chlauth", "enabled"))
    qm.add_user(APP, APP_PASSWORD, "apps")
    qm.add_user(READER, READER_PASSWORD, "apps")
    made = json.loads(qm._cli("tls", "create-dev-certs", "QM1", "--client", "app", "--client", "stranger",
                              "--output", "json"))
    qm.repos = {m["client"]: m["key_repository"] for m in made["clients"]}  # type: ignore[attr-defined]
    qm.start()
    mqsc(qm, SETUP)
    yield qm
    qm.stop()


def mqsc(qm: QueueManagerProcess, script: str) -> str:
    out = qm.mqsc(script)
    assert "All valid MQSC commands were processed" in out, out
    return out


def tls_of(qm: QueueManagerProcess, client: str) -> ClientTLS:
    return ClientTLS(qm.repos[client], ANY, f"ibmwebspheremq{client}")  # type: ignore[attr-defined]


def reason_of(call: object) -> int:
    with pytest.raises(MQError) as info:
        call()  # type: ignore[operator]
    return info.value.reason


def test_sslpeermap_maps_a_certificates_dn_and_blocks_the_others(qm: QueueManagerProcess) -> None:
    addr = qm.conn_name
    # Only certificates the records name get in; app's runs as reader (it may read, not put).
    mqsc(qm, "SET CHLAUTH('APP.TLS') TYPE(ADDRESSMAP) ADDRESS('*') USERSRC(NOACCESS)\n"
             "SET CHLAUTH('APP.TLS') TYPE(SSLPEERMAP) SSLPEER('CN=app,O=ferrymq') "
             "SSLCERTI('CN=ferrymq development CA*') USERSRC(MAP) MCAUSER('reader')\n")
    with connect("QM1", addr, user=APP, password=APP_PASSWORD, channel="APP.TLS", tls=tls_of(qm, "app")) as c:
        assert reason_of(lambda: c.put1("APP.Q", b"no")) == C.MQRC_NOT_AUTHORIZED
        q = c.open("APP.Q", options=C.MQOO_INPUT_AS_Q_DEF)
        with pytest.raises(NoMessageAvailable):  # reader may get
            q.get(wait=0)
    assert reason_of(lambda: connect("QM1", addr, user=APP, password=APP_PASSWORD, channel="APP.TLS",
                                     tls=tls_of(qm, "stranger"))) == C.MQRC_NOT_AUTHORIZED
    log = (qm.home / "qmgrs" / "QM1" / "ferrymq.log").read_text()
    assert "TYPE(ADDRESSMAP) ADDRESS('*') USERSRC(NOACCESS)" in log, log[-2000:]
    # An issuer that does not match: the record does not apply, the back-stop refuses (SSLCERTI
    # is part of a record's key, as IBM's: the first record is removed by its SSLCERTI).
    mqsc(qm, "SET CHLAUTH('APP.TLS') TYPE(SSLPEERMAP) SSLPEER('CN=app,O=ferrymq') "
             "SSLCERTI('CN=ferrymq development CA*') ACTION(REMOVE)\n"
             "SET CHLAUTH('APP.TLS') TYPE(SSLPEERMAP) SSLPEER('CN=app,O=ferrymq') "
             "SSLCERTI('CN=someone else') USERSRC(MAP) MCAUSER('reader')\n")
    assert reason_of(lambda: connect("QM1", addr, user=APP, password=APP_PASSWORD, channel="APP.TLS",
                                     tls=tls_of(qm, "app"))) == C.MQRC_NOT_AUTHORIZED
    # A generic SSLPEER with USERSRC(CHANNEL) lets every certificate of the organisation run
    # as itself; a more specific NOACCESS one refuses the stranger.
    mqsc(qm, "SET CHLAUTH('APP.TLS') TYPE(SSLPEERMAP) SSLPEER('O=ferrymq') USERSRC(CHANNEL)\n"
             "SET CHLAUTH('APP.TLS') TYPE(SSLPEERMAP) SSLPEER('CN=stranger,O=ferrymq') USERSRC(NOACCESS)\n")
    with connect("QM1", addr, user=APP, password=APP_PASSWORD, channel="APP.TLS", tls=tls_of(qm, "app")) as c:
        c.put1("APP.Q", b"as app")
    assert reason_of(lambda: connect("QM1", addr, user=APP, password=APP_PASSWORD, channel="APP.TLS",
                                     tls=tls_of(qm, "stranger"))) == C.MQRC_NOT_AUTHORIZED
    runcheck = mqsc(qm, "DISPLAY CHLAUTH('APP.TLS') MATCH(RUNCHECK) ADDRESS('127.0.0.1') CLNTUSER('app') "
                        "SSLPEER('CN=stranger,O=ferrymq') SSLCERTI('CN=ferrymq development CA QM1,O=ferrymq')\n")
    assert "USERSRC(NOACCESS)" in runcheck and "CN=stranger" in runcheck, runcheck


def test_chstatus_shows_a_tls_client_connections_peer(qm: QueueManagerProcess) -> None:
    mqsc(qm, "DEFINE CHANNEL(APP.PLAIN) CHLTYPE(SVRCONN)\n"
             "SET CHLAUTH('APP.*') TYPE(ADDRESSMAP) ADDRESS('127.0.0.1') USERSRC(CHANNEL)\n")
    with connect("QM1", qm.conn_name, user=APP, password=APP_PASSWORD, channel="APP.TLS", tls=tls_of(qm, "app")), \
            connect("QM1", qm.conn_name, user=APP, password=APP_PASSWORD, channel="APP.PLAIN"):
        out = mqsc(qm, "DISPLAY CHSTATUS(APP.TLS) SSLPEER SSLCERTI SSLCIPH SECPROT\n")
        assert "CHLTYPE(SVRCONN)" in out and "STATUS(RUNNING)" in out and "CONNAME(127.0.0.1)" in out, out
        assert "SSLPEER(CN=app,O=ferrymq)" in out, out
        assert "SSLCERTI(CN=ferrymq development CA QM1,O=ferrymq)" in out, out
        assert "SECPROT(TLSV13)" in out and "SSLCIPH(TLS_AES_" in out, out
        plain = mqsc(qm, "DISPLAY CHSTATUS(APP.PLAIN) ALL\n")
        assert "SECPROT(NONE)" in plain and "SSLPEER( )" in plain, plain
        out = mqsc(qm, "DISPLAY CHSTATUS(*) WHERE(SECPROT EQ TLSV13)\n")
        assert "CHANNEL(APP.TLS)" in out and "APP.PLAIN" not in out, out
    # Gone with the connections.
    out = qm.mqsc("DISPLAY CHSTATUS(APP.TLS)\n", check=False)
    assert "CHANNEL(APP.TLS)" not in out and "STATUS(RUNNING)" not in out, out
