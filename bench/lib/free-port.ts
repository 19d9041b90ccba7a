import { createServer } from "node:net";

/** Whether nothing listens on `port` at 127.0.0.1 now: a server is started on it and closed. */
export function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

/**
 * `count` ports of `from`…`to` that nothing listens on now, lowest first; throws when the range
 * has fewer. A bench keeps to a range of its own, so it never answers for another's server; the
 * ports are free when probed, which a server started at once then takes.
 */
export async function freePorts(count: number, from: number, to: number): Promise<number[]> {
  const ports: number[] = [];
  for (let port = from; port <= to && ports.length < count; port++) if (await isFree(port)) ports.push(port);
  if (ports.length < count) throw new Error(`only ${ports.length} of ports ${from}–${to} are free; ${count} needed`);
  return ports;
}
