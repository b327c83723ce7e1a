"""``ferrymq setmqaut`` and ``ferrymq dspmqaut``: IBM's control commands for authority
records, spelled as setmqaut/dspmqaut spell them, run as the MQSC they stand for
(SET AUTHREC, DISPLAY ENTAUTH) through ``ferrymq mqsc``'s path: the local socket, as the
OS user who runs them (docs/security.md)::

    ferrymq setmqaut QM1 -t queue -n 'APP.**' -p app +get +put +inq
    ferrymq setmqaut QM1 -t qmgr -g apps +connect +inq
    ferrymq setmqaut QM1 -t queue -n APP.Q -p app -put
    ferrymq dspmqaut QM1 -t queue -n APP.Q -p app
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ferrymq.cli import mqsc
from ferrymq.engine.authority import GROUP_WORDS, WORD_AUTHS

TYPES = {"q": "QUEUE", "queue": "QUEUE", "qmgr": "QMGR", "topic": "TOPIC", "namelist": "NAMELIST",
         "authinfo": "AUTHINFO", "prcs": "PROCESS", "process": "PROCESS", "channel": "CHANNEL", "chl": "CHANNEL",
         "listener": "LISTENER", "service": "SERVICE", "comminfo": "COMMINFO"}
_WORDS = set(WORD_AUTHS) | set(GROUP_WORDS)


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _entity(principal: str | None, group: str | None) -> str:
    if bool(principal) == bool(group):
        raise click.UsageError("give one of -p PRINCIPAL or -g GROUP")
    return f"PRINCIPAL({_quoted(principal)})" if principal else f"GROUP({_quoted(group or '')})"


def _profile(qmgr: str, objtype: str, name: str | None) -> str:
    if objtype == "QMGR":
        return qmgr
    if not name:
        raise click.UsageError("give -n with the object's name or profile")
    return name


def parse_args(args: tuple[str, ...]) -> tuple[dict[str, str], list[str], list[str]]:
    """setmqaut's own arguments (``-t type -n name -p principal -g group`` and ``+auth`` /
    ``-auth``: click cannot tell ``-put`` from ``-p ut``), as options and the MQSC words to
    add and to remove."""
    opts: dict[str, str] = {}
    add: list[str] = []
    remove: list[str] = []
    items = list(args)
    while items:
        item = items.pop(0)
        if item in ("-t", "-n", "-p", "-g"):
            if not items:
                raise click.UsageError(f"{item} needs a value")
            opts[item[1]] = items.pop(0)
            continue
        word = item[1:].upper()
        if item[:1] not in "+-" or word not in _WORDS:
            raise click.UsageError(f"{item!r}: give -t, -n, -p or -g, or +auth / -auth with auth one of "
                                   f"{', '.join(sorted(w.lower() for w in _WORDS))}")
        (add if item[0] == "+" else remove).append(word)
    if opts.get("t", "").lower() not in TYPES:
        raise click.UsageError(f"-t is one of {', '.join(sorted(TYPES))}")
    return opts, add, remove


def register(group: click.Group, home_of: Callable[[click.Context, str | None], Path],
             home_option: Callable[[Any], Any]) -> None:
    """Add ``setmqaut`` and ``dspmqaut`` to ``ferrymq``."""

    def run(ctx: click.Context, qmgr: str, text: str, output: str | None, home_here: str | None) -> None:
        as_json = (output or ctx.obj.get("output")) == "json"

        def fail(code: int, rule: str, message: str) -> None:
            if as_json:
                click.echo(json.dumps({"ok": False, "error": {"rule": rule, "exit_code": code, "message": message}}))
            else:
                click.echo(f"ferrymq: error[{rule}]: {message}", err=True)

        ctx.exit(mqsc.run(home_of(ctx, home_here), qmgr, io.StringIO(text + "\n"), None, as_json, fail))

    output_option = click.option("--output", "output", type=click.Choice(["text", "json"]), default=None,
                                 help="text (runmqsc style, default) or json, for scripts.")
    @group.command(name="setmqaut", context_settings={"ignore_unknown_options": True})
    @home_option
    @click.argument("qmgr")
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    @output_option
    @click.pass_context
    def setmqaut(ctx: click.Context, qmgr: str, args: tuple[str, ...], output: str | None,
                 home_here: str | None) -> None:
        """Grant (+auth) or revoke (-auth) authorities on QMGR's objects, as setmqaut does:
        -t TYPE (queue, qmgr, topic, namelist ...), -n NAME or generic profile, -p PRINCIPAL
        or -g GROUP, then +auth/-auth (get, put, browse, inq, set, connect, setid, setall,
        passid, passall, altusr, crt, dlt, chg, dsp, clr, ctrl, ctrlx, sub, pub, resume,
        system, all, allmqi, alladm). SET AUTHREC underneath."""
        opts, add, remove = parse_args(args)
        if not add and not remove:
            raise click.UsageError("give at least one +auth or -auth")
        kind = TYPES[opts["t"].lower()]
        text = (f"SET AUTHREC PROFILE({_quoted(_profile(qmgr, kind, opts.get('n')))}) OBJTYPE({kind}) "
                f"{_entity(opts.get('p'), opts.get('g'))}"
                + (f" AUTHADD({','.join(add)})" if add else "") + (f" AUTHRMV({','.join(remove)})" if remove else ""))
        run(ctx, qmgr, text, output, home_here)

    @group.command(name="dspmqaut")
    @home_option
    @click.argument("qmgr")
    @click.option("-t", "objtype", type=click.Choice(sorted(TYPES)), required=True, help="Object type.")
    @click.option("-n", "name", default=None, help="Object name.")
    @click.option("-p", "principal", default=None, help="A user.")
    @click.option("-g", "group_name", default=None, help="A group.")
    @output_option
    @click.pass_context
    def dspmqaut(ctx: click.Context, qmgr: str, objtype: str, name: str | None, principal: str | None,
                 group_name: str | None, output: str | None, home_here: str | None) -> None:
        """What a user or group may do to one of QMGR's objects (like dspmqaut): DISPLAY
        ENTAUTH underneath (a user's groups and administrators counted)."""
        kind = TYPES[objtype]
        text = (f"DISPLAY ENTAUTH {_entity(principal, group_name)} OBJNAME({_quoted(_profile(qmgr, kind, name))}) "
                f"OBJTYPE({kind})")
        run(ctx, qmgr, text, output, home_here)
