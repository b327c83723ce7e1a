"""``ferrymq user add/passwd/delete/list/groups``: a queue manager's user registry
(``ferrymq.store.users``; docs/security.md).

A password is read from the terminal without echo (asked twice), or, with
``--password-stdin``, as the first line of standard input (for scripts: ``printf '%s\\n'
"$PW" | ferrymq user add QM1 app --password-stdin``). It is never an option's value, so it
stays out of shell histories and ``ps``. Changes apply to a running queue manager from its
next connection.
"""

from __future__ import annotations

import getpass
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from ferrymq.cli.errors import CliError, Exit
from ferrymq.cli.home import QmgrDir
from ferrymq.store.users import ADMIN_GROUP, RegistryError, UserRegistry


def registry(home: Path, qmgr: str) -> UserRegistry:
    return UserRegistry(QmgrDir(home, qmgr).require().path)


def read_password(from_stdin: bool) -> str:
    """The new password, from standard input's first line or asked twice without echo."""
    if from_stdin:
        line = sys.stdin.readline()
        return line[:-1] if line.endswith("\n") else line
    if not sys.stdin.isatty():
        raise CliError(Exit.USAGE, "password_source", "standard input is not a terminal: give --password-stdin "
                       "and the password as its first line")
    first = getpass.getpass("Password: ")
    if getpass.getpass("Password again: ") != first:
        raise CliError(Exit.USAGE, "password_mismatch", "the two passwords differ")
    return first


def _refused(exc: RegistryError) -> CliError:
    return CliError(Exit.USAGE, "user_refused", str(exc))


def register(group: click.Group, command: Callable[[Any], Any]) -> None:
    """Add the ``user`` commands to ``ferrymq`` (``command``: main's decorator giving
    ``--output``/``--home`` and the error handling)."""

    @group.group(name="user")
    def user() -> None:
        """A queue manager's users, passwords and groups (for client connections).

        \b
          ferrymq user add QM1 app --group apps     # asks for the password twice
          printf '%s\\n' "$PW" | ferrymq user add QM1 admin --group mqm --password-stdin
          ferrymq user list QM1 --output json
          ferrymq user groups QM1 app --add readers --remove apps
          ferrymq user passwd QM1 app
          ferrymq user delete QM1 app

        Members of group mqm administer the queue manager, as does the operating-system user
        who runs it.
        """

    password_stdin = click.option("--password-stdin", is_flag=True,
                                  help="Read the password from standard input's first line (scripts).")

    @user.command(name="add")
    @click.argument("qmgr")
    @click.argument("name")
    @click.option("--group", "-g", "groups", multiple=True, help=f"A group to join (repeat); {ADMIN_GROUP} = admin.")
    @password_stdin
    @command
    def add(home: Path, out: Any, qmgr: str, name: str, groups: tuple[str, ...], password_stdin: bool) -> None:
        """Add user NAME to queue manager QMGR's registry, with a password."""
        reg = registry(home, qmgr)
        try:
            reg.add(name, read_password(password_stdin), groups)
        except RegistryError as exc:
            raise _refused(exc) from None
        out.result({"user": name, "groups": sorted(set(groups)), "qmgr": qmgr},
                   f"User {name} added to queue manager {qmgr}.")

    @user.command(name="passwd")
    @click.argument("qmgr")
    @click.argument("name")
    @password_stdin
    @command
    def passwd(home: Path, out: Any, qmgr: str, name: str, password_stdin: bool) -> None:
        """Change user NAME's password."""
        reg = registry(home, qmgr)
        try:
            reg.passwd(name, read_password(password_stdin))
        except RegistryError as exc:
            raise _refused(exc) from None
        out.result({"user": name, "qmgr": qmgr}, f"Password of {name} changed.")

    @user.command(name="delete")
    @click.argument("qmgr")
    @click.argument("name")
    @command
    def delete(home: Path, out: Any, qmgr: str, name: str) -> None:
        """Delete user NAME (its connections already made stay)."""
        try:
            registry(home, qmgr).delete(name)
        except RegistryError as exc:
            raise _refused(exc) from None
        out.result({"user": name, "qmgr": qmgr}, f"User {name} deleted.")

    @user.command(name="groups")
    @click.argument("qmgr")
    @click.argument("name")
    @click.option("--add", "add_groups", multiple=True, help="A group to join (repeat).")
    @click.option("--remove", "remove_groups", multiple=True, help="A group to leave (repeat).")
    @command
    def groups(home: Path, out: Any, qmgr: str, name: str, add_groups: tuple[str, ...],
               remove_groups: tuple[str, ...]) -> None:
        """Show or change the groups of user NAME."""
        try:
            now = registry(home, qmgr).set_groups(name, add_groups, remove_groups)
        except RegistryError as exc:
            raise _refused(exc) from None
        out.result({"user": name, "groups": now, "qmgr": qmgr}, f"{name}: {' '.join(now) or '(no groups)'}")

    @user.command(name="list")
    @click.argument("qmgr")
    @command
    def list_(home: Path, out: Any, qmgr: str) -> None:
        """List QMGR's users and their groups (never a password or hash)."""
        rows = registry(home, qmgr).listing()
        table = Table(box=None, pad_edge=False)
        for col in ("USER", "GROUPS"):
            table.add_column(col)
        for r in rows:
            table.add_row(r["user"], " ".join(r["groups"]) or "-")
        out.result({"users": rows, "qmgr": qmgr}, table if rows else f"No users in queue manager {qmgr}.")
