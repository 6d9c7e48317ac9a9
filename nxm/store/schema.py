"""The record cache's tables (`nxm.store.cache`): what each holds is said beside it.

A cache of another `VERSION` is made again from the files (keeping its vectors).
"""

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS records(
    key TEXT PRIMARY KEY,
    md TEXT NOT NULL, log TEXT NOT NULL,  -- identities of the files read
    good INTEGER NOT NULL,                -- 1: the files make a record (in docs)
    problem TEXT,                         -- else: why they do not
    hash TEXT, text TEXT, session TEXT, created TEXT, status TEXT,
    ord BLOB, line TEXT, ready INTEGER NOT NULL DEFAULT 0,
    facts BLOB                            -- what `nxs prime` reads of it (FACTS)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS docs(key TEXT PRIMARY KEY, head BLOB NOT NULL, doc BLOB NOT NULL)
    WITHOUT ROWID;  -- the record without body and events, first: reading it skips the whole one
CREATE INDEX IF NOT EXISTS records_hash ON records(hash);
CREATE INDEX IF NOT EXISTS records_session ON records(session) WHERE session IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_lines ON records(ord, line) WHERE line IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_text ON records(text);
CREATE INDEX IF NOT EXISTS records_problems ON records(key) WHERE problem IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_racy ON records(key)
    WHERE substr(md, -1) = '~' OR substr(log, -1) = '~';  -- read too soon after a change
CREATE INDEX IF NOT EXISTS records_unready ON records(ord) WHERE ready = 0 AND good = 1;
CREATE INDEX IF NOT EXISTS records_order ON records(ord) WHERE good = 1;  -- list's pages
CREATE INDEX IF NOT EXISTS records_status ON records(status, ord) WHERE good = 1;
CREATE INDEX IF NOT EXISTS records_state ON records(status) WHERE good = 1;  -- its counts
CREATE TABLE IF NOT EXISTS pending(key TEXT PRIMARY KEY, seq INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS vectors(
    model TEXT NOT NULL, text TEXT NOT NULL, row INTEGER NOT NULL, size INTEGER NOT NULL,
    crc INTEGER NOT NULL, PRIMARY KEY(model, text)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS vectors_row ON vectors(model, row);
CREATE TABLE IF NOT EXISTS extracted(key TEXT PRIMARY KEY, fingerprint TEXT, data BLOB)
    WITHOUT ROWID;
INSERT OR IGNORE INTO meta VALUES ('docs', '0');
CREATE TRIGGER IF NOT EXISTS docs_added AFTER INSERT ON docs
    BEGIN UPDATE meta SET value = value + 1 WHERE name = 'docs'; END;
CREATE TRIGGER IF NOT EXISTS docs_removed AFTER DELETE ON docs
    BEGIN UPDATE meta SET value = value + 1 WHERE name = 'docs'; END;
CREATE TRIGGER IF NOT EXISTS docs_changed AFTER UPDATE ON docs
    BEGIN UPDATE meta SET value = value + 1 WHERE name = 'docs'; END;
-- each record's facts before it was written or removed: what a kept prime index is brought up
-- to date from (`changes`); the last LOG_ROWS only
CREATE TABLE IF NOT EXISTS facts_log(seq INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT, old BLOB);
CREATE TRIGGER IF NOT EXISTS facts_written BEFORE INSERT ON records BEGIN
    INSERT INTO facts_log(key, old) VALUES (NEW.key, (SELECT facts FROM records WHERE key = NEW.key));
END;
CREATE TRIGGER IF NOT EXISTS facts_removed AFTER DELETE ON records
    BEGIN INSERT INTO facts_log(key, old) VALUES (OLD.key, OLD.facts); END;
CREATE TRIGGER IF NOT EXISTS facts_rewritten AFTER UPDATE OF facts ON records
    BEGIN INSERT INTO facts_log(key, old) VALUES (OLD.key, OLD.facts); END;
CREATE TRIGGER IF NOT EXISTS facts_trimmed AFTER INSERT ON facts_log
    BEGIN DELETE FROM facts_log WHERE seq <= NEW.seq - 2000; END;
-- how many good records have each status: what a list page says it is one of
CREATE TABLE IF NOT EXISTS counts(status TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS counts_replaced BEFORE INSERT ON records BEGIN
    UPDATE counts SET n = n - 1 WHERE status =
        (SELECT COALESCE(status, '') FROM records WHERE key = NEW.key AND good = 1);
END;
-- (no OR IGNORE inside: a trigger takes the conflict rule of the statement that fired it)
CREATE TRIGGER IF NOT EXISTS counts_added AFTER INSERT ON records WHEN NEW.good = 1 BEGIN
    INSERT INTO counts SELECT COALESCE(NEW.status, ''), 0 WHERE NOT EXISTS
        (SELECT 1 FROM counts WHERE status = COALESCE(NEW.status, ''));
    UPDATE counts SET n = n + 1 WHERE status = COALESCE(NEW.status, '');
END;
CREATE TRIGGER IF NOT EXISTS counts_removed AFTER DELETE ON records WHEN OLD.good = 1
    BEGIN UPDATE counts SET n = n - 1 WHERE status = COALESCE(OLD.status, ''); END;
CREATE TRIGGER IF NOT EXISTS counts_changed AFTER UPDATE OF status, good ON records BEGIN
    UPDATE counts SET n = n - 1 WHERE OLD.good = 1 AND status = COALESCE(OLD.status, '');
    INSERT INTO counts SELECT COALESCE(NEW.status, ''), 0 WHERE NEW.good = 1 AND NOT EXISTS
        (SELECT 1 FROM counts WHERE status = COALESCE(NEW.status, ''));
    UPDATE counts SET n = n + 1 WHERE NEW.good = 1 AND status = COALESCE(NEW.status, '');
END;
"""
LOG_ROWS = 2000  # facts_log's length (its trigger's constant)
VERSION = "8"  # of the schema and of what a row holds: another version is rebuilt from scratch
