"""Every check is recorded in the workspace's SQLite database; `kata list` reads it back."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS checks (
    id INTEGER PRIMARY KEY,
    kata TEXT NOT NULL,          -- kata id: attention, numpy/attention
    at TEXT NOT NULL,            -- UTC, ISO 8601
    status TEXT NOT NULL,        -- pass | fail | not_started | error | timeout
    seconds REAL NOT NULL,       -- wall time of the whole check
    user_seconds REAL,           -- time spent in the user's code
    passed INTEGER NOT NULL,     -- checks passed
    total INTEGER NOT NULL,      -- checks run
    stage TEXT                   -- last stage passed in full
);
CREATE INDEX IF NOT EXISTS checks_by_kata ON checks (kata, at);
"""


class ProgressError(Exception):
    """The database cannot be read or written; it is left as it is."""


class Progress:
    def __init__(self, path: Path):
        self.path = path
        try:
            self.db = sqlite3.connect(path, timeout=30)
            self.db.execute("PRAGMA busy_timeout = 30000")
            self.db.execute("PRAGMA journal_mode = WAL")  # readers never block the writer
            self.db.executescript(SCHEMA)
        except sqlite3.Error as err:
            raise ProgressError(f"cannot use the progress database {path}: {err}. "
                                "It was left untouched; move it aside to start a new history.") from None

    def record(self, result) -> None:
        passed = sum(c.passed for c in result.checks)
        try:
            with self.db:
                self.db.execute(
                    "INSERT INTO checks (kata, at, status, seconds, user_seconds, passed, total, stage)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (result.name, datetime.now(timezone.utc).isoformat(timespec="seconds"), result.status,
                     result.seconds, result.user_seconds, passed, len(result.checks), result.stage))
        except sqlite3.Error as err:
            raise ProgressError(f"could not record the check in {self.path}: {err}") from None

    def summary(self) -> dict[str, dict]:
        """Per kata id: last status, attempts, and the best (fastest) passing time of the user's code."""
        try:
            rows = self.db.execute(
                "SELECT kata, COUNT(*), MIN(CASE WHEN status = 'pass' THEN user_seconds END),"
                " (SELECT status FROM checks c2 WHERE c2.kata = c.kata ORDER BY at DESC, id DESC LIMIT 1)"
                " FROM checks c GROUP BY kata").fetchall()
        except sqlite3.Error as err:
            raise ProgressError(f"cannot read the progress database {self.path}: {err}") from None
        return {kata: {"attempts": n, "best": best, "status": last} for kata, n, best, last in rows}

    def close(self) -> None:
        self.db.close()
