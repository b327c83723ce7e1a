"""The CCSID table: each CCSID against Python's codec and IBM's documented code points."""

from __future__ import annotations

import pytest

from ferrymq.wire import ccsid as CS

SAMPLE = "Hello, World! 0123456789 [a-z] {x} ^ ¬ ¢ é ü ß"

# IBM's code charts: (character, byte) pairs per CCSID.
DOCUMENTED = {
    37: [("A", 0xC1), ("a", 0x81), ("0", 0xF0), (" ", 0x40), ("!", 0x5A), ("[", 0xBA), ("]", 0xBB), ("^", 0xB0),
         ("¬", 0x5F), ("¢", 0x4A), ("|", 0x4F), ("é", 0x51)],
    500: [("A", 0xC1), ("a", 0x81), ("0", 0xF0), (" ", 0x40), ("!", 0x4F), ("[", 0x4A), ("]", 0x5A), ("^", 0x5F),
          ("¬", 0xBA), ("¢", 0xB0), ("|", 0xBB)],
    1047: [("A", 0xC1), ("a", 0x81), ("0", 0xF0), (" ", 0x40), ("!", 0x5A), ("[", 0xAD), ("]", 0xBD), ("^", 0x5F),
           ("¬", 0xB0), ("Ý", 0xBA), ("¨", 0xBB), ("¢", 0x4A), ("\n", 0x25), ("\x85", 0x15)],
    819: [("A", 0x41), ("é", 0xE9), ("ü", 0xFC), ("¬", 0xAC)],
    850: [("A", 0x41), ("é", 0x82), ("ü", 0x81), ("ß", 0xE1), ("¬", 0xAA)],
    1140: [("€", 0x9F), ("A", 0xC1)],
}
PYTHON = {37: "cp037", 500: "cp500", 819: "latin-1", 850: "cp850", 1140: "cp1140", 1208: "utf-8"}


@pytest.mark.parametrize(("ccsid", "codec"), sorted(PYTHON.items()))
def test_each_ccsid_is_pythons_codec(ccsid: int, codec: str) -> None:
    raw = SAMPLE.encode(codec)
    assert CS.encode(SAMPLE, ccsid) == raw
    assert CS.decode(raw, ccsid) == SAMPLE
    every = bytes(range(256)) if codec != "utf-8" else SAMPLE.encode()
    assert CS.decode(every, ccsid) == every.decode(codec)


@pytest.mark.parametrize("ccsid", sorted(DOCUMENTED))
def test_documented_code_points(ccsid: int) -> None:
    for char, byte in DOCUMENTED[ccsid]:
        assert CS.encode(char, ccsid) == bytes([byte]), (ccsid, char)
        assert CS.decode(bytes([byte]), ccsid) == char, (ccsid, byte)


def test_1047_is_037_but_for_six_code_points() -> None:
    every = bytes(range(256))
    a, b = CS.decode(every, 37), CS.decode(every, 1047)
    assert sorted(i for i in range(256) if a[i] != b[i]) == [0x5F, 0xAD, 0xB0, 0xBA, 0xBB, 0xBD]
    assert CS.encode(b, 1047) == every  # a bijection: every byte round-trips


# Java's IBM1047 charset (OpenJDK 17), byte by byte, as an independent table. It maps X'15'
# to LF and X'25' to NEL (the z/OS UNIX convention); IBM's CDRA table, which IBM MQ and
# ferrymq follow, maps them the other way round, as CCSID 37 does.
JAVA_1047 = (
    "0000000100020003009C00090086007F0097008D008E000B000C000D000E000F0010001100120013009D000A00080087"
    "001800190092008F001C001D001E001F0080008100820083008400850017001B00880089008A008B008C000500060007"
    "0090009100160093009400950096000400980099009A009B00140015009E001A002000A000E200E400E000E100E300E5"
    "00E700F100A2002E003C0028002B007C002600E900EA00EB00E800ED00EE00EF00EC00DF00210024002A0029003B005E"
    "002D002F00C200C400C000C100C300C500C700D100A6002C0025005F003E003F00F800C900CA00CB00C800CD00CE00CF"
    "00CC0060003A002300400027003D002200D800610062006300640065006600670068006900AB00BB00F000FD00FE00B1"
    "00B0006A006B006C006D006E006F00700071007200AA00BA00E600B800C600A400B5007E0073007400750076007700"
    "780079007A00A100BF00D0005B00DE00AE00AC00A300A500B700A900A700B600BC00BD00BE00DD00A800AF005D00B4"
    "00D7007B00410042004300440045004600470048004900AD00F400F600F200F300F5007D004A004B004C004D004E004F"
    "00500051005200B900FB00FC00F900FA00FF005C00F70053005400550056005700580059005A00B200D400D600D200D3"
    "00D5003000310032003300340035003600370038003900B300DB00DC00D900DA009F"
)


def test_1047_agrees_with_javas_table_but_for_the_newline_convention() -> None:
    java = [chr(int(JAVA_1047[i : i + 4], 16)) for i in range(0, len(JAVA_1047), 4)]
    assert len(java) == 256
    ours = CS.decode(bytes(range(256)), 1047)
    assert [i for i in range(256) if ours[i] != java[i]] == [0x15, 0x25]


@pytest.mark.parametrize(("big", "codec"), [(True, "utf-16-be"), (False, "utf-16-le")])
def test_utf16_byte_order_comes_from_the_encoding(big: bool, codec: str) -> None:
    text = SAMPLE + " 😀"
    assert CS.encode(text, 1200, big_endian=big) == text.encode(codec)
    assert CS.decode(text.encode(codec), 1200, big_endian=big) == text
    assert CS.encode("é", 1200, big_endian=big) == (b"\x00\xe9" if big else b"\xe9\x00")


def test_strict_both_ways() -> None:
    with pytest.raises(UnicodeEncodeError):
        CS.encode("€", 37)
    with pytest.raises(UnicodeDecodeError):
        CS.decode(b"\xff", 1208)
    with pytest.raises(UnicodeDecodeError):
        CS.decode(b"\x00\xd8", 1200, big_endian=False)  # a lone surrogate
    with pytest.raises(KeyError):
        CS.encode("a", 4321)
    assert CS.fits_structures(37) and CS.fits_structures(1208) and not CS.fits_structures(1200)
    assert not CS.is_supported(0) and {37, 500, 819, 850, 1047, 1140, 1200, 1208} == CS.SUPPORTED
