import { Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../app-env";
import { matchCapabilities, normalizeRequired } from "../collaboration/capability-match";
import { loadDefinitions } from "../registry/store";
import { decodeCursor, pageByOffset, pagingQuery } from "./cursor";
import { OffsetPosition } from "./positions";
import { readQuery } from "./validate";

/**
 * `GET /v1/capabilities/match?capabilities=a,b&exclude=x&min_score=0.5`: the tenant's
 * agents ranked by the proficiency-weighted matcher, best first, each with the
 * capabilities it matched and those it lacks. Paged like every list (`limit`, `cursor`): the
 * cursor is an offset into the ranking, which is deterministic for a given registry.
 */

const commaList = (max: number) =>
  z
    .string()
    .max(4000)
    .transform((text) =>
      text
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s.length > 0),
    )
    .pipe(z.array(z.string().max(100)).max(max));

export const CapabilityMatchQuery = z.strictObject({
  capabilities: commaList(20).pipe(z.array(z.string()).min(1, "name at least one capability")),
  exclude: commaList(100).optional(),
  min_score: z.coerce.number().min(0).max(1).default(0),
  ...pagingQuery(200, 50),
});

export const capabilities = new Hono<AppEnv>().get("/match", async (c) => {
  const query = readQuery(c, CapabilityMatchQuery);
  const start = decodeCursor(query.cursor, OffsetPosition);
  const agents = await loadDefinitions(c.env.DB, c.get("tenant"));
  const matches = matchCapabilities(agents, query.capabilities, { exclude: query.exclude, min_score: query.min_score });
  const ranked = matches.map(({ agent, score, matched, missing, hits }) => ({ agent, score, matched, missing, hits }));
  return c.json({
    ...pageByOffset(ranked, { limit: query.limit, start }),
    required: normalizeRequired(query.capabilities),
    exclude: query.exclude ?? [],
    min_score: query.min_score,
  });
});
