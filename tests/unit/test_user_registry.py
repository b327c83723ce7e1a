"""The user registry (ferrymq.store.users): scrypt hashes with their own salts, groups,
administrators, a private file read again when it changes."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from ferrymq.store.users import ADMIN_GROUP, MAX_PASSWORD, RegistryError, UserRegistry


def test_a_password_is_kept_only_as_a_salted_hash(tmp_path: Path) -> None:
    reg = UserRegistry(tmp_path)
    reg.add("app", "s3cret", ["apps"])
    reg.add("app2", "s3cret")
    text = (tmp_path / "users.json").read_text()
    assert "s3cret" not in text
    doc = json.loads(text)["users"]
    assert doc["app"]["scrypt"]["salt"] != doc["app2"]["scrypt"]["salt"]
    assert doc["app"]["scrypt"]["hash"] != doc["app2"]["scrypt"]["hash"]
    assert stat.S_IMODE((tmp_path / "users.json").stat().st_mode) == 0o600


def test_verify_accepts_only_the_right_password(tmp_path: Path) -> None:
    reg = UserRegistry(tmp_path)
    reg.add("app", "right")
    assert reg.verify("app", "right")
    assert not reg.verify("app", "wrong")
    assert not reg.verify("app", "")
    assert not reg.verify("nobody", "right")
    assert not reg.verify("app", "x" * (MAX_PASSWORD + 1))
    reg.passwd("app", "newer")
    assert reg.verify("app", "newer") and not reg.verify("app", "right")


def test_changes_are_seen_by_another_reader(tmp_path: Path) -> None:
    server_side = UserRegistry(tmp_path)
    assert not server_side.known("app")
    cli_side = UserRegistry(tmp_path)
    cli_side.add("app", "pw", ["mqm"])
    assert server_side.refresh() and server_side.is_admin("app")
    cli_side.set_groups("app", remove=["mqm"], add=["apps"])
    server_side.refresh()
    assert server_side.groups_of("app") == {"apps"}
    cli_side.delete("app")
    server_side.refresh()
    assert not server_side.known("app")


def test_the_creator_is_an_administrator(tmp_path: Path) -> None:
    reg = UserRegistry(tmp_path, creator="alice")
    assert reg.is_admin("alice") and ADMIN_GROUP in reg.groups_of("alice")
    assert not reg.is_admin("bob") and not reg.is_admin("")


@pytest.mark.parametrize("name", ["", "a" * 13, "bad name", "-x", "x/y"])
def test_bad_user_names_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(RegistryError):
        UserRegistry(tmp_path).add(name, "pw")
    assert not (tmp_path / "users.json").exists()


def test_refusals(tmp_path: Path) -> None:
    reg = UserRegistry(tmp_path)
    reg.add("app", "pw")
    for call in (lambda: reg.add("app", "pw"), lambda: reg.add("b", ""), lambda: reg.passwd("nobody", "x"),
                 lambda: reg.delete("nobody"), lambda: reg.add("c", "pw", ["bad group"])):
        with pytest.raises(RegistryError):
            call()
    assert [u["user"] for u in reg.listing()] == ["app"]
