import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A server that is not Relay, or not quite: something at the URL the command was given (a
 * proxy, a wrong host, a broken deployment). It takes a free loopback port, records each
 * request, and answers with whatever the test sets.
 */

export interface Seen {
  method: string;
  path: string;
  authorization: string | undefined;
}

export type Answer = (req: IncomingMessage, res: ServerResponse) => void;

export interface FakeServer {
  url: string;
  /** The requests so far, oldest first. */
  seen: Seen[];
  /** Answers the next requests with `answer`. */
  answer(answer: Answer): void;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  return (server.address() as AddressInfo).port;
}

/** A fake server on a free port, answering `answer` until told otherwise. */
export async function fakeServer(answer: Answer = answers.json(200, {})): Promise<FakeServer> {
  const seen: Seen[] = [];
  let current = answer;
  // A WebSocket handshake gets no `upgrade` handler: Node closes it, so a live subscription is refused.
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? "", path: req.url ?? "", authorization: req.headers.authorization });
    req.resume();
    current(req, res);
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    answer: (next) => {
      current = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A URL where nothing listens: a free port taken from the system and let go. */
export async function refusedUrl(): Promise<string> {
  const server = createServer();
  const port = await listen(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** The answers the tests give. */
export const answers = {
  json:
    (status: number, body: unknown): Answer =>
    (_req, res) =>
      res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body)),
  text:
    (status: number, contentType: string, body: string): Answer =>
    (_req, res) =>
      res.writeHead(status, { "Content-Type": contentType }).end(body),
  /** The connection closed with no answer at all. */
  drop: (): Answer => (req) => req.socket.destroy(),
  /** A body cut off half-way: the headers and a first piece, then the connection closes. */
  cut: (): Answer => (req, res) => {
    res.writeHead(200, { "Content-Type": "application/json" });
    res.write('{"items": [');
    setImmediate(() => req.socket.destroy());
  },
  /** By `METHOD /path` (query left out), else `otherwise`. */
  byRoute:
    (routes: Record<string, Answer>, otherwise: Answer): Answer =>
    (req, res) =>
      (routes[`${req.method} ${(req.url ?? "").split("?")[0]}`] ?? otherwise)(req, res),
};
