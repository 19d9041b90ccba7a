import { unwrap } from "../../client.ts";
import { paginate } from "../../pagination.ts";
import type { Secret } from "../../types.ts";
import type { Command, Context } from "../command.ts";
import { CliError, EXIT, usage } from "../exit.ts";
import { table } from "../output.ts";

/**
 * `relay secrets`: the tenant's vault (docs/security.md, The tenant vault). A value is read from
 * standard input or typed at a prompt that does not echo it, never taken from the command line,
 * where it would stay in the shell's history and show in the process list.
 */

const when = (iso: string | null) => (iso === null ? "-" : iso.replace("T", " ").replace(/\.\d+Z$/, "Z"));

function users(secret: Secret): string {
  const named = [...secret.used_by.agents.map((a) => `agent ${a}`), ...secret.used_by.tools.map((t) => `tool ${t}`)];
  return named.length === 0 ? "-" : named.join(", ");
}

async function list(ctx: Context): Promise<void> {
  const relay = ctx.relay();
  const secrets: Secret[] = [];
  for await (const secret of paginate((cursor) =>
    unwrap(relay.api.GET("/v1/secrets", { params: { query: { limit: 200, cursor } } }), relay.url),
  ))
    secrets.push(secret);
  if (ctx.out.json) return ctx.out.data(secrets);
  if (secrets.length === 0) return ctx.out.note("The vault holds no secrets: relay secrets set <name> stores one.");
  table(
    ctx.out,
    ["name", "stored", "replaced", "used by"],
    secrets.map((s) => [s.name, when(s.created_at), when(s.rotated_at), users(s)]),
  );
}

/** The value: standard input when it is not a terminal (one line; its end of line dropped), else a silent prompt. */
async function readValue(ctx: Context, name: string): Promise<string> {
  const value = await ctx.readSecret(`value for ${name} (not shown): `);
  if (value === null || value === "") throw usage(`no value for ${name}: pipe it in, or type it at the prompt`);
  return value;
}

async function set(ctx: Context, name: string): Promise<void> {
  const relay = ctx.relay();
  const value = await readValue(ctx, name);
  const stored = await unwrap(
    relay.api.PUT("/v1/secrets/{name}", { params: { path: { name } }, body: { value } }),
    relay.url,
  );
  if (ctx.out.json) return ctx.out.data(stored);
  // A secret's first value has no replacement time; the answer never holds the value.
  ctx.out.line(`${stored.rotated_at === null ? "stored" : "replaced"} ${stored.name}`);
}

async function remove(ctx: Context, name: string): Promise<void> {
  const relay = ctx.relay();
  await unwrap(relay.api.DELETE("/v1/secrets/{name}", { params: { path: { name } } }), relay.url);
  if (ctx.out.json) return ctx.out.data({ deleted: name });
  ctx.out.line(`deleted ${name}`);
}

export const secrets: Command = {
  name: "secrets",
  summary: "The tenant's vault: list secrets, store one (never echoed), delete one",
  usage: [
    "relay secrets ls                      names, when stored and replaced, which agents and tools use each",
    "relay secrets set <name>              store or replace a value: piped in, or typed at a silent prompt",
    "relay secrets rm <name>               delete a secret no agent or tool names",
    "",
    "  printf '%s' \"$TOKEN\" | relay secrets set github-token",
  ].join("\n"),
  async run(ctx) {
    const [action, name, ...extra] = ctx.positionals;
    if (action === "ls" || action === "list") {
      if (name !== undefined) throw usage("secrets ls takes no name");
      await list(ctx);
      return EXIT.OK;
    }
    if (action !== "set" && action !== "rm") throw usage(`secrets: ls, set or rm\n${secrets.usage}`);
    if (name === undefined) throw usage(`secrets ${action} needs a secret's name`);
    if (extra.length > 0)
      throw action === "set"
        ? new CliError(
            "secrets set reads the value from standard input or a prompt, never from the command line (it would stay in your shell's history); nothing was sent",
            EXIT.USAGE,
            "USAGE",
          )
        : usage("secrets rm takes one name");
    if (action === "set") await set(ctx, name);
    else await remove(ctx, name);
    return EXIT.OK;
  },
};
