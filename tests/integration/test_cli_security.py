"""Safe defaults of the ``ferrymq`` control commands, run for real (subprocesses with
FERRYMQ_HOME in a tmp dir): a queue manager's files stay private under a loose umask, and
a listener beyond loopback is refused unless explicitly allowed, then warned about."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from qm_process import add_admin, create_args_for_tests

from ferrymq.client import connect

pytestmark = pytest.mark.timeout(120)

QUEUE = "SYSTEM.DEFAULT.LOCAL.QUEUE"
FLAG = "--allow-unauthenticated-remote"


class Cli:
    def __init__(self, home: Path) -> None:
        self.home = home

    def run(self, *args: str, code: int = 0, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, FERRYMQ_HOME=str(self.home))
        p = subprocess.run([sys.executable, "-m", "ferrymq.cli", *create_args_for_tests(args)], env=env,
                           capture_output=True, text=True, timeout=60, input=stdin,
                           preexec_fn=lambda: os.umask(0o022))  # a loose umask, as on many systems
        assert p.returncode == code, f"ferrymq {' '.join(args)} -> {p.returncode}\n{p.stdout}\n{p.stderr}"
        if args[0] == "create" and p.returncode == 0:
            add_admin(self.home, args[1])  # the clients here authenticate as it (conftest.py)
        return p

    def json(self, *args: str, code: int = 0) -> tuple[dict[str, Any], str]:
        p = self.run(*args, "--output", "json", code=code)
        return json.loads(p.stdout), p.stderr

    def kill_leftovers(self) -> None:
        for pid_file in self.home.glob("qmgrs/*/ferrymq.pid"):
            with contextlib.suppress(ValueError, OSError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Cli]:
    c = Cli(tmp_path / "home")
    yield c
    c.kill_leftovers()


def open_to_others(root: Path) -> list[str]:
    """Every path under ``root`` (itself included) readable, writable or searchable by others."""
    out = []
    for path in [root, *root.rglob("*")]:
        st = path.lstat()
        mode = stat.S_IMODE(st.st_mode)
        want = 0o700 if stat.S_ISDIR(st.st_mode) else 0o600
        if not stat.S_ISLNK(st.st_mode) and (mode | want) != want:
            out.append(f"{path.relative_to(root)} {mode:o}")
    return out


def test_every_path_stays_private_under_umask_022(cli: Cli) -> None:
    cli.json("create", "QM1", "--port", "0")
    qm = cli.home / "qmgrs" / "QM1"
    assert open_to_others(cli.home / "qmgrs") == []
    for run in range(2):  # a restart replays, rewrites status and appends to the log
        started, _ = cli.json("start", "QM1")
        with connect("QM1", f"127.0.0.1({started['port']})", timeout=10) as c, c.open(QUEUE) as q:
            for i in range(20):
                q.put(b"body %d" % i * 100, persistent=True)
            for _ in range(10 + run * 10):
                q.get()
        assert (qm / "qmgr.sock").exists() and open_to_others(cli.home / "qmgrs") == []
        cli.json("stop", "QM1")
        assert open_to_others(cli.home / "qmgrs") == []
    names = {p.name for p in qm.iterdir()}
    assert {"config.json", "journal", "status.json", "ferrymq.log", "run.lock"} <= names


def test_a_loose_data_directory_is_tightened_at_start_and_logged(cli: Cli) -> None:
    cli.json("create", "QM1", "--port", "0")
    qm = cli.home / "qmgrs" / "QM1"
    for p in [qm, *qm.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)  # as made before files were private
    assert open_to_others(qm) != []
    cli.json("start", "QM1")
    cli.json("stop", "QM1")
    assert open_to_others(qm) == []
    log = (qm / "ferrymq.log").read_text()
    assert log.count("event=data_dir_tightened") == 1


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.7", "example.com"])
def test_create_beyond_loopback_is_refused_without_the_override(cli: Cli, host: str) -> None:
    doc, _ = cli.json("create", "QM1", "--host", host, "--port", "0", code=2)
    err = doc["error"]
    assert err["rule"] == "remote_bind_unauthenticated" and err["exit_code"] == 2
    assert FLAG in err["message"] and "CHCKCLNT(REQDADM)" in err["message"] and "TLS" in err["message"]
    assert not (cli.home / "qmgrs" / "QM1").exists()
    text = cli.run("create", "QM1", "--host", host, code=2)
    assert "error[remote_bind_unauthenticated]" in text.stderr and FLAG in text.stderr


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_loopback_hosts_need_no_override(cli: Cli, host: str) -> None:
    doc, err = cli.json("create", "QM1", "--host", host, "--port", "0")
    assert doc["host"] == host and doc["warnings"] == [] and err == ""


def test_alter_beyond_loopback_needs_the_override_and_start_warns_every_time(cli: Cli) -> None:
    cli.json("create", "QM1", "--port", "0")
    doc, _ = cli.json("alter", "QM1", "--host", "0.0.0.0", code=2)
    assert doc["error"]["rule"] == "remote_bind_unauthenticated"
    config = json.loads((cli.home / "qmgrs" / "QM1" / "config.json").read_text())
    assert config["host"] == "127.0.0.1" and config["allow_unauthenticated_remote"] is False  # unchanged

    doc, err = cli.json("alter", "QM1", "--host", "0.0.0.0", FLAG)
    assert doc["host"] == "0.0.0.0" and doc["allow_unauthenticated_remote"] is True
    assert "WARNING" in err and "TLS OFF" in err and "CHCKCLNT(REQDADM)" in err
    for _ in range(2):
        # Port 0 on the wildcard address, for the length of one start and stop.
        started, err = cli.json("start", "QM1")
        assert "WARNING" in err and "TLS OFF" in err and started["warnings"] == [err.strip().removeprefix("ferrymq: ")]
        assert "CHCKCLNT(REQDADM)" in err  # read from the running queue manager
        cli.json("stop", "QM1", "--immediate")
    text_log = (cli.home / "qmgrs" / "QM1" / "ferrymq.log").read_text()
    assert text_log.count("event=unauthenticated_remote_listener") == 2 and "tls=off" in text_log

    doc, err = cli.json("alter", "QM1", "--loopback-only", code=2)  # still on 0.0.0.0: refused
    assert doc["error"]["rule"] == "remote_bind_unauthenticated"
    doc, err = cli.json("alter", "QM1", "--host", "127.0.0.1", "--loopback-only")
    assert doc["allow_unauthenticated_remote"] is False and err == ""


def test_the_start_warning_names_what_the_running_queue_manager_leaves_open(cli: Cli) -> None:
    cli.json("create", "QM1", "--port", "0", "--host", "0.0.0.0", FLAG)
    cli.json("start", "QM1")
    cli.run("mqsc", "QM1", stdin="ALTER AUTHINFO(SYSTEM.DEFAULT.AUTHINFO.IDPWOS) AUTHTYPE(IDPWOS) CHCKCLNT(REQUIRED)\n"
                                "ALTER QMGR CHLAUTH(DISABLED)\n")
    cli.json("stop", "QM1", "--immediate")
    started, err = cli.json("start", "QM1")
    assert "CHCKCLNT" not in err and "CHLAUTH(DISABLED)" in err and "TLS OFF" in err
    assert started["warnings"] == [err.strip().removeprefix("ferrymq: ")]
    cli.json("stop", "QM1", "--immediate")


def test_no_listener_beyond_loopback_without_connection_authentication(cli: Cli) -> None:
    """--allow-unauthenticated-remote accepts IBM's default checks and clear text, not CHCKCLNT(NONE)."""
    cli.json("create", "QM1", "--port", "0")
    cli.json("start", "QM1")
    cli.run("mqsc", "QM1", stdin="ALTER AUTHINFO(SYSTEM.DEFAULT.AUTHINFO.IDPWOS) AUTHTYPE(IDPWOS) CHCKCLNT(NONE)\n")
    cli.json("stop", "QM1")
    cli.json("alter", "QM1", "--host", "0.0.0.0", FLAG)
    doc, _ = cli.json("start", "QM1", code=2)
    assert doc["error"]["rule"] == "remote_bind_unauthenticated" and "CHCKCLNT(NONE)" in doc["error"]["message"]
    assert not (cli.home / "qmgrs" / "QM1" / "ferrymq.pid").exists()
    cli.json("alter", "QM1", "--host", "127.0.0.1")
    cli.json("start", "QM1")  # on loopback it serves, unchanged
    cli.json("stop", "QM1")


def test_a_config_beyond_loopback_from_before_the_rule_does_not_start(cli: Cli) -> None:
    cli.json("create", "QM1", "--port", "0")
    path = cli.home / "qmgrs" / "QM1" / "config.json"
    config = json.loads(path.read_text())
    config["host"] = "0.0.0.0"
    del config["allow_unauthenticated_remote"]  # as written before it existed
    path.write_text(json.dumps(config))
    doc, _ = cli.json("start", "QM1", code=2)
    assert doc["error"]["rule"] == "remote_bind_unauthenticated" and FLAG in doc["error"]["message"]
    assert not (cli.home / "qmgrs" / "QM1" / "ferrymq.pid").exists()
