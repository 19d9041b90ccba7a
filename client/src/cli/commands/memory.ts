import { unwrap } from "../../client.ts";
import type { MemoryFact, MemoryView } from "../../types.ts";
import type { Command, Context } from "../command.ts";
import { usage } from "../exit.ts";
import { table } from "../output.ts";
import { MEMORY_FACT, MEMORY_VIEW, reply } from "../replies.ts";

/**
 * `relay memory <session>`: the session's memory of facts (docs/memory.md, Facts), which every
 * agent of the session gets in its prompt; `set` writes a fact as a person's, `rm` deletes one.
 */

const when = (iso: string) => iso.replace("T", " ").replace(/\.\d+Z$/, "Z");

/** A value on one line of the table, however it was written. */
const oneLine = (value: string) => value.replace(/\s*[\r\n]+\s*/g, " ");

async function show(ctx: Context, id: string): Promise<void> {
  const relay = ctx.relay();
  const view = await reply<MemoryView>(
    relay,
    relay.api.GET("/v1/sessions/{id}/memory", { params: { path: { id } } }),
    MEMORY_VIEW,
    "GET /v1/sessions/{id}/memory",
  );
  if (ctx.out.json) return ctx.out.data(view);
  if (view.facts.length === 0)
    return ctx.out.note(`The session's memory holds no facts: relay memory ${id} set <key> <value> writes one.`);
  table(
    ctx.out,
    ["key", "value", "written by", "updated"],
    view.facts.map((f) => [f.key, oneLine(f.value), f.agent ?? "a person", when(f.updated_at)]),
  );
  ctx.out.note(
    `${view.facts.length} of ${view.limits.facts} facts, ${view.chars} of ${view.limits.total_chars} characters.`,
  );
}

async function set(ctx: Context, id: string, key: string, value: string): Promise<void> {
  const relay = ctx.relay();
  const fact = await reply<MemoryFact>(
    relay,
    relay.api.PUT("/v1/sessions/{id}/memory/{key}", { params: { path: { id, key } }, body: { value } }),
    MEMORY_FACT,
    "PUT /v1/sessions/{id}/memory/{key}",
  );
  if (ctx.out.json) return ctx.out.data(fact);
  ctx.out.line(`remembered ${fact.key}`);
}

async function remove(ctx: Context, id: string, key: string): Promise<void> {
  const relay = ctx.relay();
  await unwrap(relay.api.DELETE("/v1/sessions/{id}/memory/{key}", { params: { path: { id, key } } }), relay.url);
  if (ctx.out.json) return ctx.out.data({ deleted: key });
  ctx.out.line(`forgot ${key}`);
}

export const memory: Command = {
  name: "memory",
  summary: "A session's memory of facts: list them, write one, delete one",
  usage: [
    "relay memory <session>                       the facts by key, who wrote each and when, how full it is",
    "relay memory <session> set <key> <value…>    write a fact (a key written again is replaced)",
    "relay memory <session> rm <key>              delete a fact",
  ].join("\n"),
  async run(ctx) {
    const [id, action, key, ...words] = ctx.positionals;
    if (id === undefined) throw usage(`memory needs a session id\n${memory.usage}`);
    if (action === undefined) {
      await show(ctx, id);
      return undefined;
    }
    if (action !== "set" && action !== "rm") throw usage(`memory <session>: set or rm\n${memory.usage}`);
    if (key === undefined) throw usage(`memory ${action} needs a fact's key`);
    if (action === "rm") {
      if (words.length > 0) throw usage("memory rm takes one key");
      await remove(ctx, id, key);
      return undefined;
    }
    const value = words.join(" ").trim();
    if (!value) throw usage("memory set needs the fact's value");
    await set(ctx, id, key, value);
    return undefined;
  },
};
