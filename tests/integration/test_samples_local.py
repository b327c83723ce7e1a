"""The samples as IBM's are used: against a queue manager started with ``ferrymq start``
from the same FERRYMQ_HOME, by name and with no address (local bindings, through the
queue manager's Unix socket), each a subprocess; reason codes shown with their names;
``amqsbcg ... | head`` ending without a traceback."""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from qm_process import add_admin, create_args_for_tests

pytestmark = pytest.mark.timeout(180)

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


class Home:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.env = dict(os.environ, FERRYMQ_HOME=str(path))
        self.env.pop("MQSERVER", None)

    def cli(self, *args: str, stdin: str = "", code: int = 0) -> subprocess.CompletedProcess[str]:
        p = subprocess.run([sys.executable, "-m", "ferrymq.cli", *create_args_for_tests(args)], env=self.env,
                           input=stdin, capture_output=True, text=True, timeout=60)
        assert p.returncode == code, f"ferrymq {' '.join(args)} -> {p.returncode}\n{p.stdout}\n{p.stderr}"
        return p

    def sample(self, name: str, *args: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(SAMPLES / name), *args], env={**self.env, **env}, input=stdin,
                              capture_output=True, text=True, timeout=60, check=False)


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    # A deep home: its socket's path is longer than a socket address may be.
    h = Home(tmp_path / ("deep-" * 12) / "home")
    h.cli("create", "QM1", "--port", "0")
    add_admin(h.path, "QM1")  # the TCP clients here authenticate as it (qm_process)
    h.cli("user", "add", "QM1", "alice", "--password-stdin", stdin="alice-pw\n")
    try:  # a set-up step that fails after start must not leave the queue manager running
        h.cli("start", "QM1")
        h.cli("mqsc", "QM1", stdin="DEFINE QLOCAL(APP.Q)\nDEFINE QLOCAL(SERVICE.Q)\n"
              "SET AUTHREC PROFILE(QM1) OBJTYPE(QMGR) PRINCIPAL('alice') AUTHADD(CONNECT)\n"
              "SET AUTHREC PROFILE(SERVICE.Q) OBJTYPE(QUEUE) PRINCIPAL('alice') AUTHADD(GET)\n")
        yield h
    finally:
        subprocess.run([sys.executable, "-m", "ferrymq.cli", "stop", "QM1", "--immediate"], env=h.env,
                       capture_output=True, timeout=60, check=False)
        for pid_file in h.path.glob("qmgrs/*/ferrymq.pid"):
            with contextlib.suppress(ValueError, OSError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)


def test_samples_connect_by_name_to_a_queue_manager_started_here(home: Home) -> None:
    sock = home.path / "qmgrs" / "QM1" / "qmgr.sock"
    assert len(os.fsencode(sock)) > 107 and stat.S_ISSOCK(sock.stat().st_mode)
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600  # this user's only

    done = home.sample("amqsput.py", "APP.Q", "QM1", stdin="first\nsecond\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == ["Sample AMQSPUT0 start", "target queue is APP.Q", "Sample AMQSPUT0 end"]
    done = home.sample("amqsget.py", "APP.Q", "QM1", "--wait", "0")
    assert done.stdout.splitlines()[1:3] == ["message <first>", "message <second>"], done.stdout + done.stderr

    # The queue manager knows the local peer as its OS user, whatever the application claims.
    log = (home.path / "qmgrs" / "QM1" / "ferrymq.log").read_text()
    connects = [line for line in log.splitlines() if "event=connect " in line and "appl='pymqi'" in line]
    assert connects and all(f"user='{getpass.getuser()}'" in line and "peer=local(" in line for line in connects)
    # ... and the log names the real hconn when it ends, not 0
    hconn = connects[0].split(" hconn=")[1].split()[0]
    assert hconn != "0" and f"hconn={hconn} requests=" in log

    done = home.sample("amqsput.py", "NO.SUCH.Q", "QM1", stdin="x\n")
    assert done.returncode == 1 and "MQOPEN ended with reason code 2085 (MQRC_UNKNOWN_OBJECT_NAME)" in done.stdout

    home.cli("stop", "QM1")
    assert not sock.exists()
    done = home.sample("amqsput.py", "APP.Q", "QM1", stdin="x\n")
    assert done.returncode == 1 and "MQCONNX ended with reason code 2059 (MQRC_Q_MGR_NOT_AVAILABLE)" in done.stdout
    done = home.sample("amqsput.py", "APP.Q", "QM1", "--conn", "localhost(notaport)", stdin="x\n")
    assert done.returncode == 1 and "MQCONNX ended with reason code 2277 (MQRC_CD_ERROR)" in done.stdout


def test_amqsech_honours_mqserver_channel_and_user(home: Home) -> None:
    port = json.loads(home.cli("list", "-o", "json").stdout)["queue_managers"][0]["port"]
    mqserver = f"DEV.APP.SVRCONN/TCP/127.0.0.1({port})"
    done = home.sample("amqsech.py", "SERVICE.Q", "QM1", "--wait", "0.2", "--user", "alice", MQSERVER=mqserver,
                       FERRYMQ_PASSWORD="alice-pw")
    assert done.returncode == 0 and "no more requests" in done.stdout, done.stdout + done.stderr
    done = home.sample("amqsech.py", "SERVICE.Q", "QM1", "--wait", "0", "--channel", "DEV.APP.SVRCONN",
                       MQSERVER="CH/TCP/127.0.0.1(1)")
    assert done.returncode == 1 and "2538 (MQRC_HOST_NOT_AVAILABLE)" in done.stdout
    log = (home.path / "qmgrs" / "QM1" / "ferrymq.log").read_text()
    assert "appl='amqsech' user='alice'" in log  # over TCP the user is the one given
    done = home.sample("amqsech.py", "SERVICE.Q", "QM1", "--wait", "0")  # no MQSERVER: bindings
    assert done.returncode == 0 and "no more requests" in done.stdout, done.stdout + done.stderr


def test_amqsbcg_into_head_ends_without_a_traceback(home: Home) -> None:
    home.sample("amqsput.py", "APP.Q", "QM1", stdin="".join(f"message number {i}\n" for i in range(300)))
    p = subprocess.run(f"{sys.executable} {SAMPLES / 'amqsbcg.py'} APP.Q QM1 | head -3", shell=True, env=home.env,
                       capture_output=True, text=True, timeout=60, check=False)
    assert p.stdout.splitlines() == ["AMQSBCG0 - starts here", "**********************", ""]
    assert "Traceback" not in p.stderr and "BrokenPipeError" not in p.stderr, p.stderr
