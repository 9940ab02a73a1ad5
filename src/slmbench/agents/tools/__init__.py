"""The agent's tools over the seeded world, their schemas, the sandbox and fault injection.

- ``base``: the ``Tool`` / ``Toolbox`` protocols and ``ToolResult`` / ``ToolSpec`` records;
- ``toolbox``: ``WorldToolbox`` (one per trial; ``call`` never raises) and ``TOOL_NAMES``;
- ``info`` (web_search, fact_lookup), ``calendar`` (calendar, schedule_meeting),
  ``tables`` (query_table, csv_processor), ``code`` (code_interpreter), ``files``
  (file_manager), ``comms`` (email, notify): the ten tools;
- ``faults``: the one place a planned fault replaces a real result;
- ``sandbox``: bubblewrap + rlimits for model-written Python.
"""

__all__ = ["base", "calendar", "code", "comms", "faults", "files", "info", "rows", "sandbox",
           "tables", "toolbox"]
