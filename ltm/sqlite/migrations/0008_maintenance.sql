-- Health and self-repair (SPEC §4 "Maintenance"). Times are Unix milliseconds (UTC).

-- The audit of self-repair: one row per repair the health findings called for, whatever
-- became of it: executed or failed, observed (observe mode changes nothing), skipped by its
-- cooldown or its hourly budget, or halted after runs whose repairs did not improve the
-- score. Scores and counts only, never what people wrote. The maintenance task removes
-- rows older than 30 days when it writes new ones.
CREATE TABLE maintenance_repairs (
    id           INTEGER PRIMARY KEY,
    run_at       INTEGER NOT NULL,
    action       TEXT    NOT NULL,
    outcome      TEXT    NOT NULL CHECK (outcome IN ('executed', 'failed', 'observed', 'skipped_cooldown', 'skipped_budget', 'halted')),
    mode         TEXT    NOT NULL,
    score_before INTEGER NOT NULL,
    score_after  INTEGER NOT NULL,
    found        INTEGER NOT NULL DEFAULT 0,
    changed      INTEGER NOT NULL DEFAULT 0,
    error        TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX maintenance_repairs_run ON maintenance_repairs (run_at);

-- Self-repair gives each dead job one more chance, never two: a job that dies again is a
-- poisoned job, and requeuing it on every run would spend the model budget in a loop. An
-- operator's `kioku jobs requeue` is not limited.
ALTER TABLE memory_jobs ADD COLUMN auto_requeues INTEGER NOT NULL DEFAULT 0;
