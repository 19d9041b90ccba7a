/** The session's supervisor fan-outs (schema v9): one row per fan-out, its record parsed on read. */

export const FANOUT_FORMAT = 1;

export const FANOUT_DDL = [
  `CREATE TABLE fanouts (
     id      TEXT PRIMARY KEY,
     state   TEXT NOT NULL,
     record  TEXT NOT NULL,
     format  INTEGER NOT NULL DEFAULT ${FANOUT_FORMAT}
   )`,
] as const;
