"""Administration commands: one model (model.py), one executor (executor.py, status.py),
and the PCF mapping the command server uses (pcfmap.py)."""
