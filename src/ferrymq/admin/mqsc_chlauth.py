"""MQSC's SET CHLAUTH and DISPLAY CHLAUTH, as runmqsc spells them, into PCF
(engine.commands.chlauth has the parameters):

    SET CHLAUTH('SYSTEM.*') TYPE(ADDRESSMAP) ADDRESS('*') USERSRC(NOACCESS)
    SET CHLAUTH('APP.SVRCONN') TYPE(USERMAP) CLNTUSER('alice') USERSRC(MAP) MCAUSER('app') ACTION(REPLACE)
    SET CHLAUTH('*') TYPE(BLOCKUSER) USERLIST('*MQADMIN') ACTION(REPLACE)
    SET CHLAUTH('*') TYPE(BLOCKADDR) ADDRLIST('192.0.2.*', '198.51.100.1-20')
    DISPLAY CHLAUTH(*) [TYPE(...)] [MATCH(GENERIC|EXACT|ALL)]
    DISPLAY CHLAUTH('APP.SVRCONN') MATCH(RUNCHECK) ADDRESS('127.0.0.1') CLNTUSER('alice')

User names are case-sensitive: quote them (an unquoted value is upper-cased, as everywhere
in MQSC).
"""

from __future__ import annotations

from ferrymq.admin import Keyword, single
from ferrymq.engine import chlauth as X
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.model import Command, Value

CHLAUTH = "CHLAUTH"
DONE = "AMQ8877I: IBM MQ channel authentication record set."
TITLE = "AMQ8878I: Display channel authentication record details."
_ACTIONS = {"ADD": F.MQACT_ADD, "REPLACE": F.MQACT_REPLACE, "REMOVE": F.MQACT_REMOVE, "REMOVEALL": F.MQACT_REMOVEALL}
_MATCHES = {"GENERIC": F.MQMATCH_GENERIC, "RUNCHECK": F.MQMATCH_RUNCHECK, "EXACT": F.MQMATCH_EXACT,
            "ALL": F.MQMATCH_ALL}
_TEXT = {"ADDRESS": F.MQCACH_CONNECTION_NAME, "CLNTUSER": F.MQCACH_CLIENT_USER_ID, "QMNAME": C.MQCA_REMOTE_Q_MGR_NAME,
         "SSLPEER": F.MQCACH_SSL_PEER_NAME, "SSLCERTI": F.MQCACH_SSL_CERT_ISSUER_NAME,
         "MCAUSER": F.MQCACH_MCA_USER_ID, "DESCR": C.MQCA_CHLAUTH_DESC}
_LISTS = {"USERLIST": F.MQCACH_MCA_USER_ID_LIST, "ADDRLIST": F.MQCACH_CONNECTION_NAME_LIST}
_SHOWN = ("CHCKCLNT", "CLNTUSER", "QMNAME", "SSLPEER", "SSLCERTI", "ADDRESS", "ADDRLIST", "USERLIST", "MCAUSER",
          "USERSRC", "WARN", "DESCR", "ALTDATE", "ALTTIME", "CUSTOM")


class ChlauthSyntaxError(ValueError):
    """A CHLAUTH command that does not parse."""


def _items(value: str | tuple[str, ...] | None) -> tuple[str, ...]:
    """USERLIST and ADDRLIST: a list of quoted items (a tuple), or the text of one or more
    unquoted ones separated by commas."""
    if isinstance(value, tuple):
        return tuple(v.strip() for v in value if v.strip())
    return tuple(v.strip().strip("'").strip() for v in (value or "").split(",") if v.strip().strip("'").strip())


def _word(value: str | None, words: dict[str, int], keyword: str) -> int:
    code = words.get((value or "").strip().upper())
    if code is None:
        raise ChlauthSyntaxError(f"{keyword} is one of {', '.join(words)}")
    return code


def to_command(verb: str, name: str, keywords: list[Keyword]) -> Command:
    """SET or DISPLAY CHLAUTH(name) as its PCF Command.

    Raises:
        ChlauthSyntaxError: a keyword or value the command does not take.
    """
    params: dict[int, Value] = {F.MQCACH_CHANNEL_NAME: name}
    for word, raw in keywords:
        if word in _LISTS and verb == "SET":
            params[_LISTS[word]] = _items(raw)
            continue
        value = single(word, raw)
        if word == "TYPE":
            words = {"ALL": F.MQCAUT_ALL, **X.WORD_TYPES} if verb == "DISPLAY" else X.WORD_TYPES
            params[F.MQIACF_CHLAUTH_TYPE] = _word(value, words, "TYPE")
        elif verb == "DISPLAY" and word == "MATCH":
            params[F.MQIACH_MATCH] = _word(value, _MATCHES, "MATCH")
        elif verb == "DISPLAY" and word in ("ADDRESS", "CLNTUSER", "QMNAME", "SSLPEER", "SSLCERTI") and value:
            params[_TEXT[word]] = value
        elif verb == "DISPLAY" and word in ("ALL", *_SHOWN) and value is None:
            continue
        elif verb == "SET" and word in _TEXT and value is not None:
            params[_TEXT[word]] = value
        elif verb == "SET" and word == "USERSRC":
            params[F.MQIACH_USER_SOURCE] = _word(value, X.WORD_USERSRC, "USERSRC")
        elif verb == "SET" and word == "CHCKCLNT":
            params[C.MQIA_CHECK_CLIENT_BINDING] = _word(value, X.WORD_CHCKCLNT, "CHCKCLNT")
        elif verb == "SET" and word == "WARN":
            params[F.MQIACH_WARNING] = _word(value, {"NO": C.MQWARN_NO, "YES": C.MQWARN_YES}, "WARN")
        elif verb == "SET" and word == "ACTION":
            params[F.MQIACF_ACTION] = _word(value, _ACTIONS, "ACTION")
        else:
            raise ChlauthSyntaxError(f"{verb} CHLAUTH does not take {word}({value or ''})")
    if verb == "SET":
        if F.MQIACF_CHLAUTH_TYPE not in params:
            raise ChlauthSyntaxError("SET CHLAUTH needs TYPE(BLOCKUSER|BLOCKADDR|SSLPEERMAP|ADDRESSMAP|USERMAP|QMGRMAP)")
        return Command(F.MQCMD_SET_CHLAUTH_REC, params)
    return Command(F.MQCMD_INQUIRE_CHLAUTH_RECS, params)


def keywords(params: dict[int, Value]) -> list[tuple[str, str]]:
    """One INQUIRE_CHLAUTH_RECS answer as DISPLAY CHLAUTH shows it."""
    kind = params.get(F.MQIACF_CHLAUTH_TYPE)
    out = [("CHLAUTH", str(params.get(F.MQCACH_CHANNEL_NAME, "")).strip()),
           ("TYPE", X.TYPE_WORDS.get(int(kind), str(kind)) if isinstance(kind, int) else "")]
    for word, selector in (("DESCR", C.MQCA_CHLAUTH_DESC), ("CUSTOM", C.MQCA_CUSTOM)):
        out.append((word, str(params.get(selector, "")).strip()))
    for word, selector in (("SSLPEER", F.MQCACH_SSL_PEER_NAME), ("SSLCERTI", F.MQCACH_SSL_CERT_ISSUER_NAME),
                           ("CLNTUSER", F.MQCACH_CLIENT_USER_ID), ("QMNAME", C.MQCA_REMOTE_Q_MGR_NAME),
                           ("ADDRESS", F.MQCACH_CONNECTION_NAME)):
        if selector in params:
            out.append((word, str(params[selector]).strip()))
    for word, selector in (("USERLIST", F.MQCACH_MCA_USER_ID_LIST), ("ADDRLIST", F.MQCACH_CONNECTION_NAME_LIST)):
        value = params.get(selector)
        if isinstance(value, tuple):
            out.append((word, ",".join(str(v).strip() for v in value)))
    chck = params.get(C.MQIA_CHECK_CLIENT_BINDING)
    if isinstance(chck, int):
        out.append(("CHCKCLNT", X.CHCKCLNT_WORDS.get(chck, str(chck))))
    src = params.get(F.MQIACH_USER_SOURCE)
    if isinstance(src, int):
        out.append(("USERSRC", X.USERSRC_WORDS.get(src, str(src))))
        out.append(("MCAUSER", str(params.get(F.MQCACH_MCA_USER_ID, "")).strip()))
    out.append(("WARN", "YES" if params.get(F.MQIACH_WARNING) == C.MQWARN_YES else "NO"))
    out.append(("ALTDATE", str(params.get(C.MQCA_ALTERATION_DATE, "")).strip()))
    out.append(("ALTTIME", str(params.get(C.MQCA_ALTERATION_TIME, "")).strip()))
    return out
