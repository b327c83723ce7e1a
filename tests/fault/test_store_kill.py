"""SIGKILL a process that is writing a FileJournal, reopen it, check nothing acknowledged
was lost, nothing deleted came back, and transactions stayed all-or-nothing.

The child (this file run as a script) is the journal's owner plus one writer thread doing
group commit (take_pending -> write_pending -> mark_durable); a lock stands in for the
event loop that makes them one owner in the server. Small segments and low compaction
thresholds make it roll files and compact while it is killed. It prints, flushing:

  a <id>                   about to add <id> (may or may not survive)
  d <id>                   about to delete <id> (may or may not happen)
  t <id,id,..> <id|->      about to commit a transaction adding ids, deleting one
  A <id> / D <id>          that add / delete is durable: acknowledged
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

TUNING = {"segment_size": 16 * 1024, "compact_min_bytes": 32 * 1024, "compact_step_bytes": 8 * 1024}
CYCLES = int(os.environ.get("FERRYMQ_STORE_KILL_CYCLES", "8"))


def payload_of(rid: int) -> bytes:
    return rid.to_bytes(8, "little") * (1 + rid % 37)


def child(directory: str, first_id: int, seed: int) -> None:
    from ferrymq.store.file import FileJournal

    rng = random.Random(seed)
    journal = FileJournal(directory, **TUNING)
    journal.load()
    out = sys.stdout
    owner = threading.Lock()
    wake = threading.Event()
    waiting: list[tuple[int, list[str]]] = []  # (lsn, acknowledgements to print once durable)

    def writer() -> None:
        while True:
            wake.wait()
            wake.clear()
            while True:
                with owner:
                    pending = journal.take_pending()
                if pending is None:
                    break
                journal.write_pending(pending)  # the fdatasync, outside the owner lock
                with owner:
                    journal.mark_durable(pending.lsn)
                    done = [lines for lsn, lines in waiting if lsn <= pending.lsn]
                    waiting[:] = [(lsn, lines) for lsn, lines in waiting if lsn > pending.lsn]
                    out.write("".join(f"{line}\n" for lines in done for line in lines))
                    out.flush()

    threading.Thread(target=writer, daemon=True).start()
    live: list[int] = []
    next_id = first_id
    print("READY", flush=True)
    while True:
        roll = rng.random()
        with owner:
            if roll < 0.6 or len(live) < 20:
                rid, next_id = next_id, next_id + 1
                out.write(f"a {rid}\n")
                out.flush()
                waiting.append((journal.add(rid, rid % 256, payload_of(rid)), [f"A {rid}"]))
                live.append(rid)
            elif roll < 0.85:
                rid = live.pop(rng.randrange(len(live)))
                out.write(f"d {rid}\n")
                out.flush()
                waiting.append((journal.delete(rid), [f"D {rid}"]))
            else:
                txid = rng.randint(1, 5)
                adds = list(range(next_id, next_id + rng.randint(1, 4)))
                next_id += len(adds)
                victim = live.pop(rng.randrange(len(live))) if rng.random() < 0.7 else None
                for rid in adds:
                    journal.add(rid, rid % 256, payload_of(rid), txid)
                if victim is not None:
                    journal.delete(victim, txid)
                out.write(f"t {','.join(map(str, adds))} {'-' if victim is None else victim}\n")
                out.flush()
                acks = [f"A {rid}" for rid in adds] + ([] if victim is None else [f"D {victim}"])
                waiting.append((journal.commit(txid), acks))
                live.extend(adds)
        wake.set()
        if rng.random() < 0.3:
            time.sleep(0.001)


def run_cycle(directory: Path, first_id: int, seed: int, rng: random.Random) -> list[str]:
    proc = subprocess.Popen([sys.executable, __file__, str(directory), str(first_id), str(seed)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    assert first.strip() == "READY", first + proc.stderr.read()
    # Drain stdout while the child runs (a full pipe would stall it), and through the same
    # buffered reader that readline used: lines it already buffered must not be skipped.
    chunks: list[str] = []
    reader = threading.Thread(target=lambda: chunks.append(proc.stdout.read()))  # type: ignore[union-attr]
    reader.start()
    time.sleep(rng.uniform(0.2, 1.2))
    proc.send_signal(signal.SIGKILL)
    reader.join(timeout=60)
    err = proc.stderr.read()
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, err
    out = "".join(chunks)
    lines = out.splitlines()
    if lines and not out.endswith("\n"):
        lines.pop()  # cut by the kill
    return lines


def test_sigkill_loses_nothing_acknowledged(tmp_path: Path) -> None:
    from ferrymq.store.file import FileJournal

    rng = random.Random(20261122)
    acked_add: set[int] = set()
    acked_del: set[int] = set()
    intended_add: set[int] = set()
    intended_del: set[int] = set()
    txs: list[tuple[list[int], int | None]] = []
    directory = tmp_path / "journal"
    next_id = 1
    compactions_seen = 0
    for cycle in range(CYCLES):
        lines = run_cycle(directory, next_id, cycle + 1, rng)
        assert len(lines) > 50, "the child did too little before it was killed"
        for line in lines:
            kind, arg, *rest = line.split()
            if kind == "a":
                intended_add.add(int(arg))
            elif kind == "d":
                intended_del.add(int(arg))
            elif kind == "t":
                adds = [int(x) for x in arg.split(",")]
                victim = None if rest[0] == "-" else int(rest[0])
                intended_add.update(adds)
                if victim is not None:
                    intended_del.add(victim)
                txs.append((adds, victim))
            elif kind == "A":
                acked_add.add(int(arg))
            elif kind == "D":
                acked_del.add(int(arg))
        next_id = max(intended_add) + 1
        compactions_seen += any(f.name[:10] != f.name[11:21] for f in directory.glob("*.seg"))  # merged files

        journal = FileJournal(directory, **TUNING)
        loaded = journal.load()
        journal.close()
        present = {r.record_id: r for r in loaded.records}
        assert loaded.bad_records == 0 and loaded.prepared == []
        assert present.keys() <= intended_add, "a record that was never added"
        assert all(r.payload == payload_of(rid) and r.kind == rid % 256 for rid, r in present.items())
        lost = (acked_add - intended_del) - present.keys()
        assert not lost, f"cycle {cycle}: acknowledged records lost: {sorted(lost)[:10]}"
        back = acked_del & present.keys()
        assert not back, f"cycle {cycle}: deleted records came back: {sorted(back)[:10]}"
        for adds, victim in txs:
            kept = [rid for rid in adds if rid not in intended_del]
            if not kept:
                continue
            committed = kept[0] in present
            assert all((rid in present) == committed for rid in kept), f"transaction {adds} half applied"
            if victim is not None and committed:
                assert victim not in present, f"transaction {adds} committed without its delete"
            if victim is not None and not committed and victim in acked_add:
                assert victim in present, f"transaction {adds} not committed, yet its delete happened"
    assert compactions_seen, "the journal never compacted"


if __name__ == "__main__":
    child(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
