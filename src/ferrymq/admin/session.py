"""An MQSC session: runs commands through a command runner and writes runmqsc's output.

The runner is anything that takes a Command and returns Responses: a CommandClient (PCF
over a client, as ``runmqsc -c``) or the executor itself. Output follows runmqsc: each
command echoed with its number, then AMQ messages (our own words, IBM's message ids),
DISPLAY results as ``KEYWORD(value)`` in two columns, and at the end the count of
commands read, with a syntax error, and that could not be processed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ferrymq.admin import mqsc_channels as CH
from ferrymq.admin import mqsc_security
from ferrymq.admin.mqsc import MqscSyntaxError, Parsed, commands, parse, to_command
from ferrymq.engine import attrs as A
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.model import Command, Response, Value

Runner = Callable[[Command], list[Response]]

EXIT_OK = 0
EXIT_FAILED = 10  # runmqsc: some commands had errors
EXIT_NO_QMGR = 20  # runmqsc: the queue manager could not be reached

_DONE = {("DEFINE", "Q"): "AMQ8006I: Queue created.", ("ALTER", "Q"): "AMQ8008I: Queue changed.",
         ("DELETE", "Q"): "AMQ8007I: Queue deleted.", ("CLEAR", "Q"): "AMQ8022I: Queue cleared.",
         ("ALTER", A.QMGR): "AMQ8005I: Queue manager changed.",
         ("PING", A.QMGR): "AMQ8415I: Ping Queue Manager command complete.",
         ("RESET", A.QMGR): "Queue manager reset: statistics written.",
         ("DEFINE", A.TOPIC): "AMQ8690I: Topic created.", ("ALTER", A.TOPIC): "AMQ8691I: Topic changed.",
         ("DELETE", A.TOPIC): "AMQ8692I: Topic deleted.", ("DEFINE", A.SUB): "AMQ8094I: Subscription created.",
         ("ALTER", A.SUB): "AMQ8096I: Subscription changed.", ("DELETE", A.SUB): "AMQ8095I: Subscription deleted.",
         ("CLEAR", "TOPICSTR"): "AMQ8746I: Topic string cleared.",
         ("DEFINE", A.NAMELIST): "AMQ8552I: IBM MQ namelist created.",
         ("ALTER", A.NAMELIST): "AMQ8551I: IBM MQ namelist changed.",
         ("DELETE", A.NAMELIST): "AMQ8553I: IBM MQ namelist deleted.",
         ("DEFINE", CH.CHANNEL): "AMQ8014I: IBM MQ channel created.",
         ("ALTER", CH.CHANNEL): "AMQ8016I: IBM MQ channel changed.",
         ("DELETE", CH.CHANNEL): "AMQ8015I: IBM MQ channel deleted.",
         ("START", CH.CHANNEL): "AMQ8018I: Start IBM MQ channel accepted.",
         ("STOP", CH.CHANNEL): "AMQ8019I: Stop IBM MQ channel accepted.",
         ("RESET", CH.CHANNEL): "AMQ8023I: IBM MQ channel reset.",
         ("RESOLVE", CH.CHANNEL): "AMQ8025I: IBM MQ channel resolved.",
         ("PING", CH.CHANNEL): "AMQ8020I: Ping IBM MQ channel complete.",
         ("DEFINE", CH.LISTENER): "AMQ8626I: IBM MQ listener created.",
         ("ALTER", CH.LISTENER): "AMQ8627I: IBM MQ listener changed.",
         ("DELETE", CH.LISTENER): "AMQ8628I: IBM MQ listener deleted.",
         ("START", CH.LISTENER): "AMQ8021I: Request to start IBM MQ listener accepted.",
         ("STOP", CH.LISTENER): "AMQ8706I: Request to stop IBM MQ listener accepted.",
         ("DEFINE", A.PROCESS): "AMQ8010I: IBM MQ process created.",
         ("ALTER", A.PROCESS): "AMQ8011I: IBM MQ process changed.",
         ("DELETE", A.PROCESS): "AMQ8012I: IBM MQ process deleted."}
_TITLE = {"Q": "AMQ8409I: Display Queue details.", A.QMGR: "AMQ8408I: Display Queue Manager details.",
          A.QSTATUS: "AMQ8450I: Display queue status details.", A.CONN: "AMQ8276I: Display Connection details.",
          A.TOPIC: "AMQ8633I: Display topic details.", A.TPSTATUS: "AMQ8754I: Display topic status details.",
          A.SUB: "AMQ8096I: Display subscription details.", A.SBSTATUS: "AMQ8099I: Display subscription status.",
          A.NAMELIST: "AMQ8550I: Display namelist details.", CH.CHANNEL: "AMQ8414I: Display Channel details.",
          CH.CHSTATUS: "AMQ8417I: Display Channel Status details.",
          CH.LISTENER: "AMQ8630I: Display listener information details.",
          CH.LSSTATUS: "AMQ8631I: Display listener status details.", A.PROCESS: "AMQ8407I: Display Process details."}
_ERROR = {
    C.MQRC_UNKNOWN_OBJECT_NAME: "AMQ8147E: Object {name} not found.",
    F.MQRCCF_CHANNEL_NOT_FOUND: "AMQ9519E: Channel '{name}' not found.",
    F.MQRCCF_CHL_STATUS_NOT_FOUND: "AMQ8420I: Channel Status not found.",
    F.MQRCCF_CHANNEL_NOT_ACTIVE: "AMQ9533E: Channel '{name}' is not currently active.",
    F.MQRCCF_CHANNEL_IN_USE: "AMQ9514E: Channel '{name}' is in use.",
    F.MQRCCF_CHANNEL_INDOUBT: "AMQ9527E: Channel '{name}' is in doubt.",
    C.MQRC_NOT_AUTHORIZED: "AMQ8135E: Not authorized.",
    F.MQRCCF_CHLAUTH_NOT_FOUND: "AMQ8884E: Channel authentication record not found.",
    F.MQRCCF_CHLAUTH_ALREADY_EXISTS: "AMQ8883E: Channel authentication record already exists.",
    F.MQRCCF_OBJECT_ALREADY_EXISTS: "AMQ8150E: Object {name} already exists (use REPLACE to redefine it).",
    C.MQRC_Q_NOT_EMPTY: "AMQ8143E: Queue {name} is not empty (use PURGE to delete it with its messages).",
    F.MQRCCF_OBJECT_OPEN: "AMQ8148E: Object {name} is in use by an application or has uncommitted messages.",
    F.MQRCCF_OBJECT_WRONG_TYPE: "AMQ8151E: Object {name} exists with another type.",
    F.MQRCCF_LIKE_OBJECT_WRONG_TYPE: "AMQ8151E: The LIKE object is of another type.",
    F.MQRCCF_ATTR_VALUE_ERROR: "AMQ8426E: A value is not valid for its attribute.",
    F.MQRCCF_OBJECT_NAME_ERROR: "AMQ8226E: The name {name} is not a valid object name.",
    F.MQRCCF_Q_WRONG_TYPE: "AMQ8149E: {name} is not a local queue.",
    F.MQRCCF_TOPICSTR_ALREADY_EXISTS: "AMQ8150E: Another topic object already has that topic string.",
    F.MQRCCF_TOPIC_STRING_NOT_FOUND: "AMQ8147E: Topic string {name} not found.",
    C.MQRC_NO_SUBSCRIPTION: "AMQ8147E: Subscription {name} not found.",
    F.MQRCCF_SUB_ALREADY_EXISTS: "AMQ8150E: Subscription {name} already exists (use REPLACE to redefine it).",
}


def reason_name(reason: int) -> str:
    for module in (F, C):
        for key, value in vars(module).items():
            if value == reason and key.startswith(("MQRC_", "MQRCCF_")):
                return key
    return str(reason)


def _parameter_name(objtype: str, selector: Value | None) -> str:
    """`` for KEYWORD`` when a failed response names its parameter (MQIACF_PARAMETER_ID)."""
    if not isinstance(selector, int):
        return ""
    attr = _by_selector(objtype).get(selector)
    if selector == C.MQIA_DEFINITION_TYPE and objtype == A.QMODEL:
        attr = A.QUEUE_BY_NAME["DEFTYPE"]
    return f" for {attr.name}" if attr is not None else f" for parameter {selector}"


def _by_selector(objtype: str) -> dict[int, A.Attr]:
    """The catalog an object type's parameters are read back with."""
    if objtype == A.QMGR:
        return A.QMGR_BY_SELECTOR
    if objtype == A.TOPIC:
        return A.TOPIC_BY_SELECTOR
    if objtype == A.TPSTATUS:  # TYPE(SUB) rows carry subscription status, TYPE(TOPIC) resolved attributes
        return A.SUB_BY_SELECTOR | A.TOPIC_BY_SELECTOR | {a.selector: a for a in A.TPSTATUS_ATTRS}
    if objtype in (A.SUB, A.SBSTATUS):
        return A.SUB_BY_SELECTOR
    if objtype == A.NAMELIST:
        return A.NAMELIST_BY_SELECTOR
    if objtype in CH.ALLOWED["DISPLAY"]:
        return CH.by_selector(objtype)
    if objtype == A.PROCESS:
        return A.PROCESS_BY_SELECTOR
    return A.QUEUE_BY_SELECTOR


def _group(objtype: str) -> str:
    return "Q" if objtype in (A.QLOCAL, A.QALIAS, A.QMODEL, A.QREMOTE, "QUEUE") else objtype


_TYPE_WORD = {C.MQQT_LOCAL: A.QLOCAL, C.MQQT_ALIAS: A.QALIAS, C.MQQT_MODEL: A.QMODEL, C.MQQT_REMOTE: A.QREMOTE}
_STATUS_KIND = {F.MQIACF_Q_STATUS: "QUEUE", F.MQIACF_Q_HANDLE: "HANDLE"}


def keyword_values(objtype: str, params: dict[int, Value]) -> list[tuple[str, str, str | int]]:
    """A response's parameters as MQSC keyword/value pairs (value words from the catalog),
    each with its value for JSON: the number itself where the text is a number."""
    out: list[tuple[str, str, str | int]] = []

    def add(name: str, shown: str, raw: Value | None = None) -> None:
        number = isinstance(raw, int) and not isinstance(raw, bool) and shown == str(raw)
        out.append((name, shown, raw if number else shown))  # type: ignore[arg-type]

    table = _by_selector(objtype)
    qtype = _TYPE_WORD.get(int(params.get(C.MQIA_Q_TYPE, 0) or 0), "")  # type: ignore[arg-type]
    for sel, value in params.items():
        if sel == C.MQCA_Q_NAME:
            add("QUEUE", str(value).strip())
        elif sel == C.MQIA_Q_TYPE:
            add("TYPE", qtype)
        elif sel == C.MQCA_TOPIC_STRING and objtype in (A.TPSTATUS, A.SBSTATUS):
            add("TOPICSTR", str(value))
        elif sel == F.MQIACF_Q_STATUS_TYPE:
            add("TYPE", _STATUS_KIND.get(int(value), str(value)))  # type: ignore[arg-type]
        elif sel == F.MQIACF_CONN_INFO_TYPE:
            add("TYPE", {F.MQIACF_CONN_INFO_CONN: "CONN", F.MQIACF_CONN_INFO_HANDLE: "HANDLE"}.get(int(value), ""))  # type: ignore[arg-type]
        elif sel == C.MQCA_NAMELIST_NAME:
            add("NAMELIST", str(value).strip())
        elif sel == F.MQCACH_CHANNEL_NAME:
            add("CHANNEL", str(value).strip())
        elif sel == F.MQCACH_LISTENER_NAME:
            add("LISTENER", str(value).strip())
        elif sel == F.MQCACF_OBJECT_NAME:
            add("OBJNAME", str(value).strip())
        elif sel == F.MQIACF_OBJECT_TYPE:
            add("OBJTYPE", "QUEUE" if value == C.MQOT_Q else "QMGR")
        elif sel == C.MQIA_DEFINITION_TYPE and qtype == A.QMODEL:
            attr = A.QUEUE_BY_NAME["DEFTYPE"]
            add(attr.name, attr.word(int(value)))  # type: ignore[arg-type]
        else:
            found = (A.STATUS_BY_SELECTOR.get(sel) if objtype in (A.QSTATUS, A.CONN) else None) or table.get(sel)
            if found is not None:
                add(found.name, _show(found, value), value)
    return out


def _show(attr: A.Attr, value: Value) -> str:
    if attr.name == "APPLTYPE" and isinstance(value, int) and A.PROCESS not in attr.types:
        return "SYSTEM" if value == C.MQAT_QMGR else "USER"  # runmqsc's words: a queue-manager process or not
    if isinstance(value, bytes):
        return value.hex().upper()
    if isinstance(value, tuple) and attr.kind == "strings":  # exit lists: as MQSC reads them back
        return ",".join("'" + str(v).rstrip().replace("'", "''") + "'" for v in value)
    if isinstance(value, tuple):  # NAMES: runmqsc writes the list inside the parentheses
        return ", ".join(str(v).strip() for v in value)
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, int) and (attr.kind == "enum" or value in attr.words.values()):
        return attr.word(value)  # an enumeration, or a number with a word for one value (NOLIMIT)
    if isinstance(value, int) and attr.name == "MSGAGE" and value < 0:
        return ""
    return str(value)


def columns(pairs: list[tuple[str, str]]) -> list[str]:
    """runmqsc's two-column layout: 3 blanks, then fields 40 wide, a long one on its own line."""
    cells = [f"{k}({v})" if v != "" else f"{k}( )" for k, v in pairs]
    lines: list[str] = []
    row: list[str] = []
    for cell in cells:
        if len(cell) > 38:
            if row:
                lines.append("   " + row[0])
                row = []
            lines.append("   " + cell)
            continue
        row.append(cell)
        if len(row) == 2:
            lines.append("   " + row[0].ljust(40) + row[1])
            row = []
    if row:
        lines.append("   " + row[0])
    return lines


@dataclass(slots=True)
class Result:
    """One command's outcome, for text and JSON output."""

    number: int
    command: str
    ok: bool
    syntax_error: bool = False
    messages: list[str] = field(default_factory=list)
    objects: list[dict[str, str | int]] = field(default_factory=list)  # numbers as numbers, for JSON
    reason: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"number": self.number, "command": self.command, "ok": self.ok, "syntax_error": self.syntax_error,
                "reason": self.reason, "reason_name": reason_name(self.reason) if self.reason else "",
                "messages": self.messages, "objects": self.objects}


class Session:
    """Feeds commands to ``run`` and keeps runmqsc's counts."""

    def __init__(self, run: Runner) -> None:
        self.run = run
        self.read = 0
        self.syntax_errors = 0
        self.failed = 0
        self.ended = False

    def execute(self, text: str) -> Result:
        """One command (continuations joined)."""
        self.read += 1
        try:
            parsed = parse(text)
            if parsed.verb == "END":
                self.read -= 1
                self.ended = True
                return Result(self.read, text, True)
            cmd = to_command(parsed)
        except MqscSyntaxError as exc:
            self.syntax_errors += 1
            return Result(self.read, text, False, True, ["AMQ8405E: Syntax error detected at or near end of command "
                                                         "segment below:-", f"   {text}", f"   ({exc})"])
        return self._answer(parsed, cmd)

    def _answer(self, p: Parsed, cmd: Command) -> Result:
        responses = self.run(cmd)
        bad = [r for r in responses if r.comp == C.MQCC_FAILED]
        name = p.name or ""
        res = Result(self.read, p.text, not bad)
        if bad:
            self.failed += 1
            r = bad[0]
            res.reason = r.reason
            template = _ERROR.get(r.reason)
            text = template.format(name=name) if template else f"AMQ8101E: Unexpected error ({r.reason})."
            res.messages.append(text)
            about = _parameter_name(p.objtype, r.params.get(F.MQIACF_PARAMETER_ID))
            res.messages.append(f"   reason {r.reason} ({reason_name(r.reason)}){about}"
                                f"{': ' + r.detail if r.detail else ''}")
            return res
        group = _group(p.objtype)
        if p.verb != "DISPLAY":
            res.messages.append(_DONE.get((p.verb, group)) or mqsc_security.DONE[(p.verb, group)])
            return res
        for r in responses:
            if not r.params:
                continue
            if group in mqsc_security.TITLE:
                shown = mqsc_security.keywords(group, r.params)
                res.objects.append(dict(shown))
                res.messages.append(mqsc_security.TITLE[group])
                res.messages.extend(columns(shown))
                continue
            fields = keyword_values(p.objtype, r.params)
            pairs = [(k, shown) for k, shown, _ in fields]
            res.objects.append({k: typed for k, _, typed in fields})
            res.messages.append(_TITLE[group])
            res.messages.extend(columns(pairs))
        return res

    def summary(self) -> list[str]:
        read = "One MQSC command read." if self.read == 1 else f"{self.read or 'No'} MQSC commands read."
        syntax = {0: "No commands have a syntax error.", 1: "One command has a syntax error."}.get(
            self.syntax_errors, f"{self.syntax_errors} commands have a syntax error.")
        failed = {0: "All valid MQSC commands were processed.", 1: "One valid MQSC command could not be processed."}.get(
            self.failed, f"{self.failed} valid MQSC commands could not be processed.")
        return [read, syntax, failed]

    @property
    def exit_code(self) -> int:
        return EXIT_FAILED if self.syntax_errors or self.failed else EXIT_OK

    def script(self, lines: Iterable[str]) -> Iterable[Result]:
        """Every command of a script, until END."""
        for text in commands(iter(lines)):
            result = self.execute(text)
            if self.ended:
                return
            yield result
