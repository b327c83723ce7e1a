"""MQSC's security commands, as runmqsc spells them, into the PCF command model:

    SET AUTHREC PROFILE(APP.**) OBJTYPE(QUEUE) PRINCIPAL('app') AUTHADD(GET,PUT,INQ)
    SET AUTHREC PROFILE(APP.Q) OBJTYPE(QUEUE) GROUP('apps') AUTHRMV(PUT)
    SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('app') AUTHADD(CONNECT)
    DELETE AUTHREC PROFILE(APP.Q) OBJTYPE(QUEUE) PRINCIPAL('app')
    DISPLAY AUTHREC [PROFILE(APP.Q)] [OBJTYPE(QUEUE)] [PRINCIPAL('app') | GROUP('apps')]
    DISPLAY ENTAUTH PRINCIPAL('app') OBJNAME(APP.Q) OBJTYPE(QUEUE)
    ALTER AUTHINFO(SYSTEM.DEFAULT.AUTHINFO.IDPWOS) AUTHTYPE(IDPWOS) CHCKCLNT(REQUIRED) FAILDLAY(1)
    DISPLAY AUTHINFO(*)

Principal and group names are case-sensitive: quote them (an unquoted value is upper-cased,
as everywhere in MQSC). Authorities are IBM's words (engine.authority.AUTH_WORDS) plus ALL,
ALLMQI, ALLADM and NONE; object types QUEUE, QMGR, TOPIC, NAMELIST ...
"""

from __future__ import annotations

import re

from ferrymq.admin import Keyword, mqsc_chlauth, single
from ferrymq.engine import authority as Z
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.model import Command, Value

AUTHREC, ENTAUTH, AUTHINFO, CHLAUTH = "AUTHREC", "ENTAUTH", "AUTHINFO", mqsc_chlauth.CHLAUTH
TYPES = {"AUTHREC": AUTHREC, "ENTAUTH": ENTAUTH, "AUTHINFO": AUTHINFO, "CHLAUTH": CHLAUTH}
ALLOWED = {"SET": (AUTHREC, CHLAUTH), "DELETE": (AUTHREC,), "DISPLAY": (AUTHREC, ENTAUTH, AUTHINFO, CHLAUTH),
           "ALTER": (AUTHINFO,)}
NAMELESS = {AUTHREC, ENTAUTH}  # they take their names as keywords, not in parentheses
_CHECKS = {"NONE": F.MQCHK_NONE, "OPTIONAL": F.MQCHK_OPTIONAL, "REQUIRED": F.MQCHK_REQUIRED,
           "REQDADM": F.MQCHK_REQUIRED_ADMIN}
_CHECK_WORDS = {v: k for k, v in _CHECKS.items()}
DONE = {("SET", AUTHREC): "AMQ8862I: IBM MQ authority record set.",
        ("DELETE", AUTHREC): "AMQ8863I: IBM MQ authority record deleted.",
        ("ALTER", AUTHINFO): "AMQ8567I: IBM MQ authentication information changed.",
        ("SET", CHLAUTH): mqsc_chlauth.DONE}
TITLE = {AUTHREC: "AMQ8864I: Display authority record details.",
         ENTAUTH: "AMQ8866I: Display entity authority details.",
         AUTHINFO: "AMQ8566I: Display authentication information details.",
         CHLAUTH: mqsc_chlauth.TITLE}


class SecuritySyntaxError(ValueError):
    """A security command that does not parse (mqsc turns it into its MqscSyntaxError)."""


def _auth_list(value: str | None, word: str) -> tuple[int, ...]:
    out = []
    for item in re.split(r"[\s,]+", (value or "").strip()):
        if not item:
            continue
        code = Z.GROUP_WORDS.get(item, Z.WORD_AUTHS.get(item))
        if code is None:
            raise SecuritySyntaxError(f"{word}: {item} is not an authority ({', '.join(sorted(Z.WORD_AUTHS))}, "
                                      "ALL, ALLMQI, ALLADM, NONE)")
        out.append(code)
    if not out:
        raise SecuritySyntaxError(f"{word} needs a list of authorities")
    return tuple(out)


def _objtype(value: str | None) -> int:
    code = Z.WORD_OBJTYPES.get((value or "").strip())
    if code is None:
        raise SecuritySyntaxError(f"OBJTYPE is one of {', '.join(sorted(Z.WORD_OBJTYPES))}")
    return code


def to_command(verb: str, objtype: str, name: str | None, keywords: list[Keyword]) -> Command:
    """The Command for a security MQSC command.

    Raises:
        SecuritySyntaxError: a keyword or value it does not take.
    """
    if objtype == AUTHINFO:
        return _authinfo(verb, name or "", keywords)
    if objtype == CHLAUTH:
        try:
            return mqsc_chlauth.to_command(verb, name or "", keywords)
        except mqsc_chlauth.ChlauthSyntaxError as exc:
            raise SecuritySyntaxError(str(exc)) from None
    params: dict[int, Value] = {}
    for word, value in ((w, single(w, v)) for w, v in keywords):
        if (word == "PROFILE" and value) or (word == "OBJNAME" and value and objtype == ENTAUTH):
            params[F.MQCACF_AUTH_PROFILE_NAME] = value
        elif word == "OBJTYPE":
            params[F.MQIACF_OBJECT_TYPE] = _objtype(value)
        elif word in ("PRINCIPAL", "GROUP") and value:
            if verb == "SET" or verb == "DELETE":
                key = F.MQCACF_PRINCIPAL_ENTITY_NAMES if word == "PRINCIPAL" else F.MQCACF_GROUP_ENTITY_NAMES
                params[key] = (value,)
            else:
                params[F.MQCACF_ENTITY_NAME] = value
                params[F.MQIACF_ENTITY_TYPE] = 1 if word == "PRINCIPAL" else 2
        elif word == "AUTHADD" and verb == "SET":
            params[F.MQIACF_AUTH_ADD_AUTHS] = _auth_list(value, word)
        elif word == "AUTHRMV" and verb == "SET":
            params[F.MQIACF_AUTH_REMOVE_AUTHS] = _auth_list(value, word)
        elif verb == "DISPLAY" and word in ("ALL", "MATCH", "SERVCOMP"):
            continue
        else:
            raise SecuritySyntaxError(f"{verb} {objtype} does not take {word}")
    if verb in ("SET", "DELETE"):
        if F.MQIACF_OBJECT_TYPE not in params or (F.MQCACF_AUTH_PROFILE_NAME not in params
                                                   and params[F.MQIACF_OBJECT_TYPE] != C.MQOT_Q_MGR):
            # IBM's: PROFILE may be left out for OBJTYPE(QMGR), whose profile is the queue manager
            raise SecuritySyntaxError(f"{verb} AUTHREC needs OBJTYPE(...), and PROFILE(...) unless OBJTYPE(QMGR)")
        if F.MQCACF_PRINCIPAL_ENTITY_NAMES not in params and F.MQCACF_GROUP_ENTITY_NAMES not in params:
            raise SecuritySyntaxError(f"{verb} AUTHREC needs PRINCIPAL(...) or GROUP(...)")
        return Command(F.MQCMD_SET_AUTH_REC if verb == "SET" else F.MQCMD_DELETE_AUTH_REC, params)
    if objtype == ENTAUTH:
        if F.MQCACF_ENTITY_NAME not in params or F.MQIACF_OBJECT_TYPE not in params:
            raise SecuritySyntaxError("DISPLAY ENTAUTH needs PRINCIPAL(...) or GROUP(...), and OBJTYPE(...)")
        return Command(F.MQCMD_INQUIRE_ENTITY_AUTH, params)
    return Command(F.MQCMD_INQUIRE_AUTH_RECS, params)


def _authinfo(verb: str, name: str, keywords: list[Keyword]) -> Command:
    params: dict[int, Value] = {C.MQCA_AUTH_INFO_NAME: name}
    for word, value in ((w, single(w, v)) for w, v in keywords):
        if verb == "DISPLAY":
            if word in ("ALL", "AUTHTYPE", "CHCKCLNT", "CHCKLOCL", "ADOPTCTX", "FAILDLAY", "DESCR"):
                continue
            raise SecuritySyntaxError(f"DISPLAY AUTHINFO does not take {word}")
        if word == "AUTHTYPE" and value == "IDPWOS":
            continue
        if word in ("CHCKCLNT", "CHCKLOCL") and value in _CHECKS:
            params[C.MQIA_CHECK_CLIENT_BINDING if word == "CHCKCLNT" else C.MQIA_CHECK_LOCAL_BINDING] = _CHECKS[value]
        elif word == "ADOPTCTX" and value in ("YES", "NO"):
            params[C.MQIA_ADOPT_CONTEXT] = 1 if value == "YES" else 0
        elif word == "FAILDLAY" and value is not None and value.isdigit():
            params[C.MQIA_AUTHENTICATION_FAIL_DELAY] = int(value)
        elif word == "DESCR" and value is not None:
            params[C.MQCA_AUTH_INFO_DESC] = value
        else:
            raise SecuritySyntaxError(f"ALTER AUTHINFO does not take {word}({value or ''}); it takes AUTHTYPE(IDPWOS), "
                                      "CHCKCLNT, CHCKLOCL (NONE|OPTIONAL|REQUIRED|REQDADM), ADOPTCTX(YES|NO), "
                                      "FAILDLAY(seconds), DESCR")
    if verb == "DISPLAY":
        return Command(F.MQCMD_INQUIRE_AUTH_INFO, params)
    return Command(F.MQCMD_CHANGE_AUTH_INFO, params)


def keywords(objtype: str, params: dict[int, Value]) -> list[tuple[str, str]]:
    """A security response's parameters as MQSC keyword/value pairs."""
    if objtype == CHLAUTH:
        return mqsc_chlauth.keywords(params)
    if objtype == AUTHINFO:
        adopt = params.get(C.MQIA_ADOPT_CONTEXT)
        return [("AUTHINFO", str(params.get(C.MQCA_AUTH_INFO_NAME, "")).strip()), ("AUTHTYPE", "IDPWOS"),
                ("ADOPTCTX", "YES" if adopt else "NO"), ("DESCR", str(params.get(C.MQCA_AUTH_INFO_DESC, "")).strip()),
                ("CHCKCLNT", _CHECK_WORDS.get(int(params.get(C.MQIA_CHECK_CLIENT_BINDING, 0)), "?")),  # type: ignore[arg-type]
                ("CHCKLOCL", _CHECK_WORDS.get(int(params.get(C.MQIA_CHECK_LOCAL_BINDING, 0)), "?")),  # type: ignore[arg-type]
                ("FAILDLAY", str(params.get(C.MQIA_AUTHENTICATION_FAIL_DELAY, "")))]
    auths = params.get(F.MQIACF_AUTHORIZATION_LIST, ())
    words = [Z.AUTH_WORDS[a] for a in auths if a in Z.AUTH_WORDS] if isinstance(auths, tuple) else []
    kind = params.get(F.MQIACF_ENTITY_TYPE)
    objtype_code = params.get(F.MQIACF_OBJECT_TYPE)
    return [("PROFILE" if objtype == AUTHREC else "OBJECT", str(params.get(F.MQCACF_AUTH_PROFILE_NAME, "")).strip()),
            ("ENTITY", str(params.get(F.MQCACF_ENTITY_NAME, "")).strip()),
            ("ENTTYPE", "PRINCIPAL" if kind == 1 else "GROUP"),
            ("OBJTYPE", Z.OBJTYPE_WORDS.get(int(objtype_code), str(objtype_code)) if isinstance(objtype_code, int)
             else ""),
            ("AUTHLIST", ",".join(words) or "NONE")]
