-- Version 2: a proposal's role and the decision rule's verdict become
-- columns. Version 1 kept them in words: greedy wrote "confirm" and "trial"
-- into strategy_note, and a passed trial's reason ended with a fixed
-- sentence, which the campaign read back with strstr. The words stay in
-- place for people; these UPDATEs read them one last time to fill the
-- columns of iterations recorded by version 1.
ALTER TABLE iterations ADD COLUMN role TEXT NOT NULL DEFAULT 'change'
  CHECK (role IN ('change', 'trial', 'confirm'));
ALTER TABLE iterations ADD COLUMN passed INTEGER;  -- 1 passed its decision and gate, 0 did not, NULL none reached

UPDATE iterations SET role = 'confirm'
  WHERE strategy_note LIKE 'greedy round %: confirm%';
UPDATE iterations SET role = 'trial'
  WHERE strategy_note LIKE 'greedy round %: trial%';
UPDATE iterations SET passed = 1
  WHERE state = 'kept'
     OR reason LIKE '%greedy trial passed: the round''s best is applied again at its end%';
UPDATE iterations SET passed = 0
  WHERE passed IS NULL AND state IN ('reverted', 'gated');
