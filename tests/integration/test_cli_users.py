"""``ferrymq user ...`` run for real: passwords from standard input, JSON output, a private
registry file, refusals with their rule."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.timeout(120)


def cli(home: Path, *args: str, stdin: str = "", code: int = 0) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, FERRYMQ_HOME=str(home))
    p = subprocess.run([sys.executable, "-m", "ferrymq.cli", *args], env=env, capture_output=True, text=True,
                       input=stdin, timeout=60)
    assert p.returncode == code, f"ferrymq {' '.join(args)} -> {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p


def as_json(home: Path, *args: str, stdin: str = "", code: int = 0) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(cli(home, *args, "--output", "json", stdin=stdin, code=code).stdout)
    return doc


def test_user_lifecycle(tmp_path: Path) -> None:
    cli(tmp_path, "create", "QM1", "--port", "0")
    assert as_json(tmp_path, "user", "add", "QM1", "app", "-g", "apps", "--password-stdin", stdin="pa55\n")["ok"]
    as_json(tmp_path, "user", "add", "QM1", "boss", "--group", "mqm", "--password-stdin", stdin="b055\n")
    listed = as_json(tmp_path, "user", "list", "QM1")["users"]
    assert listed == [{"user": "app", "groups": ["apps"], "admin": False},
                      {"user": "boss", "groups": ["mqm"], "admin": True}]
    registry = tmp_path / "qmgrs" / "QM1" / "users.json"
    assert stat.S_IMODE(registry.stat().st_mode) == 0o600
    assert "pa55" not in registry.read_text()
    assert as_json(tmp_path, "user", "groups", "QM1", "app", "--add", "mqm")["groups"] == ["apps", "mqm"]
    as_json(tmp_path, "user", "passwd", "QM1", "app", "--password-stdin", stdin="n3w\n")
    refused = as_json(tmp_path, "user", "add", "QM1", "app", "--password-stdin", stdin="x\n", code=2)
    assert refused["error"]["rule"] == "user_refused"
    assert as_json(tmp_path, "user", "delete", "QM1", "app")["ok"]
    assert [u["user"] for u in as_json(tmp_path, "user", "list", "QM1")["users"]] == ["boss"]
    no_tty = cli(tmp_path, "user", "add", "QM1", "x", code=2)  # no terminal to ask on, no --password-stdin
    assert "password_source" in no_tty.stderr
    assert "Usage" in cli(tmp_path, "user", "add", "--help").stdout
