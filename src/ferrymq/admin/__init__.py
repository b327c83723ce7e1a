"""Administration front ends: the PCF round trip over a client (pcfclient), the MQSC
language (mqsc: parser, formatter, session) that drives the engine's one executor."""
