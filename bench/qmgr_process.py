"""What the benchmark scripts share: a queue-manager process of their own (created and
started through the ``ferrymq`` CLI in a scratch FERRYMQ_HOME, on 127.0.0.1 and a free
port) and the CPU time of a process read from /proc.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterable

BENCH_USER = "bench"


def start_qmgr(home: str, queues: Iterable[tuple[str, int]], name: str = "QMB",
               create_args: Iterable[str] = ()) -> tuple[str, int]:
    """Create (with ``create_args`` added to ``ferrymq create``) and start queue manager
    ``name`` under ``home`` with ``queues`` (name, MAXDEPTH) defined; returns its connection
    name and pid. MAXUMSGS is lifted so that one unit of work can hold a whole benchmark's
    messages (a Spark partition, a staged run)."""
    env = dict(os.environ, FERRYMQ_HOME=home)
    cli = [sys.executable, "-m", "ferrymq.cli"]
    # CHLAUTH(DISABLED): IBM's default channel authentication records refuse administrators
    # on client channels, and the benchmark's clients are one (docs/security.md).
    subprocess.run([*cli, "create", name, "--port", "0", "--chlauth", "disabled", *create_args], env=env, check=True,
                   capture_output=True)
    # A new queue manager authenticates its clients (docs/security.md): the benchmark's
    # clients, in this process and the ones it starts, connect as an administrator.
    password = secrets.token_hex(16)
    subprocess.run([*cli, "user", "add", name, BENCH_USER, "--group", "mqm", "--password-stdin"], env=env,
                   input=password + "\n", check=True, capture_output=True, text=True)
    os.environ["FERRYMQ_USER"], os.environ["FERRYMQ_PASSWORD"] = BENCH_USER, password
    doc = json.loads(subprocess.run([*cli, "start", name, "--output", "json"], env=env, check=True,
                                    capture_output=True, text=True).stdout)
    script = "ALTER QMGR MAXUMSGS(10000000)\n" + "".join(f"DEFINE QLOCAL({q}) MAXDEPTH({depth})\n"
                                                          for q, depth in queues)
    subprocess.run([*cli, "mqsc", name], env=env, input=script, check=True, capture_output=True, text=True)
    return f"127.0.0.1({doc['port']})", int(doc["pid"])


def proc_stat(pid: int) -> tuple[int, float]:
    """A live process's parent pid and its CPU seconds so far (user + system), from /proc.

    Raises:
        OSError, IndexError, ValueError: the process is gone, or /proc is not Linux's.
    """
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a live process; 0.0 where unavailable."""
    try:
        return proc_stat(pid)[1]
    except (OSError, IndexError, ValueError):
        return 0.0
