-- The handoffs history is read only per agent, newest first by id (0003's indexes).
-- The (…, created_at, id) indexes of 0002 serve no query, yet every handoff's upsert
-- wrote them in each flush: three fewer index rows written per handoff.
DROP INDEX IF EXISTS handoffs_source;
DROP INDEX IF EXISTS handoffs_target;
DROP INDEX IF EXISTS handoffs_session;
