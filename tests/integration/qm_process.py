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


class QueueManagerProcess:
    def __init__(self, home: Path, name: str = "QM1", create_args: tuple[str, ...] = ()) -> None:
        self.home = home
        self.name = name
        self.pid = 0
        self.port = 0
        self._cli("create", name, "--port", "0", *create_args)

    def _cli(self, *args: str, stdin: str | None = None) -> str:
        env = dict(os.environ, FERRYMQ_HOME=str(self.home))
        p = subprocess.run([sys.executable, "-m", "ferrymq.cli", *args], env=env, capture_output=True, text=True,
                           input=stdin, timeout=60)
        assert p.returncode == 0, f"ferrymq {' '.join(args)} -> {p.returncode}\n{p.stdout}\n{p.stderr}"
        return p.stdout

    def start(self) -> QueueManagerProcess:
        doc = json.loads(self._cli("start", self.name, "--output", "json"))
        self.pid, self.port = int(doc["pid"]), int(doc["port"])
        return self

    @property
    def conn_name(self) -> str:
        return f"127.0.0.1({self.port})"

    def mqsc(self, script: str) -> str:
        return self._cli("mqsc", self.name, stdin=script)

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
