"""pymqi's own test suite (release 1.12.11), unchanged, against a ferrymq queue manager.

The suite is not part of this project: it is looked for beside the checkout, in
``../shared/third_party/pymqi-tests`` (or wherever ``$FERRYMQ_PYMQI_TESTS`` says), and the
test skips when it is not there. ``import pymqi`` is made to give ``ferrymq.pymqi`` by a
``pymqi`` package written to a temporary directory put first on PYTHONPATH. A queue manager
is created and started on port 0 (``ferrymq create/start``, as a user would), configured as
pymqi's own CI configures IBM MQ and given the objects pymqi's tests expect a real IBM MQ
queue manager to have (docs/pymqi.md), and the suite runs under pytest in a subprocess. The pass count is printed (with
``FERRYMQ_PYMQI_SHOW=N`` also the last N characters of the suite's output); the test fails when it
drops below FLOOR or when any of the suite's files fails to import. Its requirements come
from the project's ``dev`` extra (``ddt``).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from qm_process import ADMIN_PASSWORD, ADMIN_USER, QueueManagerProcess

import ferrymq
import ferrymq.pymqi as pymqi
from ferrymq.client.session import PASSWORD_ENV, USER_ENV
from ferrymq.tls import devcerts
from ferrymq.tls.keyrepo import KeyRepository

ROOT = Path(__file__).resolve().parents[2]
SUITE = Path(os.environ.get("FERRYMQ_PYMQI_TESTS", ROOT.parent / "shared" / "third_party" / "pymqi-tests"))
# Passing tests measured when the floor was set: every test the suite runs (docs/pymqi.md lists
# the 11 it skips on any queue manager, and why).
FLOOR = 106
APP_USER, APP_PASSWORD = "app", "app-pw"

SHIM = '''"""`import pymqi` gives ferrymq.pymqi (written by tests/integration/test_pymqi_suite.py)."""
import sys
import ferrymq.pymqi as _pymqi
for _name in ("CMQC", "CMQCFC", "CMQXC", "CMQZC"):
    sys.modules["pymqi." + _name] = getattr(_pymqi, _name)
sys.modules["pymqi"] = _pymqi
'''

# What pymqi's PCF tests find on an IBM MQ queue manager: a queue holding messages (INQUIRE_Q
# filtered on CURDEPTH > 0) and descriptions that start "IBM MQ" (filtered with LIKE).
PREPARE = "DEFINE QLOCAL(PYMQI.PRELOADED) DESCR('IBM MQ queue with messages, for pymqi filters') REPLACE\n"
# pymqi's own CI runs its suite against IBM's developer image (its tox.ini, environment
# "docker") with these settings, and that image's developer configuration, made here the same
# way: CONNAUTH with CHCKCLNT(REQDADM) (ferrymq's default too), channel authentication records
# on, a back-stop record refusing every channel, DEV.ADMIN.SVRCONN for administrators with a
# password, DEV.APP.SVRCONN running as "app" (a member of mqclient, which may connect); and
# the "mqm" user test_tls.py maps its channel's client to.
DEV_CONFIG = """\
DEFINE CHANNEL(DEV.ADMIN.SVRCONN) CHLTYPE(SVRCONN) REPLACE
DEFINE CHANNEL(DEV.APP.SVRCONN) CHLTYPE(SVRCONN) MCAUSER('app') REPLACE
SET CHLAUTH('*') TYPE(ADDRESSMAP) ADDRESS('*') USERSRC(NOACCESS) ACTION(REPLACE)
SET CHLAUTH('DEV.APP.SVRCONN') TYPE(ADDRESSMAP) ADDRESS('*') USERSRC(CHANNEL) ACTION(REPLACE)
SET CHLAUTH('DEV.ADMIN.SVRCONN') TYPE(BLOCKUSER) USERLIST('nobody') ACTION(REPLACE)
SET CHLAUTH('DEV.ADMIN.SVRCONN') TYPE(ADDRESSMAP) ADDRESS('*') USERSRC(CHANNEL) CHCKCLNT(REQUIRED) ACTION(REPLACE)
SET AUTHREC PROFILE(MQTEST) OBJTYPE(QMGR) GROUP('mqclient') AUTHADD(CONNECT,INQ)
SET AUTHREC PROFILE('DEV.**') OBJTYPE(QUEUE) GROUP('mqclient') AUTHADD(BROWSE,GET,INQ,PUT)
"""
SUITE_ENV = {"PYMQI_TEST_QM_NAME": "MQTEST", "PYMQI_TEST_QM_HOST": "127.0.0.1",
             "PYMQI_TEST_QM_CHANNEL": "DEV.ADMIN.SVRCONN", "PYMQI_TEST_QM_APP_CHANNEL": "DEV.APP.SVRCONN",
             "PYMQI_TEST_QM_CONN_AUTH_USE_PW": "REQUIRED",
             # the suite's credentials: an administrator, and the application user
             "PYMQI_TEST_QM_USER": ADMIN_USER, "PYMQI_TEST_QM_PASSWORD": ADMIN_PASSWORD,
             "PYMQI_TEST_QM_APP_USER": APP_USER, "PYMQI_TEST_QM_APP_PASSWORD": APP_PASSWORD}


def _outcomes(report: Path) -> dict[str, list[str]]:
    """Test ids by outcome (passed, failed, error, skipped) from a JUnit report; a file that
    did not import is also listed under "unimportable"."""
    out: dict[str, list[str]] = {"passed": [], "failed": [], "error": [], "skipped": [], "unimportable": []}
    for case in ET.parse(report).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        found = next((child for child in case if child.tag in ("failure", "error", "skipped")), None)
        outcome = "passed" if found is None else {"failure": "failed"}.get(found.tag, found.tag)
        out[outcome].append(name)
        if found is not None and found.tag == "error" and "collection failure" in (found.get("message") or ""):
            out["unimportable"].append(name)
    return out


def _tls_setup(where: Path) -> dict[str, str]:
    """test_tls.py's set-up, which its docstring makes with runmqakm: a key repository for
    the queue manager (label mqtest, CN=mqtest; the test points SSLKEYR and CERTLABL at it)
    and one for the client (label client, CN=client, the channel's SSLPEER), each trusting the
    other's CA; the suite then runs its TLS test (PYMQI_TEST_TLS_SKIP=0)."""
    ca = devcerts.new_ca("CN=pymqi suite CA")
    dirs = {"qmgr": where / "qmgr", "client": where / "client"}
    for side, label in (("qmgr", "mqtest"), ("client", "client")):
        repo = KeyRepository(str(dirs[side] / label))
        devcerts.write_signers(repo, ca)
        devcerts.write_personal(repo, label, devcerts.issue(ca, f"CN={label}"), ca)
    return {"PYMQI_TEST_TLS_SKIP": "0", "PYMQI_TEST_TLS_KEY_REPO_LOCATION_QMGR": str(dirs["qmgr"]),
            "PYMQI_TEST_TLS_KEY_REPO_LOCATION_CLIENT": str(dirs["client"])}


def test_pymqi_own_suite_passes(tmp_path: Path) -> None:
    if not (SUITE / "test_base_api.py").is_file():
        pytest.skip(f"pymqi's test suite is not at {SUITE} (set FERRYMQ_PYMQI_TESTS to run it)")
    if importlib.util.find_spec("ddt") is None:
        pytest.skip("pymqi's tests need ddt: pip install -e '.[dev]'")
    shim = tmp_path / "shim" / "pymqi"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text(SHIM)
    qm = QueueManagerProcess(tmp_path / "home", "MQTEST", create_args=("--chlauth", "enabled"))
    qm.add_user(APP_USER, APP_PASSWORD, "mqclient")
    qm.add_user("mqm", "mqm-pw", "mqm")
    qm.start()
    try:
        qm.mqsc(DEV_CONFIG + PREPARE)
        conn = pymqi.connect("MQTEST", "DEV.ADMIN.SVRCONN", qm.conn_name, ADMIN_USER, ADMIN_PASSWORD)
        for _ in range(2):
            conn.put1("PYMQI.PRELOADED", b"kept for INQUIRE_Q filters")
        conn.disconnect()
        tls_env = _tls_setup(tmp_path / "tls")
        report = tmp_path / "report.xml"
        # No credentials from the environment ($FERRYMQ_USER, set for the project's tests): the
        # suite's connects "without credentials" must be just that.
        env = {k: v for k, v in os.environ.items() if k not in (USER_ENV, PASSWORD_ENV)}
        env.update(PYTHONPATH=os.pathsep.join([str(shim.parent), str(Path(ferrymq.__file__).parents[1])]),
                   PYMQI_TEST_QM_PORT=str(qm.port), **SUITE_ENV, **tls_env)
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-o", "addopts=",
                              "--continue-on-collection-errors", f"--junitxml={report}", "--rootdir", str(SUITE),
                              str(SUITE)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=270)
    finally:
        qm.stop()
    got = _outcomes(report)
    total = sum(len(got[k]) for k in ("passed", "failed", "error", "skipped"))
    print(f"\npymqi's own suite: {len(got['passed'])} of {total} pass ({len(got['failed'])} fail, "
          f"{len(got['error'])} errors, {len(got['skipped'])} skipped by the suite itself)")
    if os.environ.get("FERRYMQ_PYMQI_SHOW"):
        print(run.stdout[-int(os.environ["FERRYMQ_PYMQI_SHOW"]):])
    for outcome in ("failed", "error"):
        print("\n".join(f"  {outcome}: {name}" for name in got[outcome]))
    assert not got["unimportable"], run.stdout[-4000:]
    assert len(got["passed"]) >= FLOOR, run.stdout[-4000:]
