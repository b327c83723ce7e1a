"""The attribute catalog: every attribute of every object the engine has, once.

One entry gives an attribute's MQSC keyword, its MQIA_/MQCA_ selector (for MQINQ, MQSET
and PCF), its kind, its range or value words, its default, and the object types that
have it. The engine's admin API, MQINQ/MQSET, and later MQSC and PCF all read this table,
so the rules exist once.

Values are stored as int (numbers and enumerations) or str (names, descriptions).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ferrymq.errors import failed
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C

QLOCAL = "QLOCAL"
QALIAS = "QALIAS"
QMODEL = "QMODEL"
QREMOTE = "QREMOTE"
QMGR = "QMGR"
TOPIC = "TOPIC"
NAMELIST = "NAMELIST"
PROCESS = "PROCESS"
QUEUE_TYPES = (QLOCAL, QALIAS, QMODEL, QREMOTE)
ALL_Q = frozenset({QLOCAL, QALIAS, QMODEL})  # the queues a message is put to or got from here
ANY_Q = frozenset(QUEUE_TYPES)  # every queue definition, remote ones (QREMOTE) included
_R = {QREMOTE}
LOCAL_LIKE = frozenset({QLOCAL, QMODEL})
ENQ = frozenset({QLOCAL, QALIAS, QMODEL})


@dataclass(frozen=True, slots=True)
class Attr:
    """One attribute. ``words`` maps MQSC value words to their integer values."""

    name: str
    selector: int
    # "int", "enum", "str", "bytes" (shown in hex), "list" (NAMES: a tuple, set by its registry),
    # "strings" (a channel's exit lists: a tuple, an MQCFSL, set by engine.channels)
    kind: str
    default: int | str
    types: frozenset[str]
    words: dict[str, int] = field(default_factory=dict)
    low: int = 0
    high: int = 999_999_999
    length: int = 48
    readonly: bool = False  # status, not definition: never set by DEFINE/ALTER
    settable: bool = False  # may be changed by MQSET
    synonyms: tuple[str, ...] = ()

    def word(self, value: int) -> str:
        for w, v in self.words.items():
            if v == value:
                return w
        return str(value)

    def check(self, value: object) -> int | str:
        """Coerce and validate one value for this attribute.

        Raises:
            MQError: a value outside the attribute's range or words (MQRC_INHIBIT_VALUE_ERROR,
                the reason MQSET uses) or text too long (MQRC_CHAR_ATTR_LENGTH_ERROR); the
                detail names the attribute and what it accepts.
        """
        if self.kind == "str":
            if not isinstance(value, str):
                raise failed(C.MQRC_CHAR_ATTR_LENGTH_ERROR, f"{self.name} takes text, not {value!r}")
            text = value.rstrip()
            if len(text) > self.length:
                raise failed(C.MQRC_CHAR_ATTR_LENGTH_ERROR, f"{self.name} holds at most {self.length} characters, got {len(text)}")
            return text
        if isinstance(value, str):
            key = value.strip().upper()
            if key in self.words:
                return self.words[key]
            try:
                value = int(key)
            except ValueError:
                allowed = ", ".join(self.words) or f"{self.low}..{self.high}"
                raise failed(C.MQRC_INHIBIT_VALUE_ERROR, f"{self.name}({value}) is not one of {allowed}") from None
        if not isinstance(value, int) or (isinstance(value, bool) and self.kind != "enum"):
            raise failed(C.MQRC_INHIBIT_VALUE_ERROR, f"{self.name} takes a number, not {value!r}")
        number = int(value)
        if self.kind == "enum":
            if number not in self.words.values():
                allowed = ", ".join(f"{w}={v}" for w, v in self.words.items())
                raise failed(C.MQRC_INHIBIT_VALUE_ERROR, f"{self.name} value {number} is not one of {allowed}")
        elif number not in self.words.values() and not self.low <= number <= self.high:
            raise failed(C.MQRC_INHIBIT_VALUE_ERROR, f"{self.name}({number}) is outside {self.low}..{self.high}")
        return number


def _int(name: str, sel: int, default: int, types: Iterable[str], low: int = 0, high: int = 999_999_999, **kw: object) -> Attr:
    return Attr(name, sel, "int", default, frozenset(types), low=low, high=high, **kw)  # type: ignore[arg-type]


def _enum(name: str, sel: int, default: int, types: Iterable[str], words: dict[str, int], **kw: object) -> Attr:
    return Attr(name, sel, "enum", default, frozenset(types), words=words, **kw)  # type: ignore[arg-type]


def _str(name: str, sel: int, default: str, types: Iterable[str], length: int = 48, **kw: object) -> Attr:
    return Attr(name, sel, "str", default, frozenset(types), length=length, **kw)  # type: ignore[arg-type]


ENABLED_DISABLED = {"ENABLED": 0, "DISABLED": 1}
YES_NO = {"NO": 0, "YES": 1}
EVENT_WORDS = {"DISABLED": F.MQEVR_DISABLED, "ENABLED": F.MQEVR_ENABLED}  # MQEVR_*: event switches
ON_OFF = {"OFF": C.MQMON_OFF, "ON": C.MQMON_ON}  # MQMON_*: statistics and accounting switches
MONITOR_QMGR_WORDS = {**ON_OFF, "NONE": C.MQMON_NONE}  # NONE: off whatever the queues say
MONITOR_QUEUE_WORDS = {"QMGR": C.MQMON_Q_MGR, **ON_OFF}
# STATCHL: collection levels (ferrymq collects the same at each; IBM's LOW/MEDIUM/HIGH only
# weigh how often it samples)
CHANNEL_MONITOR_WORDS = {"OFF": C.MQMON_OFF, "LOW": C.MQMON_LOW, "MEDIUM": C.MQMON_MEDIUM, "HIGH": C.MQMON_HIGH}

QUEUE_ATTRS: tuple[Attr, ...] = (
    _str("DESCR", C.MQCA_Q_DESC, "", ANY_Q, length=64),
    _enum("PUT", C.MQIA_INHIBIT_PUT, C.MQQA_PUT_ALLOWED, ANY_Q, ENABLED_DISABLED, settable=True),
    _enum("GET", C.MQIA_INHIBIT_GET, C.MQQA_GET_ALLOWED, ALL_Q, ENABLED_DISABLED, settable=True),
    _int("DEFPRTY", C.MQIA_DEF_PRIORITY, 0, ANY_Q, high=9),
    _enum("DEFPSIST", C.MQIA_DEF_PERSISTENCE, C.MQPER_NOT_PERSISTENT, ANY_Q, YES_NO),
    _enum("DEFPRESP", C.MQIA_DEF_PUT_RESPONSE_TYPE, C.MQPRT_SYNC_RESPONSE, ANY_Q,
          {"SYNC": C.MQPRT_SYNC_RESPONSE, "ASYNC": C.MQPRT_ASYNC_RESPONSE}),
    _enum("DEFREADA", C.MQIA_DEF_READ_AHEAD, C.MQREADA_NO, ALL_Q,
          {"NO": C.MQREADA_NO, "YES": C.MQREADA_YES, "DISABLED": C.MQREADA_DISABLED}),
    _enum("PROPCTL", C.MQIA_PROPERTY_CONTROL, C.MQPROP_COMPATIBILITY, ALL_Q,
          {"COMPAT": C.MQPROP_COMPATIBILITY, "NONE": C.MQPROP_NONE, "ALL": C.MQPROP_ALL,
           "FORCE": C.MQPROP_FORCE_MQRFH2, "V6COMPAT": C.MQPROP_V6COMPAT}),
    _int("MAXDEPTH", C.MQIA_MAX_Q_DEPTH, 5000, LOCAL_LIKE),
    _int("MAXMSGL", C.MQIA_MAX_MSG_LENGTH, 4_194_304, LOCAL_LIKE, high=104_857_600),
    _int("BOTHRESH", C.MQIA_BACKOUT_THRESHOLD, 0, LOCAL_LIKE),
    _str("BOQNAME", C.MQCA_BACKOUT_REQ_Q_NAME, "", LOCAL_LIKE),
    _enum("HARDENBO", C.MQIA_HARDEN_GET_BACKOUT, C.MQQA_BACKOUT_HARDENED, LOCAL_LIKE,
          {"NOHARDENBO": 0, "HARDENBO": 1}),
    _enum("SHARE", C.MQIA_SHAREABILITY, C.MQQA_SHAREABLE, LOCAL_LIKE, {"NOSHARE": 0, "SHARE": 1}),
    _enum("DEFSOPT", C.MQIA_DEF_INPUT_OPEN_OPTION, C.MQOO_INPUT_SHARED, LOCAL_LIKE,
          {"EXCL": C.MQOO_INPUT_EXCLUSIVE, "SHARED": C.MQOO_INPUT_SHARED}),
    _enum("MSGDLVSQ", C.MQIA_MSG_DELIVERY_SEQUENCE, C.MQMDS_PRIORITY, LOCAL_LIKE,
          {"PRIORITY": C.MQMDS_PRIORITY, "FIFO": C.MQMDS_FIFO}),
    _enum("USAGE", C.MQIA_USAGE, C.MQUS_NORMAL, LOCAL_LIKE, {"NORMAL": C.MQUS_NORMAL, "XMITQ": C.MQUS_TRANSMISSION}),
    _enum("TRIGGER", C.MQIA_TRIGGER_CONTROL, C.MQTC_OFF, LOCAL_LIKE, {"NOTRIGGER": C.MQTC_OFF, "TRIGGER": C.MQTC_ON},
          settable=True),
    _enum("TRIGTYPE", C.MQIA_TRIGGER_TYPE, C.MQTT_FIRST, LOCAL_LIKE,
          {"NONE": C.MQTT_NONE, "FIRST": C.MQTT_FIRST, "EVERY": C.MQTT_EVERY, "DEPTH": C.MQTT_DEPTH}, settable=True),
    _int("TRIGDPTH", C.MQIA_TRIGGER_DEPTH, 1, LOCAL_LIKE, low=1, settable=True),
    _int("TRIGMPRI", C.MQIA_TRIGGER_MSG_PRIORITY, 0, LOCAL_LIKE, high=9, settable=True),
    _str("TRIGDATA", C.MQCA_TRIGGER_DATA, "", LOCAL_LIKE, length=64, settable=True),
    _str("INITQ", C.MQCA_INITIATION_Q_NAME, "", LOCAL_LIKE),
    _str("PROCESS", C.MQCA_PROCESS_NAME, "", LOCAL_LIKE),
    _int("RETINTVL", C.MQIA_RETENTION_INTERVAL, 999_999_999, LOCAL_LIKE),
    _int("QDEPTHHI", C.MQIA_Q_DEPTH_HIGH_LIMIT, 80, LOCAL_LIKE, high=100),
    _int("QDEPTHLO", C.MQIA_Q_DEPTH_LOW_LIMIT, 20, LOCAL_LIKE, high=100),
    # Performance events (engine.events): the queue manager switches these as events happen.
    _enum("QDPHIEV", C.MQIA_Q_DEPTH_HIGH_EVENT, F.MQEVR_DISABLED, LOCAL_LIKE, EVENT_WORDS),
    _enum("QDPLOEV", C.MQIA_Q_DEPTH_LOW_EVENT, F.MQEVR_DISABLED, LOCAL_LIKE, EVENT_WORDS),
    _enum("QDPMAXEV", C.MQIA_Q_DEPTH_MAX_EVENT, F.MQEVR_ENABLED, LOCAL_LIKE, EVENT_WORDS),
    _enum("QSVCIEV", C.MQIA_Q_SERVICE_INTERVAL_EVENT, F.MQQSIE_NONE, LOCAL_LIKE,
          {"NONE": F.MQQSIE_NONE, "HIGH": F.MQQSIE_HIGH, "OK": F.MQQSIE_OK}),
    _int("QSVCINT", C.MQIA_Q_SERVICE_INTERVAL, 999_999_999, LOCAL_LIKE),  # milliseconds
    # Statistics and accounting (engine.monitoring): QMGR defers to the queue manager's STATQ/ACCTQ.
    _enum("STATQ", C.MQIA_STATISTICS_Q, C.MQMON_Q_MGR, LOCAL_LIKE, MONITOR_QUEUE_WORDS),
    _enum("ACCTQ", C.MQIA_ACCOUNTING_Q, C.MQMON_Q_MGR, LOCAL_LIKE, MONITOR_QUEUE_WORDS),
    _enum("DISTL", C.MQIA_DIST_LISTS, C.MQDL_NOT_SUPPORTED, LOCAL_LIKE, YES_NO, settable=True),
    _enum("DEFTYPE", C.MQIA_DEFINITION_TYPE, C.MQQDT_TEMPORARY_DYNAMIC, {QMODEL},
          {"PERMDYN": C.MQQDT_PERMANENT_DYNAMIC, "TEMPDYN": C.MQQDT_TEMPORARY_DYNAMIC}),
    _str("TARGET", C.MQCA_BASE_Q_NAME, "", {QALIAS}, synonyms=("TARGQ",)),
    _enum("TARGTYPE", C.MQIA_BASE_TYPE, C.MQOT_Q, {QALIAS}, {"QUEUE": C.MQOT_Q}),
    # Remote queue definitions, queue-manager aliases (blank RNAME) and reply-to aliases
    # (engine.remote). SCOPE's values are MQSCO_Q_MGR (1) and MQSCO_CELL (2), which the
    # generated constants lack (the name collides with the MQSCO structure's).
    _str("RNAME", C.MQCA_REMOTE_Q_NAME, "", _R),
    _str("RQMNAME", C.MQCA_REMOTE_Q_MGR_NAME, "", _R),
    _str("XMITQ", C.MQCA_XMIT_Q_NAME, "", _R),
    _str("CLUSTER", C.MQCA_CLUSTER_NAME, "", _R, length=C.MQ_CLUSTER_NAME_LENGTH),
    _enum("SCOPE", C.MQIA_SCOPE, 1, _R, {"QMGR": 1, "CELL": 2}),
)

# Status of a queue: displayed and inquired, never defined.
QUEUE_STATUS_ATTRS: tuple[Attr, ...] = (
    _str("QUEUE", C.MQCA_Q_NAME, "", ANY_Q, readonly=True),
    _enum("QTYPE", C.MQIA_Q_TYPE, C.MQQT_LOCAL, ANY_Q,
          {QLOCAL: C.MQQT_LOCAL, QALIAS: C.MQQT_ALIAS, QMODEL: C.MQQT_MODEL, QREMOTE: C.MQQT_REMOTE}, readonly=True),
    _int("CURDEPTH", C.MQIA_CURRENT_Q_DEPTH, 0, LOCAL_LIKE, readonly=True),
    _int("IPPROCS", C.MQIA_OPEN_INPUT_COUNT, 0, LOCAL_LIKE, readonly=True),
    _int("OPPROCS", C.MQIA_OPEN_OUTPUT_COUNT, 0, LOCAL_LIKE, readonly=True),
    _enum("QDEFTYPE", C.MQIA_DEFINITION_TYPE, C.MQQDT_PREDEFINED, {QLOCAL},
          {"PREDEFINED": C.MQQDT_PREDEFINED, "PERMDYN": C.MQQDT_PERMANENT_DYNAMIC,
           "TEMPDYN": C.MQQDT_TEMPORARY_DYNAMIC}, readonly=True),
    _str("CRDATE", C.MQCA_CREATION_DATE, "", ANY_Q, length=12, readonly=True),
    _str("CRTIME", C.MQCA_CREATION_TIME, "", ANY_Q, length=8, readonly=True),
    _str("ALTDATE", C.MQCA_ALTERATION_DATE, "", ANY_Q, length=12, readonly=True),
    _str("ALTTIME", C.MQCA_ALTERATION_TIME, "", ANY_Q, length=8, readonly=True),
)

QMGR_ATTRS: tuple[Attr, ...] = (
    _str("QMNAME", C.MQCA_Q_MGR_NAME, "", {QMGR}, readonly=True),
    _str("DESCR", C.MQCA_Q_MGR_DESC, "", {QMGR}, length=64),
    _int("CCSID", C.MQIA_CODED_CHAR_SET_ID, 1208, {QMGR}, low=1, high=65535),
    _str("DEADQ", C.MQCA_DEAD_LETTER_Q_NAME, "SYSTEM.DEAD.LETTER.QUEUE", {QMGR}),
    _int("MAXMSGL", C.MQIA_MAX_MSG_LENGTH, 4_194_304, {QMGR}, low=32_768, high=104_857_600),
    _int("MAXUMSGS", C.MQIA_MAX_UNCOMMITTED_MSGS, 10_000, {QMGR}, low=1),
    # Bytes of property names and values one message may carry; NOLIMIT (-1) is the default.
    _int("MAXPROPL", C.MQIA_MAX_PROPERTIES_LENGTH, C.MQPROP_UNRESTRICTED_LENGTH, {QMGR}, low=-1, high=104_857_600,
         words={"NOLIMIT": C.MQPROP_UNRESTRICTED_LENGTH}),
    _int("MAXHANDS", C.MQIA_MAX_HANDLES, 256, {QMGR}, low=1),
    _int("EXPRYINT", C.MQIA_EXPIRY_INTERVAL, 1800, {QMGR}),
    # Milliseconds between the extra trigger messages of a TRIGTYPE(FIRST) queue that is not empty.
    _int("TRIGINT", C.MQIA_TRIGGER_INTERVAL, 999_999_999, {QMGR}),
    _str("DEFXMITQ", C.MQCA_DEF_XMIT_Q_NAME, "", {QMGR}),
    # Instrumentation events (engine.events): which kinds the queue manager reports.
    _enum("PERFMEV", C.MQIA_PERFORMANCE_EVENT, F.MQEVR_DISABLED, {QMGR}, EVENT_WORDS),
    _enum("INHIBTEV", C.MQIA_INHIBIT_EVENT, F.MQEVR_DISABLED, {QMGR}, EVENT_WORDS),
    _enum("LOCALEV", C.MQIA_LOCAL_EVENT, F.MQEVR_DISABLED, {QMGR}, EVENT_WORDS),
    _enum("STRSTPEV", C.MQIA_START_STOP_EVENT, F.MQEVR_ENABLED, {QMGR}, EVENT_WORDS),
    _enum("CONFIGEV", C.MQIA_CONFIGURATION_EVENT, F.MQEVR_DISABLED, {QMGR}, EVENT_WORDS),
    _enum("CMDEV", C.MQIA_COMMAND_EVENT, F.MQEVR_DISABLED, {QMGR},
          {"DISABLED": F.MQEVR_DISABLED, "ENABLED": F.MQEVR_ENABLED, "NODISPLAY": F.MQEVR_NO_DISPLAY}),
    _enum("AUTHOREV", C.MQIA_AUTHORITY_EVENT, F.MQEVR_DISABLED, {QMGR}, EVENT_WORDS),
    _enum("CHLEV", C.MQIA_CHANNEL_EVENT, F.MQEVR_DISABLED, {QMGR}, {**EVENT_WORDS, "EXCEPTION": F.MQEVR_EXCEPTION}),
    _enum("SSLEV", C.MQIA_SSL_EVENT, F.MQEVR_DISABLED, {QMGR}, EVENT_WORDS),
    # Statistics and accounting messages (engine.monitoring); intervals in seconds.
    _enum("STATMQI", C.MQIA_STATISTICS_MQI, C.MQMON_OFF, {QMGR}, ON_OFF),
    _enum("STATQ", C.MQIA_STATISTICS_Q, C.MQMON_OFF, {QMGR}, MONITOR_QMGR_WORDS),
    _int("STATINT", C.MQIA_STATISTICS_INTERVAL, 1800, {QMGR}, low=1, high=604_800),
    _enum("STATCHL", C.MQIA_STATISTICS_CHANNEL, C.MQMON_OFF, {QMGR}, {"NONE": C.MQMON_NONE, **CHANNEL_MONITOR_WORDS}),
    _enum("ACCTMQI", C.MQIA_ACCOUNTING_MQI, C.MQMON_OFF, {QMGR}, ON_OFF),
    _enum("ACCTQ", C.MQIA_ACCOUNTING_Q, C.MQMON_OFF, {QMGR}, MONITOR_QMGR_WORDS),
    _int("ACCTINT", C.MQIA_ACCOUNTING_INTERVAL, 1800, {QMGR}, low=1, high=604_800),
    # Whether MQCONNX's MQCNO_ACCOUNTING_* options may override ACCTMQI and ACCTQ for a connection.
    _enum("ACCTCONO", C.MQIA_ACCOUNTING_CONN_OVERRIDE, C.MQMON_DISABLED, {QMGR},
          {"DISABLED": C.MQMON_DISABLED, "ENABLED": C.MQMON_ENABLED}),
    # The AUTHINFO object whose rules authenticate connections (engine.authority); blank: none.
    _str("CONNAUTH", C.MQCA_CONN_AUTH, "SYSTEM.DEFAULT.AUTHINFO.IDPWOS", {QMGR}),
    # Whether channel authentication records (engine.chlauth) are checked when a channel starts.
    _enum("CHLAUTH", C.MQIA_CHLAUTH_RECORDS, F.MQCHLA_ENABLED, {QMGR},
          {"DISABLED": F.MQCHLA_DISABLED, "ENABLED": F.MQCHLA_ENABLED}),
    # TLS (docs/security.md): the key repository's stem (blank: ssl/key in the data directory)
    # and the label of the queue manager's certificate (blank: ibmwebspheremq<name>).
    _str("SSLKEYR", C.MQCA_SSL_KEY_REPOSITORY, "", {QMGR}, length=C.MQ_SSL_KEY_REPOSITORY_LENGTH),
    _str("CERTLABL", C.MQCA_CERT_LABEL, "", {QMGR}, length=C.MQ_CERT_LABEL_LENGTH),
    _str("COMMANDQ", C.MQCA_COMMAND_INPUT_Q_NAME, "SYSTEM.ADMIN.COMMAND.QUEUE", {QMGR}, readonly=True),
    _int("MAXPRTY", C.MQIA_MAX_PRIORITY, 9, {QMGR}, readonly=True),
    _int("CMDLEVEL", C.MQIA_COMMAND_LEVEL, C.MQCMDL_CURRENT_LEVEL, {QMGR}, readonly=True),
    _int("PLATFORM", C.MQIA_PLATFORM, C.MQPL_UNIX, {QMGR}, readonly=True),
    _int("SYNCPT", C.MQIA_SYNCPOINT, C.MQSP_AVAILABLE, {QMGR}, readonly=True),
    _str("QMID", C.MQCA_Q_MGR_IDENTIFIER, "", {QMGR}, readonly=True),
    _str("CRDATE", C.MQCA_CREATION_DATE, "", {QMGR}, length=12, readonly=True),
    _str("CRTIME", C.MQCA_CREATION_TIME, "", {QMGR}, length=8, readonly=True),
    _str("ALTDATE", C.MQCA_ALTERATION_DATE, "", {QMGR}, length=12, readonly=True),
    _str("ALTTIME", C.MQCA_ALTERATION_TIME, "", {QMGR}, length=8, readonly=True),
)


# TOPIC objects (engine.topics). An attribute whose words hold ASPARENT, or a name whose
# blank means "as parent" (INHERITED_BLANK), is resolved up the topic tree to
# SYSTEM.BASE.TOPIC; the defaults here are SYSTEM.DEFAULT.TOPIC's, all ASPARENT.
_T = {TOPIC}
ASPARENT = "ASPARENT"
_PUBSUB_ENABLED = {ASPARENT: C.MQTA_PUB_AS_PARENT, "ENABLED": C.MQTA_PUB_ALLOWED, "DISABLED": C.MQTA_PUB_INHIBITED}
_DLV = {ASPARENT: C.MQDLV_AS_PARENT, "ALL": C.MQDLV_ALL, "ALLDUR": C.MQDLV_ALL_DUR, "ALLAVAIL": C.MQDLV_ALL_AVAIL}
_SCOPE = {ASPARENT: C.MQSCOPE_AS_PARENT, "QMGR": C.MQSCOPE_QMGR, "ALL": C.MQSCOPE_ALL}
TOPIC_ATTRS: tuple[Attr, ...] = (
    _str("TOPICSTR", C.MQCA_TOPIC_STRING, "", _T, length=C.MQ_TOPIC_STR_LENGTH),
    _str("DESCR", C.MQCA_TOPIC_DESC, "", _T, length=C.MQ_TOPIC_DESC_LENGTH),
    _enum("TYPE", C.MQIA_TOPIC_TYPE, C.MQTOPT_LOCAL, _T, {"LOCAL": C.MQTOPT_LOCAL}, synonyms=("TOPICTYPE",)),
    _enum("PUB", C.MQIA_INHIBIT_PUB, C.MQTA_PUB_AS_PARENT, _T, _PUBSUB_ENABLED),
    _enum("SUB", C.MQIA_INHIBIT_SUB, C.MQTA_SUB_AS_PARENT, _T,
          {ASPARENT: C.MQTA_SUB_AS_PARENT, "ENABLED": C.MQTA_SUB_ALLOWED, "DISABLED": C.MQTA_SUB_INHIBITED}),
    _enum("DEFPSIST", C.MQIA_TOPIC_DEF_PERSISTENCE, C.MQPER_PERSISTENCE_AS_PARENT, _T,
          {ASPARENT: C.MQPER_PERSISTENCE_AS_PARENT, "NO": C.MQPER_NOT_PERSISTENT, "YES": C.MQPER_PERSISTENT}),
    _int("DEFPRTY", C.MQIA_DEF_PRIORITY, C.MQPRI_PRIORITY_AS_PARENT, _T, high=9,
         words={ASPARENT: C.MQPRI_PRIORITY_AS_PARENT}),
    _enum("DEFPRESP", C.MQIA_DEF_PUT_RESPONSE_TYPE, C.MQPRT_RESPONSE_AS_PARENT, _T,
          {ASPARENT: C.MQPRT_RESPONSE_AS_PARENT, "SYNC": C.MQPRT_SYNC_RESPONSE, "ASYNC": C.MQPRT_ASYNC_RESPONSE}),
    _enum("DURSUB", C.MQIA_DURABLE_SUB, C.MQSUB_DURABLE_AS_PARENT, _T,
          {ASPARENT: C.MQSUB_DURABLE_AS_PARENT, "YES": C.MQSUB_DURABLE_ALLOWED, "NO": C.MQSUB_DURABLE_INHIBITED}),
    _enum("PMSGDLV", C.MQIA_PM_DELIVERY, C.MQDLV_AS_PARENT, _T, _DLV),
    _enum("NPMSGDLV", C.MQIA_NPM_DELIVERY, C.MQDLV_AS_PARENT, _T, _DLV),
    _str("MDURMDL", C.MQCA_MODEL_DURABLE_Q, "", _T),
    _str("MNDURMDL", C.MQCA_MODEL_NON_DURABLE_Q, "", _T),
    _enum("WILDCARD", C.MQIA_WILDCARD_OPERATION, C.MQTA_PASSTHRU, _T, {"PASSTHRU": C.MQTA_PASSTHRU, "BLOCK": C.MQTA_BLOCK}),
    _enum("USEDLQ", C.MQIA_USE_DEAD_LETTER_Q, C.MQUSEDLQ_AS_PARENT, _T,
          {ASPARENT: C.MQUSEDLQ_AS_PARENT, "NO": C.MQUSEDLQ_NO, "YES": C.MQUSEDLQ_YES}),
    _enum("PUBSCOPE", C.MQIA_PUB_SCOPE, C.MQSCOPE_AS_PARENT, _T, _SCOPE),
    _enum("SUBSCOPE", C.MQIA_SUB_SCOPE, C.MQSCOPE_AS_PARENT, _T, _SCOPE),
    _enum("PROXYSUB", C.MQIA_PROXY_SUB, C.MQTA_PROXY_SUB_FIRSTUSE, _T,
          {"FIRSTUSE": C.MQTA_PROXY_SUB_FIRSTUSE, "FORCE": C.MQTA_PROXY_SUB_FORCE}),
    _str("CLUSTER", C.MQCA_CLUSTER_NAME, "", _T, length=C.MQ_CLUSTER_NAME_LENGTH),
    _str("COMMINFO", C.MQCA_COMM_INFO_NAME, "", _T, length=C.MQ_COMM_INFO_NAME_LENGTH),
    _enum("MCAST", C.MQIA_MULTICAST, C.MQMC_AS_PARENT, _T,
          {ASPARENT: C.MQMC_AS_PARENT, "ENABLED": C.MQMC_ENABLED, "DISABLED": C.MQMC_DISABLED, "ONLY": C.MQMC_ONLY}),
)
TOPIC_STATUS_ATTRS: tuple[Attr, ...] = (
    _str("TOPIC", C.MQCA_TOPIC_NAME, "", _T, readonly=True),
    _str("CRDATE", C.MQCA_CREATION_DATE, "", _T, length=12, readonly=True),
    _str("CRTIME", C.MQCA_CREATION_TIME, "", _T, length=8, readonly=True),
    _str("ALTDATE", C.MQCA_ALTERATION_DATE, "", _T, length=12, readonly=True),
    _str("ALTTIME", C.MQCA_ALTERATION_TIME, "", _T, length=8, readonly=True),
)
# Names whose blank value means "as parent" (IBM: MDURMDL/MNDURMDL blank, CLUSTER and
# COMMINFO blank take the value of the nearest topic object above that has one).
INHERITED_BLANK = frozenset({"MDURMDL", "MNDURMDL", "CLUSTER", "COMMINFO"})


def as_parent(attr: Attr, value: int | str) -> bool:
    """Whether a topic object's value of ``attr`` defers to its parent's (ASPARENT, or blank
    for the names in INHERITED_BLANK)."""
    if attr.kind == "str":
        return attr.name in INHERITED_BLANK and value == ""
    return ASPARENT in attr.words and value == attr.words[ASPARENT]

def _index(attrs: Iterable[Attr]) -> dict[str, Attr]:
    out: dict[str, Attr] = {}
    for a in attrs:
        out[a.name] = a
        for s in a.synonyms:
            out[s] = a
    return out


QUEUE_BY_NAME = _index(QUEUE_ATTRS + QUEUE_STATUS_ATTRS)
QMGR_BY_NAME = _index(QMGR_ATTRS)
QUEUE_BY_SELECTOR = {a.selector: a for a in QUEUE_ATTRS + QUEUE_STATUS_ATTRS if a.name != "QDEFTYPE"}
# DEFTYPE of a model and the definition type of a local queue share MQIA_DEFINITION_TYPE.
QUEUE_BY_SELECTOR[C.MQIA_DEFINITION_TYPE] = QUEUE_BY_NAME["QDEFTYPE"]
QMGR_BY_SELECTOR = {a.selector: a for a in QMGR_ATTRS}
TOPIC_BY_NAME = _index(TOPIC_ATTRS + TOPIC_STATUS_ATTRS)
TOPIC_BY_SELECTOR = {a.selector: a for a in TOPIC_ATTRS + TOPIC_STATUS_ATTRS}


# NAMELIST objects (engine.namelists). NAMES is a list of names (kind "list", a tuple): the
# registry sets it from its own argument, so it is read-only to the single-value paths.
_NL = {NAMELIST}
NAMELIST_ATTRS: tuple[Attr, ...] = (
    Attr("NAMES", C.MQCA_NAMES, "list", "", frozenset(_NL), length=C.MQ_OBJECT_NAME_LENGTH, readonly=True),
    _str("DESCR", C.MQCA_NAMELIST_DESC, "", _NL, length=C.MQ_NAMELIST_DESC_LENGTH),
    _enum("NLTYPE", C.MQIA_NAMELIST_TYPE, C.MQNT_NONE, _NL,
          {"NONE": C.MQNT_NONE, "QUEUE": C.MQNT_Q, "Q": C.MQNT_Q, "CLUSTER": C.MQNT_CLUSTER,
           "AUTHINFO": C.MQNT_AUTH_INFO}),
    _int("NAMCOUNT", C.MQIA_NAME_COUNT, 0, _NL, high=C.MQNC_MAX_NAMELIST_NAME_COUNT, readonly=True),
    _str("ALTDATE", C.MQCA_ALTERATION_DATE, "", _NL, length=12, readonly=True),
    _str("ALTTIME", C.MQCA_ALTERATION_TIME, "", _NL, length=8, readonly=True),
)
NAMELIST_BY_NAME = _index(NAMELIST_ATTRS)
NAMELIST_BY_SELECTOR = {a.selector: a for a in NAMELIST_ATTRS}

# PROCESS objects (engine.processes): what a trigger monitor starts for a triggered queue.
_P = {PROCESS}
APPLTYPE_WORDS = {"UNIX": C.MQAT_UNIX, "DEF": C.MQAT_DEFAULT, "CICS": C.MQAT_CICS, "IMS": C.MQAT_IMS,
                  "OS400": C.MQAT_OS400, "WINDOWS": C.MQAT_WINDOWS, "WINDOWSNT": C.MQAT_WINDOWS_NT,
                  "JAVA": C.MQAT_JAVA, "MVS": C.MQAT_MVS, "NOTESAGENT": C.MQAT_NOTES_AGENT}
PROCESS_ATTRS: tuple[Attr, ...] = (
    _str("DESCR", C.MQCA_PROCESS_DESC, "", _P, length=C.MQ_PROCESS_DESC_LENGTH),
    # A number of 65536 and up is a user-defined application type (IBM's MQAT_USER_FIRST..).
    _int("APPLTYPE", C.MQIA_APPL_TYPE, C.MQAT_DEFAULT, _P, low=C.MQAT_USER_FIRST, high=C.MQAT_USER_LAST,
         words=APPLTYPE_WORDS),
    _str("APPLICID", C.MQCA_APPL_ID, "", _P, length=C.MQ_PROCESS_APPL_ID_LENGTH),
    _str("ENVRDATA", C.MQCA_ENV_DATA, "", _P, length=C.MQ_PROCESS_ENV_DATA_LENGTH),
    _str("USERDATA", C.MQCA_USER_DATA, "", _P, length=C.MQ_PROCESS_USER_DATA_LENGTH),
    _str("PROCESS", C.MQCA_PROCESS_NAME, "", _P, readonly=True),
    _str("ALTDATE", C.MQCA_ALTERATION_DATE, "", _P, length=12, readonly=True),
    _str("ALTTIME", C.MQCA_ALTERATION_TIME, "", _P, length=8, readonly=True),
)
PROCESS_BY_NAME = _index(PROCESS_ATTRS)
PROCESS_BY_SELECTOR = {a.selector: a for a in PROCESS_ATTRS}


def defaults_for(obj_type: str) -> dict[str, int | str]:
    """The SYSTEM.DEFAULT.* values of a new object of this type (definition attributes only)."""
    table = {QMGR: QMGR_ATTRS, TOPIC: TOPIC_ATTRS, NAMELIST: NAMELIST_ATTRS, PROCESS: PROCESS_ATTRS}.get(obj_type, QUEUE_ATTRS)
    return {a.name: a.default for a in table if obj_type in a.types and not a.readonly}


def lookup(obj_type: str, name: str) -> Attr:
    """The attribute ``name`` (MQSC keyword or synonym) of an object type.

    Raises:
        MQError: MQRC_SELECTOR_ERROR (2067) naming the unknown attribute.
    """
    table = {QMGR: QMGR_BY_NAME, TOPIC: TOPIC_BY_NAME, NAMELIST: NAMELIST_BY_NAME,
             PROCESS: PROCESS_BY_NAME}.get(obj_type, QUEUE_BY_NAME)
    attr = table.get(name.upper())
    if attr is None or obj_type not in attr.types:
        raise failed(C.MQRC_SELECTOR_ERROR, f"{name.upper()} is not an attribute of {obj_type}")
    return attr


# Status displays (DISPLAY QSTATUS, DISPLAY CONN): MQSC keyword <-> PCF parameter. Kind
# "bytes" is a byte string (a connection identifier), shown in hex.
QSTATUS = "QSTATUS"
HANDLE = "HANDLE"
CONN = "CONN"
_Q = {QSTATUS}
_H = {HANDLE}
_HC = {HANDLE, CONN}
OPEN_WORDS = {"NO": F.MQQSO_NO, "YES": F.MQQSO_YES}
QSTATUS_ATTRS: tuple[Attr, ...] = (
    _int("CURDEPTH", C.MQIA_CURRENT_Q_DEPTH, 0, _Q, readonly=True),
    _int("IPPROCS", C.MQIA_OPEN_INPUT_COUNT, 0, _Q, readonly=True),
    _int("OPPROCS", C.MQIA_OPEN_OUTPUT_COUNT, 0, _Q, readonly=True),
    _int("UNCOM", F.MQIACF_UNCOMMITTED_MSGS, 0, _Q, readonly=True),
    _int("MSGAGE", F.MQIACF_OLDEST_MSG_AGE, -1, _Q, low=-1, readonly=True),
    _str("LGETDATE", F.MQCACF_LAST_GET_DATE, "", _Q, length=12, readonly=True),
    _str("LGETTIME", F.MQCACF_LAST_GET_TIME, "", _Q, length=8, readonly=True),
    _str("LPUTDATE", F.MQCACF_LAST_PUT_DATE, "", _Q, length=12, readonly=True),
    _str("LPUTTIME", F.MQCACF_LAST_PUT_TIME, "", _Q, length=8, readonly=True),
    _str("APPLTAG", F.MQCACF_APPL_TAG, "", _HC, length=28, readonly=True),
    _int("APPLTYPE", C.MQIA_APPL_TYPE, C.MQAT_DEFAULT, _HC, readonly=True),
    _str("USERID", F.MQCACF_USER_IDENTIFIER, "", _HC, length=12, readonly=True),
    _str("CHANNEL", F.MQCACH_CHANNEL_NAME, "", _HC, length=20, readonly=True),
    _str("CONNAME", F.MQCACH_CONNECTION_NAME, "", _HC, length=264, readonly=True),
    Attr("CONN", F.MQBACF_CONNECTION_ID, "bytes", "", frozenset(_HC), readonly=True),
    _enum("INPUT", F.MQIACF_OPEN_INPUT_TYPE, F.MQQSO_NO, _H,
          {"NO": F.MQQSO_NO, "SHARED": F.MQQSO_SHARED, "EXCL": F.MQQSO_EXCLUSIVE}, readonly=True),
    _enum("OUTPUT", F.MQIACF_OPEN_OUTPUT, F.MQQSO_NO, _H, OPEN_WORDS, readonly=True),
    _enum("BROWSE", F.MQIACF_OPEN_BROWSE, F.MQQSO_NO, _H, OPEN_WORDS, readonly=True),
    _enum("INQUIRE", F.MQIACF_OPEN_INQUIRE, F.MQQSO_NO, _H, OPEN_WORDS, readonly=True),
    _enum("SET", F.MQIACF_OPEN_SET, F.MQQSO_NO, _H, OPEN_WORDS, readonly=True),
    _enum("HSTATE", F.MQIACF_HANDLE_STATE, F.MQHSTATE_INACTIVE, _H,
          {"INACTIVE": F.MQHSTATE_INACTIVE, "ACTIVE": F.MQHSTATE_ACTIVE}, readonly=True),
    _enum("UOWSTATE", F.MQIACF_UOW_STATE, F.MQUOWST_NONE, {CONN},
          {"NONE": F.MQUOWST_NONE, "ACTIVE": F.MQUOWST_ACTIVE}, readonly=True),
    _int("HANDLES", F.MQIACF_CONNECTION_COUNT, 0, {CONN}, readonly=True),
)
STATUS_BY_NAME = _index(QSTATUS_ATTRS)
STATUS_BY_SELECTOR = {a.selector: a for a in QSTATUS_ATTRS}


# DISPLAY TPSTATUS (INQUIRE_TOPIC_STATUS): a topic string's resolved attributes are the
# TOPIC_ATTRS keywords; these are its status. TYPE(SUB) and TYPE(PUB) rows share ACTCONN.
TPSTATUS = "TPSTATUS"
_TP = {TPSTATUS}
TPSTATUS_ATTRS: tuple[Attr, ...] = (
    _str("ADMIN", C.MQCA_ADMIN_TOPIC_NAME, "", _TP, readonly=True),
    _int("PUBCOUNT", C.MQIA_PUB_COUNT, 0, _TP, readonly=True),
    _int("SUBCOUNT", C.MQIA_SUB_COUNT, 0, _TP, readonly=True),
    _enum("RETAINED", F.MQIACF_RETAINED_PUBLICATION, F.MQQSO_NO, _TP, OPEN_WORDS, readonly=True),
)

# Subscriptions (DEFINE/ALTER/DISPLAY SUB, the PCF subscription commands): keyword <->
# parameter. Kind "bytes" is a byte string, written in hex in MQSC.
SUB = "SUB"
SBSTATUS = "SBSTATUS"
_S = {SUB}
_SS = {SUB, SBSTATUS}
SUB_ATTRS: tuple[Attr, ...] = (
    _str("TOPICSTR", C.MQCA_TOPIC_STRING, "", _SS, length=C.MQ_TOPIC_STR_LENGTH),
    _str("TOPICOBJ", C.MQCA_TOPIC_NAME, "", _S, length=C.MQ_TOPIC_NAME_LENGTH),
    _str("DEST", F.MQCACF_DESTINATION, "", _S),
    _str("DESTQMGR", F.MQCACF_DESTINATION_Q_MGR, "", _S),
    _enum("DESTCLAS", F.MQIACF_DESTINATION_CLASS, C.MQDC_PROVIDED, _S,
          {"MANAGED": C.MQDC_MANAGED, "PROVIDED": C.MQDC_PROVIDED}),
    Attr("DESTCORL", F.MQBACF_DESTINATION_CORREL_ID, "bytes", "", frozenset(_S), length=24),
    _int("PUBPRTY", F.MQIACF_PUB_PRIORITY, C.MQPRI_PRIORITY_AS_PUBLISHED, _S, high=9,
         words={"ASPUB": C.MQPRI_PRIORITY_AS_PUBLISHED, "ASQDEF": C.MQPRI_PRIORITY_AS_Q_DEF}),
    Attr("PUBACCT", F.MQBACF_ACCOUNTING_TOKEN, "bytes", "", frozenset(_S), length=32),
    _str("PUBAPPID", F.MQCACF_APPL_IDENTITY_DATA, "", _S, length=32),
    _int("EXPIRY", F.MQIACF_EXPIRY, C.MQEI_UNLIMITED, _S, words={"UNLIMITED": C.MQEI_UNLIMITED}),
    _str("SELECTOR", F.MQCACF_SUB_SELECTOR, "", _S, length=10240),
    _str("USERDATA", F.MQCACF_SUB_USER_DATA, "", _S, length=10240),
    _enum("WSCHEMA", F.MQIACF_WILDCARD_SCHEMA, C.MQWS_TOPIC, _S, {"CHAR": C.MQWS_CHAR, "TOPIC": C.MQWS_TOPIC}),
    _enum("REQONLY", F.MQIACF_REQUEST_ONLY, C.MQRU_PUBLISH_ALL, _S,
          {"YES": C.MQRU_PUBLISH_ON_REQUEST, "NO": C.MQRU_PUBLISH_ALL}),
    _enum("VARUSER", F.MQIACF_VARIABLE_USER_ID, C.MQVU_ANY_USER, _S, {"ANY": C.MQVU_ANY_USER, "FIXED": C.MQVU_FIXED_USER}),
    _enum("SUBSCOPE", F.MQIACF_SUBSCRIPTION_SCOPE, C.MQTSCOPE_ALL, _S, {"ALL": C.MQTSCOPE_ALL, "QMGR": C.MQTSCOPE_QMGR}),
    _int("SUBLEVEL", F.MQIACF_SUB_LEVEL, 1, _S, high=9),
    _str("SUBUSER", F.MQCACF_SUB_USER_ID, "", _SS, length=12),
    _enum("PSPROP", F.MQIACF_PUBSUB_PROPERTIES, C.MQPSPROP_MSGPROP, _S,
          {"NONE": C.MQPSPROP_NONE, "COMPAT": C.MQPSPROP_COMPAT, "RFH2": C.MQPSPROP_RFH2, "MSGPROP": C.MQPSPROP_MSGPROP}),
)
SUB_STATUS_ATTRS: tuple[Attr, ...] = (
    _str("SUB", F.MQCACF_SUB_NAME, "", _SS, length=10240, readonly=True),
    Attr("SUBID", F.MQBACF_SUB_ID, "bytes", "", frozenset(_SS), length=24, readonly=True),
    _enum("DURABLE", F.MQIACF_DURABLE_SUBSCRIPTION, C.MQSUB_DURABLE_YES, _SS,
          {"YES": C.MQSUB_DURABLE_YES, "NO": C.MQSUB_DURABLE_NO}, readonly=True),
    _enum("SUBTYPE", F.MQIACF_SUB_TYPE, 2, _SS, {"API": 1, "ADMIN": 2, "PROXY": 3}, readonly=True),
    _str("CRDATE", C.MQCA_CREATION_DATE, "", _S, length=12, readonly=True),
    _str("CRTIME", C.MQCA_CREATION_TIME, "", _S, length=8, readonly=True),
    _str("ALTDATE", C.MQCA_ALTERATION_DATE, "", _S, length=12, readonly=True),
    _str("ALTTIME", C.MQCA_ALTERATION_TIME, "", _S, length=8, readonly=True),
    Attr("ACTCONN", F.MQBACF_CONNECTION_ID, "bytes", "", frozenset({SBSTATUS}), length=24, readonly=True),
    _str("RESMDATE", C.MQCA_RESUME_DATE, "", {SBSTATUS}, length=12, readonly=True),
    _str("RESMTIME", C.MQCA_RESUME_TIME, "", {SBSTATUS}, length=8, readonly=True),
    _str("LMSGDATE", F.MQCACF_LAST_MSG_DATE, "", {SBSTATUS}, length=12, readonly=True),
    _str("LMSGTIME", F.MQCACF_LAST_MSG_TIME, "", {SBSTATUS}, length=8, readonly=True),
    _int("NUMMSGS", F.MQIACF_MESSAGE_COUNT, 0, {SBSTATUS}, readonly=True),
)
SUB_BY_NAME = {a.name: a for a in SUB_ATTRS + SUB_STATUS_ATTRS}
SUB_BY_SELECTOR = {a.selector: a for a in SUB_ATTRS + SUB_STATUS_ATTRS}
TPSTATUS_BY_NAME = {a.name: a for a in TPSTATUS_ATTRS}
