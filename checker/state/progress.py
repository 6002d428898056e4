"""All history lives in the workspace's SQLite database: checks, hints, solutions seen, resets, drills.

Each event is written (and committed) as it happens, so a killed watch or drill loses nothing.
The schema only ever grows, by numbered migrations (PRAGMA user_version); a database that cannot
be read is reported and left exactly as it is, never recreated.
"""

from __future__ import annotations

import hashlib
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

from checker.lang import t

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

# MIGRATIONS[n]: the statements that bring a database from user_version n to n + 1.
# Never edit one that shipped: add one.
MIGRATIONS = [
    (
        "ALTER TABLE checks ADD COLUMN drill INTEGER",  # the drill it ran in (NULL: the workspace file)
        "ALTER TABLE checks ADD COLUMN elapsed REAL",  # seconds since the drill started
        """CREATE TABLE drills (
            id INTEGER PRIMARY KEY,
            preset TEXT NOT NULL,        -- preset name, or 'custom'
            katas TEXT NOT NULL,         -- kata ids, space-separated, in drill order
            folder TEXT NOT NULL,        -- where its stubs were copied
            started_at TEXT NOT NULL,    -- UTC, ISO 8601
            minutes REAL NOT NULL,       -- time allowed
            allow_hints INTEGER NOT NULL,
            pid INTEGER,                 -- the process running it, to tell a killed drill from a live one
            ended_at TEXT,               -- NULL while it runs, or if it was killed
            end_reason TEXT,             -- time, done, quit or interrupted
            score INTEGER                -- 0 to 100
        )""",
        """CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            kata TEXT NOT NULL,
            at TEXT NOT NULL,            -- UTC, ISO 8601
            kind TEXT NOT NULL,          -- hint, solution or reset
            detail TEXT,                 -- a hint: its level; a reset: the path of the backup
            drill INTEGER                -- the drill it happened in, if any
        )""",
        "CREATE INDEX events_by_kata ON events (kata, at)",
    ),
    (
        # accepted variants and follow-up questions the run raised (NULL: recorded before they existed)
        "ALTER TABLE checks ADD COLUMN followups INTEGER",
    ),
    (
        # sha256 of the file checked, to tell when it changed since (NULL: recorded before, or no file)
        "ALTER TABLE checks ADD COLUMN file_hash TEXT",
    ),
    (
        """CREATE TABLE answers (
            id INTEGER PRIMARY KEY,
            question TEXT NOT NULL,      -- a quiz question's id: why-scale, kv-cache-bytes
            seed INTEGER NOT NULL,       -- its draw: the numbers and the shuffle asked
            topic TEXT NOT NULL,
            at TEXT NOT NULL,            -- UTC, ISO 8601
            right INTEGER NOT NULL,      -- 1 right, 0 wrong
            given TEXT NOT NULL,         -- the answer as typed
            drill INTEGER                -- the drill whose quiz asked it, if any
        )""",
        "CREATE INDEX answers_by_question ON answers (question, at)",
    ),
]




class ProgressError(Exception):
    """The database cannot be read or written; it is left as it is."""


class NotRecorded(ProgressError):
    """The workspace cannot be written (read-only, or its disk is full): history is read, nothing recorded."""


def file_hash(path) -> str | None:
    """sha256 of the file's bytes; None if there is no such file."""
    from checker.state.workspace import WorkspaceError, read_source

    try:
        return hashlib.sha256(read_source(Path(path))).hexdigest()
    except (OSError, TypeError, WorkspaceError):
        return None


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


_open: list[sqlite3.Connection] = []  # every connection this process opened, for close_all


def close_all() -> None:
    """Close every history still open: SQLite folds its write-ahead log back into the database and removes
    the -wal and -shm files (kata ends with os._exit, which would leave them)."""
    while _open:
        try:
            _open.pop().close()
        except sqlite3.Error:
            pass


class Progress:
    def __init__(self, path: Path, unwritable: str | None = None):
        """unwritable: 'readonly' or 'full' to read the history without writing anything (not even its schema)."""
        self.path = path
        self.unwritable = unwritable
        if unwritable:
            self.db = self._read_only(path)
            return
        try:
            self.db = sqlite3.connect(path, timeout=30)
            _open.append(self.db)
            self.db.row_factory = sqlite3.Row
            self.db.execute("PRAGMA busy_timeout = 30000")
            self.db.execute("PRAGMA journal_mode = WAL")  # readers never block the writer
            damage = self.db.execute("PRAGMA quick_check").fetchone()[0]
            if damage != "ok":  # never written into: more writes would spread the damage
                first = next((line for line in damage.splitlines() if not line.startswith("***")), damage)
                raise sqlite3.DatabaseError(t("it is damaged ({finding})", finding=first))
            self.db.executescript(SCHEMA)
            self._migrate()
        except sqlite3.Error as err:
            raise ProgressError(t("cannot use the progress database {path}: {error}. It was left untouched; move it "
                                  "aside to start a new history.", path=path, error=err)) from None

    @staticmethod
    def _read_only(path: Path) -> sqlite3.Connection:
        """The history as it is, for reading; an empty one in memory if there is none yet."""
        uri = Path(path).resolve().as_uri()
        # immutable: a database in WAL mode cannot otherwise be opened where its -shm file cannot be made
        for suffix in ("?mode=ro", "?immutable=1"):
            try:
                db = sqlite3.connect(uri + suffix, uri=True)
                db.execute("SELECT COUNT(*) FROM checks").fetchone()
                db.execute("SELECT COUNT(*) FROM drills").fetchone()
                db.row_factory = sqlite3.Row
                return db
            except sqlite3.Error:
                continue
        db = sqlite3.connect(":memory:")
        db.executescript(SCHEMA)
        for migration in MIGRATIONS:
            for statement in migration:
                db.execute(statement)
        db.row_factory = sqlite3.Row
        return db

    def _migrate(self) -> None:
        """Apply the missing migrations in one write transaction (another process may race us)."""
        if self.db.execute("PRAGMA user_version").fetchone()[0] >= len(MIGRATIONS):
            return
        self.db.execute("BEGIN IMMEDIATE")
        try:
            version = self.db.execute("PRAGMA user_version").fetchone()[0]  # again, under the lock
            for migration in MIGRATIONS[version:]:
                for statement in migration:
                    self.db.execute(statement)
            self.db.execute(f"PRAGMA user_version = {max(version, len(MIGRATIONS))}")
            self.db.commit()
        except BaseException:
            self.db.rollback()
            raise

    def _write(self, sql: str, values: tuple) -> int:
        if self.unwritable:
            from checker.lang import language, say

            raise NotRecorded(say(language(), f"unrecorded.{self.unwritable}", folder=self.path.parent.parent))
        try:
            with self.db:
                return self.db.execute(sql, values).lastrowid
        except sqlite3.Error as err:
            from checker.state.workspace import unwritable

            why = unwritable(self.path.parent.parent)  # read-only or full since it was opened: said as such
            if why:
                self.unwritable = why
                return self._write(sql, values)
            raise ProgressError(t("could not write to {path}: {error}", path=self.path, error=err)) from None

    def _read(self, sql: str, values: tuple = ()) -> list[sqlite3.Row]:
        try:
            return self.db.execute(sql, values).fetchall()
        except sqlite3.Error as err:
            raise ProgressError(t("cannot read the progress database {path}: {error}", path=self.path, error=err)) from None

    # ------------------------------------------------------------------------- checks

    def record(self, result, *, drill: int | None = None, elapsed: float | None = None) -> None:
        passed = sum(c.passed for c in result.checks)
        self._write("INSERT INTO checks (kata, at, status, seconds, user_seconds, passed, total, stage, drill, elapsed,"
                    " followups, file_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (result.name, now(), result.status, result.seconds, result.user_seconds, passed,
                     len(result.checks), result.stage, drill, elapsed, len(result.followups()), file_hash(result.file)))

    def summary(self) -> dict[str, dict]:
        """Per kata id, for the workspace file (drills aside): last status and its open follow-ups, the
        hash of the file it checked, attempts, the fastest passing run of the code."""
        last = ("(SELECT {} FROM checks c2 WHERE c2.kata = c.kata AND c2.drill IS NULL"
                " ORDER BY at DESC, id DESC LIMIT 1)")
        rows = self._read(
            "SELECT kata, COUNT(*), MIN(CASE WHEN status = 'pass' THEN user_seconds END), "
            + ", ".join(last.format(column) for column in ("status", "followups", "file_hash"))
            + " FROM checks c WHERE drill IS NULL GROUP BY kata")
        return {kata: {"attempts": n, "fastest_run": fastest, "status": status, "followups": followups or 0,
                       "file_hash": checked} for kata, n, fastest, status, followups, checked in rows}

    def checks(self) -> list[dict]:
        return [dict(r) for r in self._read("SELECT * FROM checks ORDER BY at, id")]

    # ------------------------------------------------------------------------- hints, solutions, resets

    def add_event(self, kata: str, kind: str, detail: str | None = None, drill: int | None = None) -> None:
        self._write("INSERT INTO events (kata, at, kind, detail, drill) VALUES (?, ?, ?, ?, ?)",
                    (kata, now(), kind, detail, drill))

    def events(self) -> list[dict]:
        return [dict(r) for r in self._read("SELECT * FROM events ORDER BY at, id")]

    def hints_seen(self, kata: str, drill: int | None) -> int:
        """Hints shown in this round: inside the drill, or since the kata's last reset."""
        if drill is not None:
            sql, values = "SELECT COUNT(*) FROM events WHERE kata = ? AND kind = 'hint' AND drill = ?", (kata, drill)
        else:
            sql, values = ("SELECT COUNT(*) FROM events WHERE kata = ? AND kind = 'hint' AND drill IS NULL AND id >"
                           " COALESCE((SELECT MAX(id) FROM events WHERE kata = ? AND kind = 'reset'), 0)", (kata, kata))
        return self._read(sql, values)[0][0]

    # ------------------------------------------------------------------------- quiz answers

    def record_answer(self, question: str, seed: int, topic: str, right: bool, given: str,
                      drill: int | None = None) -> None:
        self._write("INSERT INTO answers (question, seed, topic, at, right, given, drill) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (question, seed, topic, now(), int(right), given, drill))

    def answers(self) -> list[dict]:
        return [dict(r) for r in self._read("SELECT * FROM answers ORDER BY at, id")]

    # ------------------------------------------------------------------------- drills

    def start_drill(self, preset: str, katas: list[str], folder: Path, minutes: float, allow_hints: bool,
                    pid: int) -> int:
        return self._write("INSERT INTO drills (preset, katas, folder, started_at, minutes, allow_hints, pid)"
                           " VALUES (?, ?, ?, ?, ?, ?, ?)",
                           (preset, " ".join(katas), str(folder), now(), minutes, int(allow_hints), pid))

    def end_drill(self, drill: int, reason: str, score: int) -> None:
        self._write("UPDATE drills SET ended_at = ?, end_reason = ?, score = ? WHERE id = ?",
                    (now(), reason, score, drill))

    def drills(self) -> list[dict]:
        return [dict(r) for r in self._read("SELECT * FROM drills ORDER BY started_at, id")]

    def close(self) -> None:
        self.db.close()


def open_progress(ws: Path) -> Progress:
    """The workspace's history; a ProgressError (exit status 2) if it cannot be used.

    In a workspace that cannot be written (read-only, a full disk) the history is still read;
    recording then raises NotRecorded, whose message says so.
    """
    from checker.state import workspace

    try:
        return Progress(workspace.database(ws))
    except ProgressError:
        why = workspace.unwritable(ws)
        if why is None:
            raise
        return Progress(workspace.database(ws), unwritable=why)
