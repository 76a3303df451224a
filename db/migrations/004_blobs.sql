-- Version 4: file bytes stored once. Earlier versions kept a full copy
-- of a file in every intent (before and after) and in its original: a
-- campaign on three 100k-line tables wrote 88 MB in three iterations, as
-- each A/B switch journals the same two versions again. Bytes now go to
-- `blobs`, keyed by their sha256, and the rows refer to them. Rows written
-- earlier keep their bytes inline (content, before, after) and are read as
-- before; readers take the inline bytes when present, else the blob.
CREATE TABLE blobs (
  sha256        TEXT PRIMARY KEY,             -- hex sha256 of content
  size          INTEGER NOT NULL,             -- bytes
  content       BLOB NOT NULL,
  created_at    INTEGER NOT NULL
);
ALTER TABLE originals ADD COLUMN content_blob TEXT REFERENCES blobs(sha256);
ALTER TABLE intents ADD COLUMN before_blob TEXT REFERENCES blobs(sha256);
ALTER TABLE intents ADD COLUMN after_blob TEXT REFERENCES blobs(sha256);
