"""``ferrymq mqsc`` for real: a started queue manager (its own process, 127.0.0.1, port 0),
scripts on standard input and from files, JSON output, exit codes, and a terminal session
on a pseudo-terminal (prompt, Tab completion, history)."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from qm_process import add_admin, create_args_for_tests

pytestmark = pytest.mark.timeout(120)


class Home:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.env = dict(os.environ, FERRYMQ_HOME=str(path), HOME=str(path))

    def run(self, *args: str, stdin: str = "", code: int | None = 0) -> subprocess.CompletedProcess[str]:
        p = subprocess.run([sys.executable, "-m", "ferrymq.cli", *create_args_for_tests(args)], env=self.env,
                           input=stdin, capture_output=True, text=True, timeout=60)
        if code is not None:
            assert p.returncode == code, f"ferrymq {' '.join(args)} -> {p.returncode}\n{p.stdout}\n{p.stderr}"
        return p


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    h = Home(tmp_path / "home")
    h.run("create", "QM1", "--port", "0")
    add_admin(h.path, "QM1")  # the TCP clients here authenticate as it (qm_process)
    h.run("start", "QM1")
    yield h
    h.run("stop", "QM1", "--immediate", code=None)
    for pid_file in h.path.glob("qmgrs/*/ferrymq.pid"):
        with contextlib.suppress(ValueError, OSError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


SCRIPT = """\
* set up the order queues
DEFINE QLOCAL(ORDERS.IN) MAXDEPTH(1000) DESCR('Incoming orders') +
       DEFPSIST(YES)
DEFINE QLOCAL(ORDERS.OUT) LIKE(ORDERS.IN) DESCR('Outgoing')
DEFINE QALIAS(ORDERS) TARGET(ORDERS.IN)
DEFINE QMODEL(ORDERS.REPLY) DEFTYPE(TEMPDYN)
DISPLAY QLOCAL(ORDERS.*) MAXDEPTH DEFPSIST
"""


def test_script_on_stdin_runs_in_runmqsc_style(home: Home) -> None:
    p = home.run("mqsc", "QM1", stdin=SCRIPT)
    out = p.stdout
    assert "Starting MQSC for queue manager QM1." in out
    assert "     1 : DEFINE QLOCAL(ORDERS.IN) MAXDEPTH(1000) DESCR('Incoming orders') DEFPSIST(YES)" in out
    assert out.count("AMQ8006I: Queue created.") == 4
    assert "   QUEUE(ORDERS.OUT)                       TYPE(QLOCAL)" in out
    assert "   DEFPSIST(YES)                           MAXDEPTH(1000)" in out
    assert out.rstrip().endswith("5 MQSC commands read.\nNo commands have a syntax error.\n"
                                 "All valid MQSC commands were processed.")
    # the definitions outlive the session and a restart
    home.run("stop", "QM1")
    home.run("start", "QM1")
    again = home.run("mqsc", "QM1", stdin="DISPLAY QALIAS(ORDERS) TARGET\n")
    assert "TARGET(ORDERS.IN)" in again.stdout


def test_errors_give_exit_code_10_and_json_names_them(home: Home, tmp_path: Path) -> None:
    script = tmp_path / "bad.mqsc"
    script.write_text("DEFINE QLOCAL(X1)\nDEFINE QLOCAL(X1)\nDEFINE QLOCAL(X2) MAXDEPTH(lots)\nDELETE QLOCAL(X1)\n")
    p = home.run("mqsc", "QM1", "--file", str(script), code=10)
    assert "AMQ8150E: Object X1 already exists" in p.stdout and "AMQ8405E" in p.stdout
    assert "One command has a syntax error." in p.stdout and "One valid MQSC command could not be processed." in p.stdout
    doc = json.loads(home.run("mqsc", "QM1", "--output", "json", stdin="DELETE QLOCAL(X1)\nDISPLAY QLOCAL(X1)\n"
                              "PING QMGR\n", code=10).stdout)
    assert doc["ok"] is False and doc["read"] == 3 and doc["failed"] == 2 and doc["exit_code"] == 10
    assert doc["commands"][1]["reason_name"] == "MQRC_UNKNOWN_OBJECT_NAME"
    assert doc["commands"][2]["ok"] is True


def test_a_missing_parenthesis_is_a_syntax_error_the_summary_counts(home: Home) -> None:
    p = home.run("mqsc", "QM1", stdin="DEFINE QLOCAL(APP.Q2 MAXDEPTH(5)\n", code=10)
    assert "AMQ8405E" in p.stdout
    assert "(unbalanced parentheses: the '(' at position 14 is not closed before the '(' at position 30)" in p.stdout
    assert "AMQ8226E" not in p.stdout  # not an invalid name
    assert p.stdout.rstrip().endswith("One MQSC command read.\nOne command has a syntax error.\n"
                                      "All valid MQSC commands were processed.")
    doc = json.loads(home.run("mqsc", "QM1", "-o", "json", stdin="DEFINE QLOCAL(APP.Q2 MAXDEPTH(5)\n"
                              "DEFINE QLOCAL(APP.Q3\nDISPLAY QLOCAL(APP.Q2)\n", code=10).stdout)
    assert (doc["syntax_errors"], doc["failed"]) == (2, 1)
    assert "is not closed" in doc["commands"][1]["messages"][2]


def test_status_display_sees_an_application(home: Home) -> None:
    from ferrymq.client import connect

    home.run("mqsc", "QM1", stdin="DEFINE QLOCAL(WORK)\n")
    port = json.loads(home.run("list", "--output", "json").stdout)["queue_managers"][0]["port"]
    c = connect("QM1", f"127.0.0.1({port})", appl_name="worker-7")
    try:
        q = c.open("WORK")
        q.put(b"job")
        doc = json.loads(home.run("mqsc", "QM1", "-o", "json", stdin="DISPLAY QSTATUS(WORK) TYPE(QUEUE)\n"
                                  "DISPLAY QSTATUS(WORK) TYPE(HANDLE) ALL\n").stdout)
        queue = doc["commands"][0]["objects"][0]
        assert queue["CURDEPTH"] == 1 and queue["IPPROCS"] == 1 and queue["OPPROCS"] == 1  # JSON numbers
        assert queue["LPUTDATE"] != ""
        handles = doc["commands"][1]["objects"]
        assert [h["APPLTAG"] for h in handles] == ["worker-7"]
    finally:
        c.disconnect()


def test_unreachable_queue_manager_is_exit_20(home: Home) -> None:
    home.run("stop", "QM1")
    p = home.run("mqsc", "QM1", stdin="PING QMGR\n", code=20)
    assert "AMQ8146E" in p.stderr


def test_unknown_queue_manager_and_malformed_conn_name_are_exit_20_without_traceback(tmp_path: Path) -> None:
    h = Home(tmp_path / "empty")
    p = h.run("mqsc", "NOPE", stdin="DIS QMGR\n", code=20)
    assert "Traceback" not in p.stderr
    assert p.stderr.startswith("ferrymq: error[qmgr_unknown]: AMQ8118E: queue manager NOPE does not exist")
    doc = json.loads(h.run("mqsc", "NOPE", "-o", "json", stdin="DIS QMGR\n", code=20).stdout)
    assert doc["error"]["rule"] == "qmgr_unknown" and doc["error"]["exit_code"] == 20
    p = h.run("mqsc", "QM1", "--conn", "localhost(notaport)", stdin="DIS QMGR\n", code=20)
    assert "Traceback" not in p.stderr
    assert p.stderr.startswith("ferrymq: error[conn_name_malformed]: connection name 'localhost(notaport)' is "
                               "malformed")
    assert "host(port)" in p.stderr and "MQRC_CD_ERROR (2277)" in p.stderr


def read_until(fd: int, marker: bytes, seen: bytearray) -> bytes:
    deadline = time.monotonic() + 30
    while marker not in seen:
        assert time.monotonic() < deadline, f"{marker!r} never came; got {bytes(seen)!r}"
        ready, _, _ = select.select([fd], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            seen.extend(chunk)
    found = bytes(seen)
    del seen[:]
    return found


def test_terminal_session_with_prompt_completion_and_history(home: Home) -> None:
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.execve(sys.executable, [sys.executable, "-m", "ferrymq.cli", "mqsc", "QM1"], home.env)
    seen = bytearray()
    try:
        read_until(fd, b"QM1> ", seen)
        os.write(fd, b"DEFINE QLOCAL(TTY.Q)\r")
        assert b"AMQ8006I" in read_until(fd, b"QM1> ", seen)
        os.write(fd, b"DISP\t")  # Tab completes the verb
        assert b"DISPLAY " in read_until(fd, b"DISPLAY ", seen)
        os.write(fd, b"QLOCAL(TTY.Q) MAXD\t")
        read_until(fd, b"MAXDEPTH", seen)
        os.write(fd, b"\r")
        assert b"MAXDEPTH(5000)" in read_until(fd, b"QM1> ", seen)
        os.write(fd, b"\x04")  # end of input
        assert b"2 MQSC commands read." in read_until(fd, b"processed.", seen)
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    assert "DEFINE QLOCAL(TTY.Q)" in (home.path / ".ferrymq_mqsc_history").read_text()
