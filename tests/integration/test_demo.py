"""`make demo` runs the real thing: server, TCP clients, journal, restart."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_demo_shows_messages_flowing_and_surviving_restart(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "ferrymq.demo", str(tmp_path)], capture_output=True, text=True,
                         timeout=120, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"}, check=True).stdout
    assert "listening on 127.0.0.1(" in out
    assert "MQRC_MISSING_REPLY_TO_Q" in out
    assert "BackoutCount 1" in out
    after = out.split("after restart")[1]
    assert "order-2 (urgent)" in after and "order-4" in after and "order-1" in after
    assert "order-3" not in after and "order-5" not in after  # non-persistent: gone after restart
    assert "demo complete" in out


def test_demo_leaves_no_folder_behind(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "ferrymq.demo"], capture_output=True, text=True, timeout=120,
                   env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path),
                        "PYTHONPATH": os.environ.get("PYTHONPATH", "")}, check=True)
    assert list(tmp_path.iterdir()) == []


def test_make_demo_installs_only_the_package_and_make_test_checks_prerequisites(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    demo = subprocess.run(["make", "-n", "-C", str(root), "demo", "VENV=" + str(tmp_path / "venv")], capture_output=True,
                          text=True, timeout=60, check=True).stdout
    assert "pip install --quiet -e .\n" in demo and "[dev]" not in demo
    test = subprocess.run(["make", "-n", "-C", str(root), "test", "VENV=" + str(tmp_path / "venv")], capture_output=True,
                          text=True, timeout=60, check=True).stdout
    assert test.index("tools/prereqs.sh") < test.index("pip install --quiet -e '.[dev]'") < test.index("bin/pytest -q")
    missing = subprocess.run(["sh", str(root / "tools" / "prereqs.sh")], capture_output=True, text=True, timeout=60,
                             env={"PATH": "/usr/bin:/bin", "JAVA_HOME": str(tmp_path / "no-java")}, check=False)
    assert missing.returncode == 1
    assert "needs Java 17 or newer for the Spark tests" in missing.stderr and "JAVA_HOME" in missing.stderr


def test_top_level_connect_reaches_a_server(tmp_path: Path) -> None:
    import ferrymq
    from ferrymq.store.memory import MemoryJournal

    with ferrymq.embed("TOP.QM", MemoryJournal(), listen=True, port=0) as emb:
        emb.run(lambda: emb.qmgr.objects.define("QLOCAL", "Q1", {}) if emb.qmgr else None)
        with ferrymq.connect("TOP.QM", f"127.0.0.1({emb.port})") as qm, qm.open("Q1") as q:
            q.put(b"hello")
            assert q.get(wait=1.0).data == b"hello"
