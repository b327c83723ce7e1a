"""pymqi's own test suite (release 1.12.11), unchanged, against a ferrymq queue manager.

The suite is not part of this project: it is looked for beside the checkout, in
``../shared/third_party/pymqi-tests`` (or wherever ``$FERRYMQ_PYMQI_TESTS`` says), and the
test skips when it is not there. ``import pymqi`` is made to give ``ferrymq.pymqi`` by a
``pymqi`` package written to a temporary directory put first on PYTHONPATH. A queue manager
is created and started on port 0 (``ferrymq create/start``, as a user would), given the
objects pymqi's tests expect a real IBM MQ queue manager to have (docs/pymqi.md), and the
suite runs under pytest in a subprocess. The pass count is printed (with
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
from ferrymq.tls import devcerts
from ferrymq.tls.keyrepo import KeyRepository

ROOT = Path(__file__).resolve().parents[2]
SUITE = Path(os.environ.get("FERRYMQ_PYMQI_TESTS", ROOT.parent / "shared" / "third_party" / "pymqi-tests"))
# Passing tests measured when the floor was set (docs/pymqi.md has the list of the others and why).
FLOOR = 102
APP_USER, APP_PASSWORD = "app", "app-pw"

SHIM = '''"""`import pymqi` gives ferrymq.pymqi (written by tests/integration/test_pymqi_suite.py)."""
import sys
import ferrymq.pymqi as _pymqi
for _name in ("CMQC", "CMQCFC", "CMQXC", "CMQZC"):
    sys.modules["pymqi." + _name] = getattr(_pymqi, _name)
sys.modules["pymqi"] = _pymqi
'''

# What pymqi's PCF tests find on an IBM MQ queue manager: a queue holding messages (INQUIRE_Q
# filtered on CURDEPTH > 0) and descriptions that start "IBM MQ" (filtered with LIKE); and
# the server-connection channel its config.py names (CH1), as its set-up notes ask for.
PREPARE = ("DEFINE QLOCAL(PYMQI.PRELOADED) DESCR('IBM MQ queue with messages, for pymqi filters') REPLACE\n"
           "DEFINE CHANNEL(CH1) CHLTYPE(SVRCONN) REPLACE\n")


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
    qm = QueueManagerProcess(tmp_path / "home", "MQTEST")
    qm.add_user(APP_USER, APP_PASSWORD)
    qm.start()
    try:
        qm.mqsc(PREPARE)
        conn = pymqi.connect("MQTEST", "SYSTEM.DEF.SVRCONN", qm.conn_name)
        for _ in range(2):
            conn.put1("PYMQI.PRELOADED", b"kept for INQUIRE_Q filters")
        conn.disconnect()
        tls_env = _tls_setup(tmp_path / "tls")
        report = tmp_path / "report.xml"
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(shim.parent), str(Path(ferrymq.__file__).parents[1])]),
                   PYMQI_TEST_QM_NAME="MQTEST", PYMQI_TEST_QM_HOST="127.0.0.1", PYMQI_TEST_QM_PORT=str(qm.port),
                   # the suite's credentials (test_mq80.py): an administrator, and the application user
                   # its test_queue_manager.py grants authorities to (docs/security.md)
                   PYMQI_TEST_QM_USER=ADMIN_USER, PYMQI_TEST_QM_PASSWORD=ADMIN_PASSWORD,
                   PYMQI_TEST_QM_APP_USER=APP_USER, PYMQI_TEST_QM_APP_PASSWORD=APP_PASSWORD, **tls_env)
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
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
