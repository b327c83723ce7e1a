"""L0: the PCF command model (model.py) and its PCF messages (messages.py).

Every administration route shares it: MQSC (ferrymq.admin), PCF requests a client sends
(ferrymq.admin.pcfclient, pymqi's PCFExecute) and the engine's executor, which runs a
Command against a queue manager (ferrymq.engine.commands). It imports nothing above L0,
so a client that only builds and reads commands loads no engine module.
"""
