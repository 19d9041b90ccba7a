import * as z from "zod";
import { MemoryFact, MemoryFactWrite, MemoryKey, MemoryView } from "../../schemas/memory";
import type { Operation } from "./operation";

/**
 * The session memory's routes (docs/memory.md, Facts): facts every agent of the session gets
 * in its prompt, which people read and change here. `body` and `session` are the table's
 * shared error lists.
 */
export function memoryOperations(body: Operation["errors"], session: Operation["errors"]): Operation[] {
  const id = z.string().describe("The session's id (ses_…).");
  const params = { id, key: MemoryKey.describe("The fact's key: letters, digits, '_', '.' or '-', at most 64.") };
  return [
    {
      method: "get",
      path: "/v1/sessions/{id}/memory",
      tag: "sessions",
      summary: "The session's memory of facts, by key, and how full it is",
      params: { id },
      answers: { 200: { description: "The facts and the memory's limits.", schema: MemoryView } },
      errors: session,
    },
    {
      method: "put",
      path: "/v1/sessions/{id}/memory/{key}",
      tag: "sessions",
      summary: "Write a fact (a key written again is replaced)",
      description:
        "Written as a person's (`agent` null) and audited as `memory.fact_written` with the key, never the value. Every agent of the session sees it in its prompt from its next turn. At most 50 facts and 8,000 characters of keys and values: past them, 409 MEMORY_FULL and nothing is written.",
      params,
      body: MemoryFactWrite,
      answers: { 200: { description: "The fact as stored.", schema: MemoryFact } },
      errors: [...body, ...session, "MEMORY_FULL"],
    },
    {
      method: "delete",
      path: "/v1/sessions/{id}/memory/{key}",
      tag: "sessions",
      summary: "Delete a fact",
      description: "Audited as `memory.fact_deleted` with the key.",
      params,
      answers: { 204: { description: "Done; no body." } },
      errors: ["VALIDATION_FAILED", ...session, "NOT_FOUND"],
    },
  ];
}
