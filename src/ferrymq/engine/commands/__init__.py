"""Administration commands run against a queue manager: one executor (executor.py,
status.py) and the command server's answer to a PCF request (pcfmap.py). The command
model and its PCF messages are L0, in ferrymq.pcf."""
