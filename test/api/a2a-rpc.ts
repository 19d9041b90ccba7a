import { exports } from "cloudflare:workers";
import { ALPHA_KEY } from "./helpers";

/** How an A2A call is sent: the tenant's key, the A2A-Version (null: none), extra headers. */
export interface RpcOptions {
  key?: string;
  version?: string | null;
  headers?: Record<string, string>;
}

/** A JSON-RPC request to Relay's A2A endpoint at `path`, as a client sends it. */
export async function post(
  path: string,
  method: string,
  params: unknown,
  { key = ALPHA_KEY, version = "1.0", headers = {} }: RpcOptions = {},
): Promise<Response> {
  return (exports as any).default.fetch(
    new Request(`http://relay.test${path}`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Authorization: `Bearer ${key}`,
        ...(version === null ? {} : { "A2A-Version": version }),
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params }),
    }),
  );
}

/** The JSON-RPC answer of a call. */
export async function rpc(path: string, method: string, params: unknown, options?: RpcOptions) {
  const res = await post(path, method, params, options);
  return (await res.json()) as { id: unknown; result?: any; error?: { code: number; message: string; data?: any } };
}

/** SendMessage params: a user's text message with a fresh messageId. */
export const userMessage = (text: string, extra: Record<string, unknown> = {}) => ({
  message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }], ...extra },
});
