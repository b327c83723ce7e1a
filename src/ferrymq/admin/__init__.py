"""Administration front ends: the PCF round trip over a client (pcfclient), the MQSC
language (mqsc: parser, formatter, session) that drives the engine's one executor."""

# One MQSC keyword and its value: None for a bare keyword, a tuple for a list of quoted
# items (MSGEXIT('a','b')), else the text.
Keyword = tuple[str, str | tuple[str, ...] | None]


class ListValueError(ValueError):
    """A list of values given to a keyword that takes one (admin.mqsc reports it as a
    syntax error)."""


def single(word: str, value: str | tuple[str, ...] | None) -> str | None:
    """The value of a keyword that takes one value.

    Raises:
        ListValueError: a list was given.
    """
    if isinstance(value, tuple):
        raise ListValueError(f"{word} takes one value, not a list of {len(value)}")
    return value
