import type { RelayClient } from "../../client.ts";
import type { components, RoutingConfigView } from "../../types.ts";
import type { Command } from "../command.ts";
import { flag } from "../command.ts";
import { usage } from "../exit.ts";
import { type Output, table } from "../output.ts";
import { ROUTING_CONFIG_VIEW, reply } from "../replies.ts";

/** A setting's dotted name in the served RoutingConfig (`threshold`, `llm.model`). */
type Dotted<T> = {
  [K in keyof T & string]: NonNullable<T[K]> extends Record<string, unknown>
    ? `${K}.${keyof NonNullable<T[K]> & string}`
    : K;
}[keyof T & string];
type ServedKey = Dotted<components["schemas"]["RoutingConfig"]>;

/**
 * Every routing setting (docs/configuration.md), as `relay config` names them. The served
 * schema is the one source: `satisfies` refuses a name it lacks, and `Unlisted` a setting it
 * gained that is not here (the typecheck fails after `npm run client:generate`).
 */
const KEYS = [
  "enabled",
  "strategy",
  "threshold",
  "llm.provider",
  "llm.model",
  "llm.timeout_ms",
  "fallback",
  "default_agent",
  "record_inputs",
] as const satisfies readonly ServedKey[];
/** A routing setting's name, without the `routing.` prefix. */
export type Key = (typeof KEYS)[number];
type Unlisted = Exclude<ServedKey, Key>;
const everyServedKey: [Unlisted] extends [never] ? true : Unlisted = true;
void everyServedKey;

/** The setting a typed name names (`routing.threshold` or `threshold`); a usage error for any other. */
export function keyOf(typed: string): Key {
  const key = typed.replace(/^routing\./, "");
  if (!(KEYS as readonly string[]).includes(key))
    throw usage(`unknown setting ${JSON.stringify(typed)}: one of ${KEYS.map((k) => `routing.${k}`).join(", ")}`);
  return key as Key;
}

/** A typed value as the API wants it: booleans, numbers and null where the setting takes them. */
function parseValue(key: Key, typed: string): unknown {
  if (key === "enabled" || key === "record_inputs") {
    if (typed !== "true" && typed !== "false") throw usage(`routing.${key} is true or false`);
    return typed === "true";
  }
  if (key === "threshold" || key === "llm.timeout_ms") {
    const n = Number(typed);
    if (typed.trim() === "" || !Number.isFinite(n))
      throw usage(`routing.${key} is a number (got ${JSON.stringify(typed)})`);
    return n;
  }
  if (key === "default_agent" && (typed === "null" || typed === "none")) return null;
  return typed;
}

/** A setting's value in a resolved configuration. */
export function settingValue(config: Record<string, unknown>, key: Key): unknown {
  const [a, b] = key.split(".") as [string, string | undefined];
  const top = config[a];
  return b === undefined ? top : (top as Record<string, unknown> | undefined)?.[b];
}

/** The tenant layer with `key` set to `value` (undefined: removed). */
function withValue(stored: Record<string, unknown>, key: Key, value: unknown): Record<string, unknown> {
  const next: Record<string, unknown> = structuredClone(stored);
  const [a, b] = key.split(".") as [string, string | undefined];
  if (b === undefined) {
    if (value === undefined) delete next[a];
    else next[a] = value;
  } else {
    const inner = { ...((next[a] as Record<string, unknown> | undefined) ?? {}) };
    if (value === undefined) delete inner[b];
    else inner[b] = value;
    if (Object.keys(inner).length === 0) delete next[a];
    else next[a] = inner;
  }
  return next;
}

const shown = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value));

/** The tenant's routing configuration: every value and the layer it came from. */
export function readRouting(relay: RelayClient): Promise<RoutingConfigView> {
  return reply(relay, relay.api.GET("/v1/config/routing"), ROUTING_CONFIG_VIEW, "GET /v1/config/routing");
}

/** Sets `key` to a typed value in the tenant's layer (undefined: removes it); the configuration after. */
export async function setRouting(relay: RelayClient, key: Key, typed: string | undefined): Promise<RoutingConfigView> {
  const value = typed === undefined ? undefined : parseValue(key, typed);
  const view = await readRouting(relay);
  const body = withValue((view.stored ?? {}) as Record<string, unknown>, key, value);
  return reply(
    relay,
    // biome-ignore lint/suspicious/noExplicitAny: the API validates the setting's type and says which is wrong.
    relay.api.PUT("/v1/config/routing", { body: body as any }),
    ROUTING_CONFIG_VIEW,
    "PUT /v1/config/routing",
  );
}

/** The values of `keys` (every setting by default) as a table of setting, value and layer, then any warnings. */
export function printRouting(out: Output, view: RoutingConfigView, keys: readonly Key[] = KEYS): void {
  table(
    out,
    ["setting", "value", "layer"],
    keys.map((k) => [`routing.${k}`, shown(settingValue(view.config, k)), view.sources[k] ?? "?"]),
  );
  for (const warning of view.warnings) out.note(out.paint("yellow", `warning: ${warning}`));
}

export const config: Command = {
  name: "config",
  summary: "Show the routing configuration with each value's layer, or set a value",
  usage: [
    "relay config                          every routing value and the layer it came from",
    "relay config <key>                    one value (e.g. routing.threshold)",
    "relay config <key> <value>            set it in the tenant's layer",
    "relay config <key> --unset            remove it from the tenant's layer",
    "relay config --reset                  clear the tenant's layer",
  ].join("\n"),
  options: { unset: { type: "boolean" }, reset: { type: "boolean" } },
  async run(ctx) {
    const [typedKey, typedValue, ...extra] = ctx.positionals;
    if (extra.length > 0) throw usage("config takes a key and at most one value");
    const relay = ctx.relay();
    const key = typedKey === undefined ? undefined : keyOf(typedKey);
    if (flag(ctx, "reset") && (key || flag(ctx, "unset"))) throw usage("--reset takes no key");
    if (flag(ctx, "unset") && (!key || typedValue !== undefined)) throw usage("--unset takes a key and no value");

    let view: RoutingConfigView;
    if (flag(ctx, "reset")) {
      view = await reply(
        relay,
        relay.api.DELETE("/v1/config/routing"),
        ROUTING_CONFIG_VIEW,
        "DELETE /v1/config/routing",
      );
    } else if (key && (typedValue !== undefined || flag(ctx, "unset"))) {
      view = await setRouting(relay, key, flag(ctx, "unset") ? undefined : typedValue);
    } else {
      view = await readRouting(relay);
    }
    if (ctx.out.json) {
      ctx.out.data(
        key ? { key: `routing.${key}`, value: settingValue(view.config, key), source: view.sources[key] } : view,
      );
      return undefined;
    }
    printRouting(ctx.out, view, key ? [key] : KEYS);
    return undefined;
  },
};
