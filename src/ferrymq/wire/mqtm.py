"""MQTM, the trigger message (684 bytes, StrucId "TM  ", Version 1, format "MQTRIG"), and
MQTMC2, its character form that a trigger monitor passes to the program it starts
(732 bytes, StrucId "TMC ", Version "   2").

MQTM:

| Off | Len | Field        | Meaning                                                  |
|----:|----:|--------------|----------------------------------------------------------|
|   0 |   4 | StrucId      | "TM  "                                                   |
|   4 |   4 | Version      | 1                                                        |
|   8 |  48 | QName        | the application queue that triggered                     |
|  56 |  48 | ProcessName  | the queue's PROCESS                                      |
| 104 |  64 | TriggerData  | the queue's TRIGDATA                                     |
| 168 |   4 | ApplType     | the process's APPLTYPE                                   |
| 172 | 256 | ApplId       | the process's APPLICID (the program to start)            |
| 428 | 128 | EnvData      | the process's ENVRDATA                                   |
| 556 | 128 | UserData     | the process's USERDATA                                   |

MQTMC2 has the same fields as text (Version "   2", ApplType as 4 characters, right
aligned) and QMgrName (48) at 684. It is what runmqtrm gives a started program as its
argument, so every character field is blank-padded to its full length.

The queue manager fills every character field with blanks (never NULs); integers are in
the byte order of the message's Encoding (MQENC_NATIVE, little-endian, when we make one).
"""

from __future__ import annotations

from dataclasses import dataclass

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.wire.layout import Layout, decode_chars
from ferrymq.wire.mqmd import detect_big_endian

LAYOUT = Layout.of(
    "MQTM",
    [
        ("struc_id", "f", 4),
        ("version", "l", 4),
        ("q_name", "f", 48),
        ("process_name", "f", 48),
        ("trigger_data", "f", 64),
        ("appl_type", "l", 4),
        ("appl_id", "f", 256),
        ("env_data", "f", 128),
        ("user_data", "f", 128),
    ],
)
assert LAYOUT.size == C.MQTM_LENGTH_1

FORMAT = C.MQFMT_TRIGGER.rstrip()

# MQTMC2: (field, length) in order; every field is characters.
_TMC2_FIELDS = (("struc_id", 4), ("version", 4), ("q_name", 48), ("process_name", 48), ("trigger_data", 64),
                ("appl_type", 4), ("appl_id", 256), ("env_data", 128), ("user_data", 128), ("q_mgr_name", 48))
assert sum(n for _, n in _TMC2_FIELDS) == C.MQTMC2_LENGTH_2


@dataclass(frozen=True, slots=True)
class MQTM:
    """A trigger message's content."""

    q_name: str = ""
    process_name: str = ""
    trigger_data: str = ""
    appl_type: int = 0
    appl_id: str = ""
    env_data: str = ""
    user_data: str = ""

    def pack(self, *, big_endian: bool = False) -> bytes:
        return LAYOUT.pack([C.MQTM_STRUC_ID, C.MQTM_VERSION_1, self.q_name, self.process_name, self.trigger_data,
                            self.appl_type, self.appl_id, self.env_data, self.user_data], big_endian)

    @classmethod
    def unpack_from(cls, buf: bytes | bytearray | memoryview, offset: int = 0, *,
                    big_endian: bool | None = None) -> MQTM:
        """Decode an MQTM at ``offset``; the byte order is detected from Version when not given.

        Raises:
            DecodeError: wrong StrucId, Version other than 1, or too few bytes.
        """
        LAYOUT.check_struc_id(buf, offset, C.MQTM_STRUC_ID)
        if big_endian is None:
            big_endian = detect_big_endian(buf, offset, "MQTM", (C.MQTM_VERSION_1,))
        values = LAYOUT.unpack(buf, offset, big_endian)
        if values[1] != C.MQTM_VERSION_1:
            raise DecodeError("MQTM", offset + 4, f"Version {values[1]} is not 1")
        return cls(*values[2:])

    def character_form(self, q_mgr_name: str) -> bytes:
        """The MQTMC2 a trigger monitor hands the program it starts (732 bytes)."""
        values = {"struc_id": C.MQTMC_STRUC_ID, "version": C.MQTMC_VERSION_2, "q_name": self.q_name,
                  "process_name": self.process_name, "trigger_data": self.trigger_data,
                  "appl_type": f"{self.appl_type:>4d}"[-4:], "appl_id": self.appl_id, "env_data": self.env_data,
                  "user_data": self.user_data, "q_mgr_name": q_mgr_name}
        return b"".join(values[name].encode("latin-1", "replace")[:n].ljust(n, b" ") for name, n in _TMC2_FIELDS)


@dataclass(frozen=True, slots=True)
class MQTMC2:
    """The character form of a trigger message, as a started program reads its argument."""

    q_name: str
    process_name: str
    trigger_data: str
    appl_type: int
    appl_id: str
    env_data: str
    user_data: str
    q_mgr_name: str

    @classmethod
    def parse(cls, raw: bytes | str) -> MQTMC2:
        """Read an MQTMC2 (a program's argument; a shell may have dropped trailing blanks).

        Raises:
            DecodeError: not an MQTMC2 (StrucId, Version, an ApplType that is not a number).
        """
        data = raw.encode("latin-1", "replace") if isinstance(raw, str) else bytes(raw)
        if len(data) > C.MQTMC2_LENGTH_2:
            raise DecodeError("MQTMC2", C.MQTMC2_LENGTH_2, f"{len(data)} bytes; an MQTMC2 has {C.MQTMC2_LENGTH_2}")
        data = data.ljust(C.MQTMC2_LENGTH_2, b" ")
        fields: dict[str, str] = {}
        pos = 0
        for name, n in _TMC2_FIELDS:
            fields[name] = decode_chars(data[pos:pos + n])
            pos += n
        if fields["struc_id"] != C.MQTMC_STRUC_ID.rstrip():
            raise DecodeError("MQTMC2", 0, f"StrucId {fields['struc_id']!r} is not 'TMC '")
        if fields["version"].strip() not in ("1", "2"):
            raise DecodeError("MQTMC2", 4, f"Version {fields['version']!r} is not '   1' or '   2'")
        try:
            appl_type = int(fields["appl_type"].strip() or "0")
        except ValueError:
            raise DecodeError("MQTMC2", 168, f"ApplType {fields['appl_type']!r} is not a number") from None
        return cls(fields["q_name"], fields["process_name"], fields["trigger_data"], appl_type, fields["appl_id"],
                   fields["env_data"], fields["user_data"], fields["q_mgr_name"])
