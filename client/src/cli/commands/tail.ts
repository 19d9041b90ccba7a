import type { Command } from "../command.ts";
import { text } from "../command.ts";
import { usage } from "../exit.ts";
import { eventLine } from "../render.ts";
import { checkedEvent, reply, SESSION } from "../replies.ts";

/**
 * `relay tail <session>`: the session's live events as they happen, over its WebSocket,
 * reconnecting from the last event seen; Ctrl-C stops it. `--after` replays from an event id.
 */
export const tail: Command = {
  name: "tail",
  summary: "Follow a session's live events",
  usage: "relay tail <session id> [--after <event id>]",
  options: { after: { type: "string" } },
  async run(ctx) {
    if (ctx.positionals.length !== 1) throw usage("tail takes one session id");
    const id = ctx.positionals[0]!;
    const after = text(ctx, "after");
    // Relay refuses a malformed id at the WebSocket handshake, which says no more than "refused".
    if (after !== undefined && !/^evt_[0-9a-z]{26}$/.test(after))
      throw usage(`--after takes an event id (evt_ and 26 letters or digits; got ${JSON.stringify(after)})`);
    const relay = ctx.relay();
    // A wrong id or key is an answer with a code; a WebSocket handshake would only say "closed".
    const session = await reply(
      relay,
      relay.api.GET("/v1/sessions/{id}", { params: { path: { id } } }),
      SESSION,
      "GET /v1/sessions/{id}",
    );
    const { out } = ctx;
    const sub = relay.subscribe(id, {
      ...(after ? { after } : {}),
      signal: ctx.signal,
      onState: (state) => {
        if (state === "live")
          out.note(out.paint("dim", `following ${session.id} (${session.current_agent}); Ctrl-C to stop`));
        if (state === "reconnecting") out.note(out.paint("yellow", "connection lost; reconnecting"));
      },
    });
    for await (const received of sub) {
      const event = checkedEvent(received, relay.url, "GET /v1/sessions/{id}/ws");
      if (out.json) {
        out.data(event, true);
        continue;
      }
      const line = eventLine(event, "tail");
      if (!line) continue;
      const at = out.paint("dim", event.at.slice(11, 23));
      out.line(`${at} ${line.style ? out.paint(line.style, line.text) : line.text}`);
    }
    return undefined;
  },
};
