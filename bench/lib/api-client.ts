/** What the API answered: its status and its JSON body (null when empty, `{ text }` when not JSON). */
export interface Reply {
  status: number;
  json: any;
}

export interface ApiClient {
  /** One request; answers whatever came back. */
  call(method: string, path: string, body?: unknown): Promise<Reply>;
  /** One request that must succeed: its JSON body, or an error naming the status and body. */
  ok(method: string, path: string, body?: unknown): Promise<any>;
}

/** A JSON client for Relay's API at `base` (e.g. a bench server's url), authenticated with `key`. */
export function apiClient(base: string, key: string): ApiClient {
  const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json" };
  const call = async (method: string, path: string, body?: unknown): Promise<Reply> => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let json: any = null;
    if (text) {
      try {
        json = JSON.parse(text);
      } catch {
        json = { text };
      }
    }
    return { status: response.status, json };
  };
  return {
    call,
    async ok(method, path, body) {
      const reply = await call(method, path, body);
      if (reply.status >= 300)
        throw new Error(`${method} ${path}: ${reply.status} ${JSON.stringify(reply.json).slice(0, 300)}`);
      return reply.json;
    },
  };
}
