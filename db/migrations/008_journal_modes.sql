-- Version 8: the journal records each file's permission bits, so that a
-- file a change recreates or a patch chmods gets its mode back on revert,
-- recovery and restore (an executable script stays 0755). Rows written
-- earlier have none: originals.mode held 0644 whatever the file's mode was,
-- so it is cleared (NULL: unknown, the file's mode is then left as it is).
-- The same step moves the bytes that rows written before version 4 held
-- inline into blobs; that part needs each content's sha256 and is done in
-- C by db/open.c (migrate_inline_bytes) right after this file runs.
ALTER TABLE intents ADD COLUMN before_mode INTEGER;
ALTER TABLE intents ADD COLUMN after_mode INTEGER;
UPDATE originals SET mode = NULL;
