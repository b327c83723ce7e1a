"""``ferrymq status QM1``: dspmq and a summary of what the queue manager is doing.

What the data directory says (status, pid, address, the journal's size on disk, the free
space beside it and the health the server last wrote) and, while it runs, what its
command server answers: the connections (DISPLAY CONN) and the local queues with their
depth, uncommitted messages, input/output handles and the age of the oldest message
(DISPLAY QSTATUS), and the channels that have a status (DISPLAY CHSTATUS). SYSTEM.* queues are shown when they hold messages, or all with --all.
``--output json`` gives the same as one document.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from ferrymq.admin.pcfclient import CommandClient
from ferrymq.cli import control
from ferrymq.cli.home import QmgrDir
from ferrymq.cli.mqsc import control_client
from ferrymq.errors import MQError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.model import Command, Response

_REPLY_PREFIX = "FERRYMQ.STATUS."  # the temporary queue the command server answers on


def journal_usage(journal_dir: Path) -> dict[str, Any]:
    """The journal's files on disk: their total size and the free space of their file system."""
    size = files = 0
    if journal_dir.is_dir():
        for f in journal_dir.iterdir():
            if f.is_file():
                size += f.stat().st_size
                files += 1
    free = shutil.disk_usage(journal_dir if journal_dir.is_dir() else journal_dir.parent).free
    return {"bytes": size, "files": files, "free_bytes": free}


def _text(value: object) -> str:
    return value.decode("latin-1").strip() if isinstance(value, bytes) else str(value).strip()


def queue_rows(responses: list[Response], every: bool) -> list[dict[str, Any]]:
    """DISPLAY QSTATUS answers as rows (SYSTEM.* only with messages, unless ``every``)."""
    rows = []
    for r in responses:
        p = r.params
        name = _text(p.get(C.MQCA_Q_NAME, ""))
        depth = int(p.get(C.MQIA_CURRENT_Q_DEPTH, 0))  # type: ignore[arg-type]
        if name.startswith("SYSTEM.") and not depth and not every:
            continue
        age = int(p.get(F.MQIACF_OLDEST_MSG_AGE, -1))  # type: ignore[arg-type]
        rows.append({"queue": name, "depth": depth, "uncommitted": int(p.get(F.MQIACF_UNCOMMITTED_MSGS, 0)),  # type: ignore[arg-type]
                     "input_handles": int(p.get(C.MQIA_OPEN_INPUT_COUNT, 0)),  # type: ignore[arg-type]
                     "output_handles": int(p.get(C.MQIA_OPEN_OUTPUT_COUNT, 0)),  # type: ignore[arg-type]
                     "oldest_message_age": None if age < 0 else age})
    return rows


def connection_rows(responses: list[Response]) -> list[dict[str, Any]]:
    """DISPLAY CONN answers as rows: applications' connections (not the queue manager's own)."""
    return [{"connection": _text(bytes(r.params.get(F.MQBACF_CONNECTION_ID, b"")).hex().upper()),  # type: ignore[arg-type]
             "application": _text(r.params.get(F.MQCACF_APPL_TAG, "")),
             "user": _text(r.params.get(F.MQCACF_USER_IDENTIFIER, "")),
             "address": _text(r.params.get(F.MQCACH_CONNECTION_NAME, "")),
             "handles": int(r.params.get(F.MQIACF_CONNECTION_COUNT, 0))}  # type: ignore[arg-type]
            for r in responses if r.comp == C.MQCC_OK and r.params.get(C.MQIA_APPL_TYPE) != C.MQAT_QMGR]


_CHANNEL_STATES = {v: k.removeprefix("MQCHS_") for k, v in vars(F).items()
                   if k.startswith("MQCHS_") and isinstance(v, int)}


def channel_rows(responses: list[Response]) -> list[dict[str, Any]]:
    """DISPLAY CHSTATUS answers as rows (none when no channel has status): the message
    channels' (a client's server-connection instance is listed with the connections)."""
    return [{"channel": _text(r.params.get(F.MQCACH_CHANNEL_NAME, "")),
             "state": _CHANNEL_STATES.get(int(r.params.get(F.MQIACH_CHANNEL_STATUS, -1)), "?"),  # type: ignore[arg-type]
             "address": _text(r.params.get(F.MQCACH_CONNECTION_NAME, "")),
             "xmitq": _text(r.params.get(F.MQCACH_XMIT_Q_NAME, ""))}
            for r in responses if r.comp == C.MQCC_OK and F.MQCACH_CHANNEL_NAME in r.params
            and r.params.get(F.MQIACH_CHANNEL_TYPE) != F.MQCHT_SVRCONN]


def gather(home: Path, name: str, every: bool, explicit_conn: str | None = None) -> dict[str, Any]:
    """Everything ``status`` shows, as a document."""
    qdir = QmgrDir(home, name).require()
    info = control.describe(qdir)
    doc: dict[str, Any] = {"queue_manager": name, "status": info["status"], "pid": info["pid"],
                           "host": info["host"], "port": info["port"], "started": info.get("started"),
                           "metrics_port": info.get("metrics_port"), "console_port": info.get("console_port"),
                           "console_tls": info.get("console_tls"),
                           "journal": {**journal_usage(qdir.journal_dir), "health": info.get("journal")},
                           "connections": None, "channels": None, "queues": None}
    if info["status"] != control.RUNNING:
        return doc
    try:
        client = control_client(home, name, explicit_conn, "ferrymq status")
    except (MQError, OSError, click.ClickException) as exc:
        doc["error"] = f"the queue manager did not answer: {exc}"
        return doc
    try:
        admin = CommandClient(client, wait=10.0, dynamic_queue=_REPLY_PREFIX + "*")
        try:
            queues = admin.run(Command(F.MQCMD_INQUIRE_Q_STATUS, {
                C.MQCA_Q_NAME: "*", F.MQIACF_Q_STATUS_TYPE: F.MQIACF_Q_STATUS, F.MQIACF_Q_STATUS_ATTRS: (F.MQIACF_ALL,)}))
            channels = admin.run(Command(F.MQCMD_INQUIRE_CHANNEL_STATUS, {
                F.MQCACH_CHANNEL_NAME: "*", F.MQIACH_CHANNEL_INSTANCE_ATTRS: (F.MQIACF_ALL,)}))
            conns = admin.run(Command(F.MQCMD_INQUIRE_CONNECTION, {
                F.MQBACF_GENERIC_CONNECTION_ID: b"", F.MQIACF_CONN_INFO_TYPE: F.MQIACF_CONN_INFO_CONN,
                F.MQIACF_CONNECTION_ATTRS: (F.MQIACF_ALL,)}))
        finally:
            admin.close()
    except MQError as exc:
        doc["error"] = f"the command server did not answer: {exc}"
        return doc
    finally:
        client.disconnect()
    # This command's own reply queue and connection are not the queue manager's business.
    doc["queues"] = [q for q in queue_rows([r for r in queues if r.comp == C.MQCC_OK], every)
                     if not q["queue"].startswith(_REPLY_PREFIX)]
    doc["channels"] = channel_rows(channels)
    doc["connections"] = [c for c in connection_rows(conns) if c["application"] != "ferrymq status"]
    return doc


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)  # pragma: no cover


def _age(seconds: int | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 7200:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h"


def render(doc: dict[str, Any], echo: Callable[[Any], None]) -> None:
    """The text form: a heading, the journal, then connections and queues as tables."""
    where = f"{doc['host']}({doc['port']})" if doc["port"] is not None else "-"
    echo(f"Queue manager {doc['queue_manager']}: {doc['status']}  pid {doc['pid'] or '-'}  listening {where}")
    if doc.get("metrics_port") is not None:
        echo(f"Metrics: http://127.0.0.1:{doc['metrics_port']}/metrics")
    if doc.get("console_port") is not None:
        echo(f"Web console: {'https' if doc.get('console_tls') else 'http'}://127.0.0.1:{doc['console_port']}/")
    j = doc["journal"]
    health = (j.get("health") or {}).get("state", "-")
    echo(f"Journal: {_size(j['bytes'])} in {j['files']} files, {_size(j['free_bytes'])} free, {health}")
    if doc.get("error"):
        echo(f"({doc['error']})")
    if doc["connections"] is not None:
        echo(f"Connections: {len(doc['connections'])}")
        if doc["connections"]:
            table = Table(box=None, pad_edge=False)
            for col in ("APPLICATION", "USER", "ADDRESS", "HANDLES"):
                table.add_column(col)
            for c in doc["connections"]:
                table.add_row(c["application"] or "-", c["user"] or "-", c["address"] or "local", str(c["handles"]))
            echo(table)
    if doc.get("channels"):
        table = Table(box=None, pad_edge=False)
        for col in ("CHANNEL", "STATE", "ADDRESS", "XMITQ"):
            table.add_column(col)
        for ch in doc["channels"]:
            table.add_row(ch["channel"], ch["state"], ch["address"] or "-", ch["xmitq"] or "-")
        echo(table)
    if doc["queues"] is not None:
        table = Table(box=None, pad_edge=False)
        for col in ("QUEUE", "DEPTH", "UNCOMMITTED", "IN", "OUT", "OLDEST"):
            table.add_column(col)
        for q in doc["queues"]:
            table.add_row(q["queue"], str(q["depth"]), str(q["uncommitted"]), str(q["input_handles"]),
                          str(q["output_handles"]), _age(q["oldest_message_age"]))
        echo(table)


def register(group: click.Group, command: Callable[[Any], Any]) -> None:
    """Add ``status`` to ``ferrymq`` (``command``: main's decorator giving --output/--home)."""

    @group.command(name="status")
    @click.argument("name")
    @click.option("--all", "every", is_flag=True, help="Show SYSTEM.* queues even when empty.")
    @click.option("--conn", "-c", "conn", default=None, help="Reach the command server at host(port).")
    @command
    def status(home: Path, out: Any, name: str, every: bool, conn: str | None) -> None:
        """State of queue manager NAME: connections, queues (depth, oldest message), journal."""
        doc = gather(home, name, every, conn)
        if out.json:
            out.result(doc, None)
        else:
            render(doc, out.console.print)
