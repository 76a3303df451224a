-- Version 6: every engine launch and its provenance. A campaign that
-- keeps engines up between samples (engine.restart) launches fewer times
-- than it measures, so launches are rows of their own: when and for which
-- iteration and arm, how long it took to get ready, what the engine said
-- its version was, the executable's sha256, the container image and its
-- digest, the git HEAD and dirty state of the repositories the campaign
-- touches, the output of engine.provenance, what could not be recorded,
-- and how it differs from the campaign's first launch (NULL: it does not).
CREATE TABLE launches (
  id            INTEGER PRIMARY KEY,
  campaign_id   INTEGER NOT NULL REFERENCES campaigns(id),
  iteration_id  INTEGER REFERENCES iterations(id),
  arm           TEXT NOT NULL,                -- best | cand
  pgid          INTEGER,                      -- process group at launch
  port          INTEGER NOT NULL,
  ready_s       REAL,                         -- start to ready, seconds
  version       TEXT,                         -- self-reported: GET /version, /props, /get_server_info
  exe_path      TEXT,                         -- argv[0] resolved on PATH
  exe_sha256    TEXT,
  image_ref     TEXT,                         -- docker/podman run: the image as written
  image_digest  TEXT,                         -- from `image inspect`, NULL when it could not run
  repos         TEXT,                         -- JSON [{path, head, dirty}]
  extra         TEXT,                         -- engine.provenance output, redacted
  note          TEXT,                         -- what could not be recorded
  differs       TEXT,                         -- vs the campaign's first launch, NULL: same
  created_at    INTEGER NOT NULL
);
CREATE INDEX launches_campaign ON launches(campaign_id);
CREATE INDEX launches_iteration ON launches(iteration_id);
