"""A real Spark standalone cluster on this machine, for tests: a master and workers, each
its own JVM started through ``spark-class`` from pyspark's bundled jars (``$SPARK_HOME``
is pyspark's package directory), all on 127.0.0.1 with ports the OS picks (port 0; the
master's REST server off, its and the workers' web UIs on port 0). A worker runs its
executors as child JVMs, and they their Python workers, all in the worker's own process
group: ``kill_worker`` SIGKILLs the lot, as a machine that dies.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import IO

MASTER_URL = re.compile(rb"Starting Spark master at (spark://127\.0\.0\.1:\d+)")
REGISTERED = b"Successfully registered with master"


def java_missing() -> str | None:
    """Why no cluster can start here (no Java), or None."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and Path(java_home, "bin", "java").exists():
        return None
    return None if shutil.which("java") else "no Java (java on PATH or JAVA_HOME): Spark's JVMs cannot start"


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


class StandaloneCluster:
    """``with StandaloneCluster(tmp, workers=2) as c: c.master_url``."""

    def __init__(self, work: Path, workers: int = 2, cores: int = 1, memory: str = "1g", wait: bool = True) -> None:
        """``wait=False``: ``start`` returns once the master is up and the workers are
        starting (``wait_for_workers`` waits for their registration)."""
        self.work = work
        self.wait = wait
        self.workers_wanted = workers
        self.cores = cores
        self.memory = memory
        self.master: subprocess.Popen[bytes] | None = None
        self.workers: list[subprocess.Popen[bytes]] = []
        self.master_url = ""
        self._logs: list[IO[bytes]] = []

    def env(self) -> dict[str, str]:
        return dict(os.environ, SPARK_HOME=str(spark_home()), SPARK_LOCAL_IP="127.0.0.1",
                    SPARK_DAEMON_MEMORY="256m", SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false",
                    SPARK_NO_DAEMONIZE="1")

    def _spawn(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        log = (self.work / f"{name}.log").open("wb")
        self._logs.append(log)
        # Its own session: the process group holds the daemon, its executors and their
        # Python workers (what a SIGKILL of the whole "machine" must reach).
        return subprocess.Popen([str(spark_home() / "bin" / "spark-class"), *args], stdout=log,
                                stderr=subprocess.STDOUT, env=self.env(), start_new_session=True)

    def _wait_log(self, name: str, proc: subprocess.Popen[bytes], pattern: re.Pattern[bytes] | bytes,
                  timeout: float) -> re.Match[bytes] | bool:
        path = self.work / f"{name}.log"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = path.read_bytes()
            found = pattern.search(text) if isinstance(pattern, re.Pattern) else pattern in text
            if found:
                return found
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited with {proc.returncode}: {text[-2000:].decode(errors='replace')}")
            time.sleep(0.1)
        raise TimeoutError(f"{name}: no {pattern!r} within {timeout} s (log {path})")

    def start(self) -> StandaloneCluster:
        self.work.mkdir(parents=True, exist_ok=True)
        self.master = self._spawn("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                  "--port", "0", "--webui-port", "0")
        found = self._wait_log("master", self.master, MASTER_URL, 120)
        assert isinstance(found, re.Match)
        self.master_url = found.group(1).decode()
        for _ in range(self.workers_wanted):
            self.add_worker(wait=False)
        if self.wait:
            self.wait_for_workers()
        return self

    def wait_for_workers(self) -> None:
        for i, w in enumerate(self.workers):
            self._wait_log(f"worker{i}", w, REGISTERED, 120)

    def add_worker(self, wait: bool = True) -> subprocess.Popen[bytes]:
        i = len(self.workers)
        d = self.work / f"worker{i}"
        d.mkdir(exist_ok=True)
        w = self._spawn(f"worker{i}", "org.apache.spark.deploy.worker.Worker", self.master_url, "--host", "127.0.0.1",
                        "--port", "0", "--webui-port", "0", "--cores", str(self.cores), "--memory", self.memory,
                        "--work-dir", str(d))
        self.workers.append(w)
        if wait:
            self._wait_log(f"worker{i}", w, REGISTERED, 120)
        return w

    def executors_of(self, i: int) -> list[int]:
        """The pids of worker ``i``'s executor JVMs (its children running an executor backend)."""
        out = []
        for d in Path("/proc").iterdir():
            if not d.name.isdigit():
                continue
            with contextlib.suppress(OSError, IndexError):
                stat = (d / "stat").read_text().rsplit(")", 1)[1].split()
                if int(stat[1]) == self.workers[i].pid and b"ExecutorBackend" in (d / "cmdline").read_bytes():
                    out.append(int(d.name))
        return out

    def kill_worker(self, i: int) -> None:
        """SIGKILL worker ``i``, its executors and their Python workers (its process group)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.workers[i].pid, signal.SIGKILL)
        self.workers[i].wait(30)

    def stop(self) -> None:
        for p in [*self.workers, *([self.master] if self.master else [])]:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(30)
        for log in self._logs:
            log.close()

    def __enter__(self) -> StandaloneCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
