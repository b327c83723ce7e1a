"""A real queue-manager process for tests: ``ferrymq create/start`` in a tmp FERRYMQ_HOME,
127.0.0.1 port 0, queues defined through ``ferrymq mqsc``; SIGKILL and restart on demand.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

# The administrator every queue manager made here gets; the clients of the tests (and the
# programs they start: Spark's workers, samples) connect as it through $FERRYMQ_USER and
# $FERRYMQ_PASSWORD, set here for the whole test process (docs/security.md).
ADMIN_USER, ADMIN_PASSWORD = "ferrytest", "ferrytest-pw"
os.environ.setdefault("FERRYMQ_USER", ADMIN_USER)  # read by ferrymq.client.connect when no user is named
os.environ.setdefault("FERRYMQ_PASSWORD", ADMIN_PASSWORD)
# IBM's default channel authentication records refuse every administrator on every client
# channel, and everybody on SYSTEM.DEF.SVRCONN; the tests' clients are that administrator on
# that channel, so their queue managers are made with CHLAUTH(DISABLED), as pymqi's own suite
# configures IBM MQ (its create_mq_objects.py). The tests of the records themselves
# (test_chlauth_tcp.py) keep them enabled.
TEST_CHLAUTH = ("--chlauth", "disabled")


def create_args_for_tests(args: tuple[str, ...]) -> tuple[str, ...]:
    """``ferrymq create`` arguments with TEST_CHLAUTH unless they choose --chlauth."""
    return args if args[:1] != ("create",) or "--chlauth" in args or "--help" in args else (*args, *TEST_CHLAUTH)


def add_admin(home: Path, name: str) -> None:
    """The tests' administrator on queue manager ``name`` of ``home`` (made by ``ferrymq create``)."""
    env = dict(os.environ, FERRYMQ_HOME=str(home))
    p = subprocess.run([sys.executable, "-m", "ferrymq.cli", "user", "add", name, ADMIN_USER, "--group", "mqm",
                        "--password-stdin"], env=env, capture_output=True, text=True, input=ADMIN_PASSWORD + "\n",
                       timeout=60)
    assert p.returncode == 0, p.stderr


class QueueManagerProcess:
    def __init__(self, home: Path, name: str = "QM1", create_args: tuple[str, ...] = (),
                 netns: str | None = None) -> None:
        """``netns``: the network namespace its process runs in (``ip netns exec``); the
        commands and local clients reach it all the same, through its local socket (a file)."""
        self.home = home
        self.name = name
        self.netns = netns
        self.pid = 0
        self.port = 0
        self._cli(*create_args_for_tests(("create", name, "--port", "0", *create_args)))
        self.add_user(ADMIN_USER, ADMIN_PASSWORD, "mqm")

    def add_user(self, user: str, password: str, *groups: str) -> None:
        args = [arg for g in groups for arg in ("--group", g)]
        self._cli("user", "add", self.name, user, *args, "--password-stdin", stdin=password + "\n")

    def _cli(self, *args: str, stdin: str | None = None, netns: str | None = None, check: bool = True) -> str:
        env = dict(os.environ, FERRYMQ_HOME=str(self.home))
        inside = ["ip", "netns", "exec", netns] if netns else []
        p = subprocess.run([*inside, sys.executable, "-m", "ferrymq.cli", *args], env=env, capture_output=True,
                           text=True, input=stdin, timeout=60)
        assert p.returncode == 0 or not check, f"ferrymq {' '.join(args)} -> {p.returncode}\n{p.stdout}\n{p.stderr}"
        return p.stdout

    def start(self) -> QueueManagerProcess:
        doc = json.loads(self._cli("start", self.name, "--output", "json", netns=self.netns))
        self.pid, self.port = int(doc["pid"]), int(doc["port"])
        return self

    @property
    def conn_name(self) -> str:
        return f"127.0.0.1({self.port})"

    def mqsc(self, script: str, *, check: bool = True) -> str:
        """The output of ``ferrymq mqsc``; ``check=False`` takes it also when a command failed."""
        return self._cli("mqsc", self.name, stdin=script, check=check)

    def log_tail(self, lines: int = 80, having: tuple[str, ...] = ()) -> str:
        """The last ``lines`` lines of its log (of every start) holding one of ``having``
        (all when empty): for a failed assertion's message, as the tmp directory goes."""
        path = self.home / "qmgrs" / self.name / "ferrymq.log"
        try:
            text = path.read_text(errors="replace").splitlines()
        except OSError as exc:
            return f"{self.name}: no log ({exc})"
        kept = [line for line in text if not having or any(h in line for h in having)]
        return "\n".join([f"--- {self.name} {path} (last {lines} of {len(kept)})", *kept[-lines:]])

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs; what was acknowledged must be on disk."""
        if self.pid <= 0:  # never started (os.kill(0, ...) would kill this process group)
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.02)
        for pid_file in self.home.glob(f"qmgrs/{self.name}/ferrymq.pid"):
            pid_file.unlink(missing_ok=True)

    def stop(self) -> None:
        with contextlib.suppress(AssertionError, subprocess.TimeoutExpired):
            self._cli("stop", self.name)
        self.kill()
