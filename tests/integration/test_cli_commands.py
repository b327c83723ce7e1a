"""The ``ferrymq`` control commands, run for real: each call is a subprocess with
FERRYMQ_HOME in a tmp dir; servers listen on 127.0.0.1 port 0 and run detached; clients
talk to them over TCP. Teardown kills (SIGKILL, by the pid the server recorded) anything
a failed test left running.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from qm_process import add_admin, create_args_for_tests

from ferrymq.client import NoMessageAvailable, connect

pytestmark = pytest.mark.timeout(120)

QUEUE = "SYSTEM.DEFAULT.LOCAL.QUEUE"


class Cli:
    def __init__(self, home: Path) -> None:
        self.home = home

    def run(self, *args: str, code: int | None = 0) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, FERRYMQ_HOME=str(self.home))
        p = subprocess.run([sys.executable, "-m", "ferrymq.cli", *create_args_for_tests(args)], env=env,
                           capture_output=True, text=True, timeout=60)
        if code is not None:
            assert p.returncode == code, f"ferrymq {' '.join(args)} -> {p.returncode}\n{p.stdout}\n{p.stderr}"
        if args[0] == "create" and p.returncode == 0 and "--home" not in args:
            add_admin(self.home, args[1])  # the clients here authenticate as it (conftest.py)
        return p

    def json(self, *args: str, code: int = 0) -> dict[str, Any]:
        p = self.run(*args, "--output", "json", code=code)
        doc = json.loads(p.stdout)
        assert doc["ok"] is (code == 0)
        return doc  # type: ignore[no-any-return]

    def status(self, name: str) -> dict[str, Any]:
        rows = self.json("list")["queue_managers"]
        return next(r for r in rows if r["name"] == name)

    def kill_leftovers(self) -> None:
        for pid_file in self.home.glob("qmgrs/*/ferrymq.pid"):
            with contextlib.suppress(ValueError, OSError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Cli]:
    c = Cli(tmp_path / "home")
    yield c
    c.kill_leftovers()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_dead(pid: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while alive(pid):
        assert time.monotonic() < deadline, f"pid {pid} still alive"
        time.sleep(0.02)


# -- the life of a queue manager ---------------------------------------------------------------


def test_create_start_put_get_stop_restart_delete(cli: Cli) -> None:
    created = cli.json("create", "QM1", "--port", "0")
    assert created["name"] == "QM1" and created["port"] == 0 and created["host"] == "127.0.0.1"
    assert (cli.home / "qmgrs" / "QM1" / "config.json").is_file()
    assert cli.status("QM1")["status"] == "Ended immediately"  # created, never started (dspmq's word)

    started = cli.json("start", "QM1")
    port, pid = started["port"], started["pid"]
    assert started["status"] == "Running" and port > 0 and alive(pid)
    assert started["event_loop"] == "uvloop"  # installed with ferrymq on Linux: the server runs on it
    row = cli.status("QM1")
    assert (row["status"], row["pid"], row["port"], row["configured_port"]) == ("Running", pid, port, 0)
    assert row["event_loop"] == "uvloop"
    assert "QM1" in cli.run("list").stdout and str(port) in cli.run("list").stdout

    with connect("QM1", f"127.0.0.1({port})", timeout=10) as c, c.open(QUEUE) as q:
        q.put(b"kept", persistent=True)
        q.put(b"lost", persistent=False)
        q.put(b"got", persistent=True)
        assert q.depth() == 3

    stopped = cli.json("stop", "QM1")
    assert stopped["status"] == "Ended normally"
    wait_dead(pid)
    row = cli.status("QM1")
    assert row["status"] == "Ended normally" and row["pid"] is None and row["last_port"] == port

    # A restart replays the journal: persistent messages are there, non-persistent ones are not.
    # (On the standard event loop this time: both loops serve the same queue manager.)
    again = cli.json("start", "QM1", "--event-loop", "asyncio")
    assert again["event_loop"] == "asyncio" and cli.status("QM1")["event_loop"] == "asyncio"
    with connect("QM1", f"127.0.0.1({again['port']})", timeout=10) as c, c.open(QUEUE) as q:
        assert [m.data for m in q.messages()] == [b"kept", b"got"]
        with pytest.raises(NoMessageAvailable):
            q.get()

    assert cli.json("stop", "QM1", "--immediate")["status"] == "Ended immediately"
    wait_dead(again["pid"])
    deleted = cli.json("delete", "QM1")
    assert deleted["deleted"] is True and not (cli.home / "qmgrs" / "QM1").exists()
    assert cli.json("list")["queue_managers"] == []
    assert "No queue managers" in cli.run("list").stdout


def test_text_output_names_the_port_and_status(cli: Cli) -> None:
    assert "created" in cli.run("create", "QM2", "--port", "0").stdout
    out = cli.run("start", "QM2").stdout
    port = cli.status("QM2")["port"]
    assert f"127.0.0.1({port})" in out
    listing = cli.run("list").stdout
    assert "Running" in listing and str(port) in listing
    assert "ended normally" in cli.run("stop", "QM2").stdout
    assert "Ended normally" in cli.run("list").stdout


def test_kill_9_shows_ended_unexpectedly_and_restart_recovers(cli: Cli) -> None:
    cli.json("create", "QMK", "--port", "0")
    first = cli.json("start", "QMK")
    with connect("QMK", f"127.0.0.1({first['port']})", timeout=10) as c:
        c.put1(QUEUE, b"survives", persistent=True)
    os.kill(first["pid"], signal.SIGKILL)
    wait_dead(first["pid"])
    row = cli.status("QMK")
    assert row["status"] == "Ended unexpectedly" and row["last_pid"] == first["pid"]
    cli.run("stop", "QMK", code=40)

    second = cli.json("start", "QMK")
    with connect("QMK", f"127.0.0.1({second['port']})", timeout=10) as c, c.open(QUEUE) as q:
        assert q.get().data == b"survives"
    cli.json("stop", "QMK")


def test_quiesce_waits_for_clients_and_immediate_cuts_them(cli: Cli) -> None:
    cli.json("create", "QMQ", "--port", "0")
    started = cli.json("start", "QMQ")
    client = connect("QMQ", f"127.0.0.1({started['port']})", timeout=10)
    try:
        # The connected client holds a quiescing queue manager up: stop gives up waiting.
        err = cli.json("stop", "QMQ", "--wait", "0.5", code=49)["error"]
        assert err["rule"] == "stop_timeout"
        assert cli.status("QMQ")["status"] == "Quiescing"
        # The port is closed to new connections while quiescing.
        with pytest.raises(OSError), socket.create_connection(("127.0.0.1", started["port"]), timeout=2):
            pass
        assert cli.json("stop", "QMQ", "--immediate")["status"] == "Ended immediately"
        wait_dead(started["pid"])
    finally:
        with contextlib.suppress(Exception):
            client.disconnect()


def test_foreground_start_ends_on_sigint(cli: Cli) -> None:
    cli.json("create", "QMF", "--port", "0")
    env = dict(os.environ, FERRYMQ_HOME=str(cli.home))
    proc = subprocess.Popen([sys.executable, "-m", "ferrymq.cli", "start", "QMF", "--foreground"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "running on 127.0.0.1(" in line, line + proc.stderr.read() if proc.stderr else line
        row = cli.status("QMF")
        assert row["status"] == "Running" and row["pid"] == proc.pid
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
        assert proc.returncode == 0
        assert "ended normally" in out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert cli.status("QMF")["status"] == "Ended normally"


# -- refusals: each names its rule and has its exit code ---------------------------------------


def test_unknown_queue_manager(cli: Cli) -> None:
    for cmd in ("start", "stop", "delete", "list"):
        err = cli.json(cmd, "NOPE", code=16)["error"]
        assert err["rule"] == "qmgr_unknown" and "NOPE" in err["message"]
    assert "does not exist" in cli.run("start", "NOPE", code=16).stderr


def test_create_refusals(cli: Cli) -> None:
    cli.json("create", "QM1", "--port", "0")
    assert cli.json("create", "QM1", code=8)["error"]["rule"] == "qmgr_exists"
    for bad in ("bad/name", "..", "x" * 49, "sp ace"):
        assert cli.json("create", bad, code=72)["error"]["rule"] == "qmgr_name_invalid"
    assert cli.json("create", "QM2", "--port", "70000", code=2)["error"]["rule"] == "port_invalid"
    assert not (cli.home / "qmgrs" / "QM2").exists()


def test_start_or_delete_while_running(cli: Cli) -> None:
    cli.json("create", "QM1", "--port", "0")
    pid = cli.json("start", "QM1")["pid"]
    err = cli.json("start", "QM1", code=5)["error"]
    assert err["rule"] == "qmgr_running" and err["pid"] == pid
    err = cli.json("delete", "QM1", code=5)["error"]
    assert err["rule"] == "qmgr_running" and (cli.home / "qmgrs" / "QM1" / "journal").is_dir()
    # The server itself refuses a second copy too (the run lock), whatever the launcher saw.
    p = cli.run("start", "QM1", "--foreground", code=5)
    assert "already running" in p.stderr
    cli.json("stop", "QM1")
    cli.run("stop", "QM1", code=40)


def test_port_in_use_names_the_port(cli: Cli) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        cli.json("create", "QMP", "--port", str(port))
        err = cli.json("start", "QMP", code=10)["error"]
        assert err["rule"] == "port_in_use" and err["port"] == port and str(port) in err["message"]
        assert f"port {port}" in cli.run("start", "QMP", code=10).stderr
    assert cli.status("QMP")["status"] == "Ended immediately"  # it never ran
    assert not (cli.home / "qmgrs" / "QMP" / "ferrymq.pid").exists()


def test_damaged_journal_shows_the_store_error(cli: Cli) -> None:
    cli.json("create", "QMD", "--port", "0")
    journal = cli.home / "qmgrs" / "QMD" / "journal"
    (seg,) = journal.glob("0000000001-*.seg")
    seg.rename(journal / "0000000002-0000000002.seg")  # segment 1 is gone: the store refuses to guess
    err = cli.json("start", "QMD", code=23)["error"]
    assert err["rule"] == "journal_damaged" and err["error_type"] == "StoreError"
    assert "segment 1 is missing" in err["message"]
    assert "StoreError" in cli.run("start", "QMD", code=23).stderr


def test_damaged_config(cli: Cli) -> None:
    cli.json("create", "QMC", "--port", "0")
    (cli.home / "qmgrs" / "QMC" / "config.json").write_text("{ not json")
    assert cli.json("start", "QMC", code=23)["error"]["rule"] == "data_damaged"
    row = cli.status("QMC")
    assert row["status"] == "Damaged" and "config.json" in row["error"]
    cli.json("delete", "QMC")  # a damaged one can still be deleted


def test_help_everywhere(cli: Cli) -> None:
    for cmd in ((), ("create",), ("start",), ("stop",), ("list",), ("delete",)):
        p = cli.run(*cmd, "--help")
        assert "Usage:" in p.stdout and "--output" in p.stdout
    assert "--notify-fd" not in cli.run("start", "--help").stdout


# -- ports: one owner per port in a home, and a way to change one ------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_create_refuses_a_port_another_queue_manager_owns_and_alter_moves_one(cli: Cli) -> None:
    port = free_port()
    cli.run("create", "QM1", "--port", str(port))
    refused = cli.run("create", "QM2", "--port", str(port), code=10)
    assert refused.stderr.startswith(f"ferrymq: error[port_in_use]: port {port} on 127.0.0.1 belongs to queue "
                                     "manager QM1")
    assert not (cli.home / "qmgrs" / "QM2").exists()
    assert cli.json("create", "QM2", "--port", str(port), code=10)["error"]["holder"] == "QM1"
    cli.run("create", "QM2", "--port", "0")
    assert cli.json("alter", "QM2", "--port", str(port), code=10)["error"]["holder"] == "QM1"
    other = free_port()
    altered = cli.json("alter", "QM2", "--port", str(other), "--host", "localhost")
    assert (altered["host"], altered["port"], altered["previous"]["port"]) == ("localhost", other, 0)
    row = cli.status("QM2")
    assert (row["host"], row["configured_port"]) == ("localhost", other)
    assert cli.run("alter", "QM2", code=2).stderr.startswith("ferrymq: error[option_missing]")
    assert cli.run("alter", "NOPE", "--port", "0", code=16)


def test_start_on_a_taken_port_advises_a_command_that_works(cli: Cli) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        cli.run("create", "QM1", "--port", str(port))
        failed = cli.run("start", "QM1", code=10)
        assert "is in use by another process" in failed.stderr
        assert "'ferrymq alter QM1 --port N'" in failed.stderr
        cli.run("alter", "QM1", "--port", "0")  # the advice, followed
        started = cli.json("start", "QM1")
        assert started["port"] not in (0, port)
        refused = cli.run("alter", "QM1", "--port", "0", code=5)
        assert "stop it first" in refused.stderr
        # while it runs, the port it listens on is owned too
        assert cli.json("create", "QM2", "--port", str(started["port"]), code=10)["error"]["holder"] == "QM1"
        cli.run("stop", "QM1", "--immediate")


def test_home_is_taken_before_or_after_the_command(cli: Cli, tmp_path: Path) -> None:
    other = tmp_path / "other"
    cli.run("create", "QM9", "--port", "0", "--home", str(other))
    assert (other / "qmgrs" / "QM9" / "config.json").is_file() and not (cli.home / "qmgrs" / "QM9").exists()
    assert [r["name"] for r in cli.json("list", "--home", str(other))["queue_managers"]] == ["QM9"]
    assert [r["name"] for r in cli.json("--home", str(other), "list")["queue_managers"]] == ["QM9"]
    assert cli.json("--home", str(cli.home), "list", "--home", str(other))["queue_managers"][0]["name"] == "QM9"
    p = cli.run("mqsc", "QM9", "--home", str(cli.home), code=20)
    assert f"no {cli.home / 'qmgrs' / 'QM9'}" in p.stderr
    cli.run("delete", "QM9", "--home", str(other))


def test_start_after_a_crash_tells_what_it_recovered(cli: Cli) -> None:
    cli.run("create", "QM1", "--port", "0")
    started = cli.json("start", "QM1")
    assert (started["recovery"]["after"], started["recovery"]["messages"]) == ("create", 0)
    with connect("QM1", f"127.0.0.1({started['port']})", timeout=10) as c, c.open(QUEUE) as q:
        for i in range(20):
            q.put(b"m%d" % i, persistent=True)
    os.kill(started["pid"], signal.SIGKILL)
    wait_dead(started["pid"])
    again = cli.run("start", "QM1")
    assert "recovered after a crash: 20 messages" in again.stderr and "0 in-doubt units of work" in again.stderr
    log = (cli.home / "qmgrs" / "QM1" / "ferrymq.log").read_text()
    assert re.search(r"event=recovered qmgr=QM1 after=crash seconds=\S+ records=\d+ messages=20 in_doubt=0", log)
    cli.run("stop", "QM1", "--immediate")
