-- Version 3: a campaign's owner. The runner that runs a campaign holds its
-- lease: these columns name it (a token of its own, its pid and host) and it
-- renews heartbeat_at every few seconds. A second runner is refused while
-- the lease is live (runner/campaign/lease.c says when it is) and takes over
-- a lease whose runner died. All NULL: nobody runs the campaign.
ALTER TABLE campaigns ADD COLUMN owner_token TEXT;      -- the holder's token, NULL when nobody holds it
ALTER TABLE campaigns ADD COLUMN owner_pid INTEGER;     -- the holder's process id
ALTER TABLE campaigns ADD COLUMN owner_host TEXT;       -- the holder's host name
ALTER TABLE campaigns ADD COLUMN owner_since INTEGER;   -- when it took the lease
ALTER TABLE campaigns ADD COLUMN heartbeat_at INTEGER;  -- its last heartbeat
