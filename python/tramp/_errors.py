"""tramp's errors as Python exceptions."""

from __future__ import annotations

import json


class TraceError(Exception):
    """A trace could not be read whole, or a job was refused. ``message``
    is tramp's own (the CLI's ``tramp: error:`` line: what was read and
    where it stopped, by byte offset and record number); ``report``, when
    a report covers the records before the damage, is that partial report
    (with ``complete: False`` and its ``damage``), else None."""

    def __init__(self, message: str, report: str | None = None):
        super().__init__(message)
        self.message = message
        self.report = json.loads(report) if report is not None else None
