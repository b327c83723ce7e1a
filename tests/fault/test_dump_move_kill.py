"""``ferrymq dump --move`` killed: a message may end up in both places, never in neither.

A queue manager process holds MESSAGES persistent messages on SRC. ``ferrymq dump --move``
runs as a subprocess, each time to a new file, and is killed with SIGKILL at a random
moment (once its file has grown past a random size) DUMP_KILLS times; once, the queue
manager itself is killed with SIGKILL during a move and started again. A last move runs to
its end. Then:

- every file is read with ``ferrymq.cli.dumpfile``: a file cut by a kill may fail only for
  ending early (``truncated``), never for a damaged line; the dump killed through its queue
  manager ends its file properly (TOTAL line) as the command promises;
- ``ferrymq load`` refuses a cut file with ``dump_file_invalid`` and the line where it
  ends, and ``ferrymq load --partial`` loads exactly its whole messages before the cut;
- the messages loaded into DST are exactly those of the files, and the files together with
  what is left on SRC hold every original message: none lost. Duplicates (the batch of a
  killed dump written but not committed) are counted and printed, not refused.

CI runs 2,000 messages and 5 kills of the dump; the full size is::

    FERRYMQ_DUMP_KILL_MESSAGES=100000 FERRYMQ_DUMP_KILLS=20 \\
        pytest -q -s tests/fault/test_dump_move_kill.py
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from qm_process import QueueManagerProcess

import ferrymq.client as fc
from ferrymq.cli.dumpfile import DumpFileError, read
from ferrymq.errors import FerryError

MESSAGES = int(os.environ.get("FERRYMQ_DUMP_KILL_MESSAGES", "2000"))
DUMP_KILLS = int(os.environ.get("FERRYMQ_DUMP_KILLS", "5"))
BATCH = 50
BODY = 200  # bytes: the number, padded, so that a batch spans several buffer flushes

pytestmark = pytest.mark.timeout(600)


def body_of(n: int) -> bytes:
    return f"{n:010d}".encode().ljust(BODY, b".")


def number_of(data: bytes) -> int:
    return int(data[:10])


def cli(qm: QueueManagerProcess, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, FERRYMQ_HOME=str(qm.home))
    return subprocess.run([sys.executable, "-m", "ferrymq.cli", *args, "--output", "json"], env=env,
                          capture_output=True, text=True, timeout=300)


def start_move(qm: QueueManagerProcess, path: Path, batch: int) -> subprocess.Popen[str]:
    env = dict(os.environ, FERRYMQ_HOME=str(qm.home))
    return subprocess.Popen([sys.executable, "-m", "ferrymq.cli", "dump", qm.name, "--queue", "SRC", "--file",
                             str(path), "--move", "--batch", str(batch), "--output", "json"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def put_all(qm: QueueManagerProcess) -> None:
    with fc.connect(qm.name, qm.conn_name) as c:
        q = c.open("SRC")
        for n in range(MESSAGES):
            q.put(body_of(n), persistent=True, syncpoint=True)
            if n % 500 == 499:
                c.commit()
        c.commit()


def drain(qm: QueueManagerProcess, queue: str) -> Counter[int]:
    got: Counter[int] = Counter()
    with fc.connect(qm.name, qm.conn_name) as c:
        q = c.open(queue)
        while True:
            try:
                msg = q.get(wait=0.0)
            except FerryError:
                return got
            got[number_of(msg.data)] += 1


def wait_for_growth(path: Path, size: int, proc: subprocess.Popen[str]) -> None:
    """Until ``path`` holds ``size`` bytes (or the move ended)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if path.exists() and path.stat().st_size >= size:
            return
        time.sleep(0.002)


def read_file(path: Path) -> tuple[list[int], DumpFileError | None]:
    """The numbers of its whole messages (the project's reader), and why it stops early."""
    with open(path, "rb") as f:
        numbers = [number_of(m.data) for m in read(f, partial=True)]
    try:
        with open(path, "rb") as f:
            for _ in read(f):
                pass
    except DumpFileError as exc:
        return numbers, exc
    return numbers, None


@pytest.mark.slow
def test_killed_moves_lose_nothing(tmp_path: Path) -> None:
    rng = random.Random(int(os.environ.get("FERRYMQ_SEED", "22")))
    qm = QueueManagerProcess(tmp_path / "home").start()
    files: list[Path] = []
    kills = {"dump": 0, "qmgr": 0}
    try:
        qm.mqsc("DEFINE QLOCAL(SRC) MAXDEPTH(999999)\nDEFINE QLOCAL(DST) MAXDEPTH(999999)\n")
        put_all(qm)
        per_message = 1125  # bytes a message takes in the file, about (its MQMD lines and body)
        left, seen = MESSAGES, set[int]()
        qmgr_round, qmgr_file = rng.randrange(DUMP_KILLS + 1), None
        k = 0
        # A round whose dump ended before its kill landed (a loaded machine) does not count:
        # another round runs, up to three times as many.
        while (kills["dump"] < DUMP_KILLS or not kills["qmgr"]) and k < 3 * (DUMP_KILLS + 1) and left:
            path = tmp_path / f"move-{k}.dump"
            files.append(path)
            # A batch of 1,000 (over 1 MiB in the file) overflows the dump's write buffer: part
            # of a batch reaches the file before its fsync, and a kill leaves it there while
            # the queue manager backs it out (duplicates). The buffer hands the OS whole
            # messages, so a kill cuts between them; tests/unit/test_dumpfile.py cuts at
            # every byte.
            proc = start_move(qm, path, rng.choice((BATCH, 1000)) if left > 1500 else BATCH)
            # Somewhere in this round's share of what is left, so that every round has some to move.
            rounds_left = max(1, DUMP_KILLS + 2 - kills["dump"] - kills["qmgr"])
            wait_for_growth(path, rng.randrange(per_message * max(1, left // rounds_left)), proc)
            time.sleep(rng.uniform(0.0, 0.002))  # a batch takes a few ms: between its write, fsync and commit
            if k >= qmgr_round and not kills["qmgr"]:
                qm.kill()
                qmgr_file = path
                out, err = proc.communicate(timeout=60)
                kills["qmgr"] += 1
                if proc.returncode:  # cut off: it says so (and its file is whole: checked below)
                    rule = json.loads(out)["error"]["rule"]
                    assert rule in ("dump_interrupted", "qmgr_unreachable"), err
                qm.start()
            else:
                proc.send_signal(signal.SIGKILL)
                proc.communicate(timeout=60)
                kills["dump"] += 1 if proc.returncode == -signal.SIGKILL else 0
            if path.exists():
                seen.update(read_file(path)[0])
            left = max(0, MESSAGES - len(seen))
            k += 1
        final = tmp_path / "move-final.dump"
        files.append(final)
        done = cli(qm, "dump", qm.name, "--queue", "SRC", "--file", str(final), "--move", "--batch", str(BATCH))
        assert done.returncode == 0, done.stderr

        in_files: Counter[int] = Counter()
        cut_files, mid_message = 0, 0
        for path in files:
            if not path.exists():  # killed before it made its file
                continue
            numbers, defect = read_file(path)
            in_files.update(numbers)
            if defect is None:
                loaded = cli(qm, "load", qm.name, "--queue", "DST", "--file", str(path))
                assert loaded.returncode == 0, loaded.stderr
                assert json.loads(loaded.stdout)["messages"] == len(numbers)
                continue
            assert defect.truncated, f"{path.name}: damaged, not merely cut: {defect}"
            assert path != qmgr_file, f"{path.name}: the dump whose queue manager died left no whole file: {defect}"
            cut_files += 1
            mid_message += "TOTAL" not in defect.message
            refused = cli(qm, "load", qm.name, "--queue", "DST", "--file", str(path))
            assert refused.returncode == 2, refused.stdout
            error = json.loads(refused.stdout or refused.stderr)["error"]
            assert (error["rule"], error["line"]) == ("dump_file_invalid", defect.line)
            loaded = cli(qm, "load", qm.name, "--queue", "DST", "--file", str(path), "--partial")
            assert loaded.returncode == 0, loaded.stderr
            doc = json.loads(loaded.stdout)
            assert (doc["messages"], doc["cut_at_line"]) == (len(numbers), defect.line)

        on_dst = drain(qm, "DST")
        assert on_dst == in_files, "load did not put back exactly the files' messages"
        on_src = drain(qm, "SRC")
        everywhere = in_files + on_src
        lost = sorted(set(range(MESSAGES)) - set(everywhere))
        assert not lost, f"{len(lost)} messages in neither place: {lost[:20]}"
        assert set(everywhere) <= set(range(MESSAGES))
        duplicates = sum(everywhere.values()) - len(everywhere)
        print(f"\ndump --move: {MESSAGES} messages, {kills['dump']} dumps and {kills['qmgr']} queue manager "
              f"killed, {len(files)} files ({cut_files} cut, {mid_message} inside a message), {len(on_src)} "
              f"left on SRC, {duplicates} duplicates")
        assert kills["dump"] == DUMP_KILLS and kills["qmgr"] == 1
        assert cut_files >= 1, "no kill cut a file: the test proved nothing about cut files"
    finally:
        qm.stop()
