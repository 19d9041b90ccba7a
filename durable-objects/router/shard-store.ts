import type { ShardSections } from "../../src/routing/router-codec";
import type { SchemaGate, Sql } from "../shared/sql";
import { AGENTS, BUCKET, HEAD, PIECE_BYTES, TEXTS } from "./schema";

/**
 * The router object's store of built shards (docs/scaling.md, "How a version is stored"): each
 * shard's sections one row each (src/routing/router-codec.ts), and the version they make up in
 * a row of its own. A build writes its shards and its version in one synchronous transaction,
 * so a read made between two awaits sees one whole version.
 *
 * Rows are keyed (kind, index, shard): a route reading bucket b of every shard reads one run
 * of neighbouring rows, and the heads of all shards are one run too. Heads and agent lists can
 * pass a row's 2 MB, so they are cut into pieces; a bucket or a texts chunk is a few kB.
 */

const bytesOf = (value: SqlStorageValue): Uint8Array => new Uint8Array(value as ArrayBuffer);

function joined(pieces: Uint8Array[]): Uint8Array {
  if (pieces.length === 1) return pieces[0]!;
  const out = new Uint8Array(pieces.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

export class ShardStore {
  /** `schema`: the object's one gate, shared by everything that reads its tables (see routerTables). */
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly sql: Sql,
    private readonly schema: SchemaGate,
  ) {}

  /** The version kept last, or null. */
  version<T>(): T | null {
    if (!this.schema.ready()) return null;
    const row = this.sql<{ data: string }>`SELECT data FROM router_version WHERE id = 1`[0];
    return row === undefined ? null : (JSON.parse(row.data) as T);
  }

  /**
   * Keeps a version: the sections of the shards it relinked replace theirs, rows of shards past
   * its count go, and its description is stored — or, with `version` null, forgets the version
   * kept (before a build whose parts are being written).
   */
  keep(version: unknown | null, shards: number, linked: ReadonlyMap<number, ShardSections>): void {
    this.schema.ensure();
    const exec = (query: string, ...binds: (number | string | ArrayBuffer)[]) => this.storage.sql.exec(query, ...binds);
    const put = (kind: number, idx: number, shard: number, bytes: Uint8Array) => {
      for (let piece = 0, at = 0; piece === 0 || at < bytes.byteLength; piece++, at += PIECE_BYTES) {
        const part = bytes.slice(at, at + PIECE_BYTES);
        exec("INSERT INTO router_sections VALUES (?, ?, ?, ?, ?)", kind, idx, shard, piece, part.buffer);
      }
    };
    this.storage.transactionSync(() => {
      if (version === null) {
        exec("DELETE FROM router_version");
        return;
      }
      // Integers of this object's own, so they go into the text.
      const gone = [...linked.keys()];
      exec(
        `DELETE FROM router_sections WHERE shard >= ${shards}${gone.length > 0 ? ` OR shard IN (${gone.join(",")})` : ""}`,
      );
      for (const [k, s] of linked) {
        put(HEAD, 0, k, s.head);
        put(AGENTS, 0, k, s.agents);
        for (const [i, chunk] of s.texts.entries()) put(TEXTS, i, k, chunk);
        for (const [b, bucket] of s.buckets.entries()) put(BUCKET, b, k, bucket);
      }
      exec("INSERT OR REPLACE INTO router_version (id, data) VALUES (1, ?)", JSON.stringify(version));
    });
  }

  /** One section of one shard (its pieces joined). */
  private section(kind: number, idx: number, shard: number): Uint8Array {
    const pieces = this.storage.sql
      .exec(
        "SELECT data FROM router_sections WHERE kind = ? AND idx = ? AND shard = ? ORDER BY piece",
        kind,
        idx,
        shard,
      )
      .toArray()
      .map((row) => bytesOf(row.data!));
    return joined(pieces);
  }

  heads(shards: readonly number[]): Map<number, Uint8Array> {
    return new Map(shards.map((k) => [k, this.section(HEAD, 0, k)]));
  }

  agents(shard: number): Uint8Array {
    return this.section(AGENTS, 0, shard);
  }

  texts(shard: number, chunks: readonly number[]): Map<number, Uint8Array> {
    return new Map(chunks.map((i) => [i, this.section(TEXTS, i, shard)]));
  }

  /** Buckets of several shards: shard → bucket → section. One query per list of buckets asked. */
  buckets(wanted: ReadonlyMap<number, readonly number[]>): Map<number, Map<number, Uint8Array>> {
    const out = new Map<number, Map<number, Uint8Array>>();
    const byList = new Map<string, number[]>();
    for (const [k, list] of wanted) {
      out.set(k, new Map());
      const key = list.join(",");
      byList.set(key, [...(byList.get(key) ?? []), k]);
    }
    for (const [list, shards] of byList) {
      if (list === "") continue;
      // Integers this object computed, so they go into the text (more than a statement may bind).
      const cursor = this.storage.sql.exec(
        `SELECT idx, shard, piece, data FROM router_sections
         WHERE kind = ${BUCKET} AND idx IN (${list}) AND shard IN (${shards.join(",")})
         ORDER BY kind, idx, shard, piece`,
      );
      for (const [idx, shard, piece, data] of cursor.raw()) {
        const held = out.get(shard as number)!;
        const bytes = bytesOf(data!);
        held.set(idx as number, (piece as number) > 0 ? joined([held.get(idx as number)!, bytes]) : bytes);
      }
    }
    return out;
  }

  /** Every section of some shards (what an isolate's load receives). */
  shards(ks: readonly number[]): Map<number, ShardSections> {
    const out = new Map<number, ShardSections>(
      ks.map((k) => [
        k,
        { head: this.section(HEAD, 0, k), agents: this.section(AGENTS, 0, k), texts: [], buckets: [] },
      ]),
    );
    if (ks.length === 0) return out;
    // In key order: chunks and buckets by index, so each shard's come in order.
    const cursor = this.storage.sql.exec(
      `SELECT kind, shard, piece, data FROM router_sections WHERE kind IN (${TEXTS}, ${BUCKET}) AND shard IN (${ks.join(",")})
       ORDER BY kind, idx, shard, piece`,
    );
    for (const [kind, shard, piece, data] of cursor.raw()) {
      const list = kind === TEXTS ? out.get(shard as number)!.texts : out.get(shard as number)!.buckets;
      const bytes = bytesOf(data!);
      if ((piece as number) > 0) list[list.length - 1] = joined([list[list.length - 1]!, bytes]);
      else list.push(bytes);
    }
    return out;
  }
}
