/**
 * Unauthenticated webhook refusals, counted in memory (one counter per isolate) and written
 * as an aggregate: a sender who signs nothing must not cost Relay a write per request. This
 * module is the policy — what is counted, which refusal becomes the minute's sample — and
 * writes nothing; ./webhook-rejections.ts turns a batch into D1 statements.
 */

/** An isolate starts at most one flush of its counts per this interval. */
export const REJECTION_FLUSH_MS = 1_000;
/** At most one `webhook.rejected` audit record per source per window (minute). */
export const SAMPLE_WINDOW_MS = 60_000;

export interface Rejection {
  /** The tenant the source acts for (an unknown source's refusals are filed apart: ./webhook-rejections.ts). */
  tenant: string;
  /** The configured source's name, or the bucket of unknown ones. */
  source: string;
  reason: string;
  /** The `webhook-id` header as sent (capped), for the sample. */
  webhook_id: string | null;
  /** For an unknown source: the name the sender used (capped), for the sample. */
  attempted: string | null;
  at: number;
}

export interface RejectionCount {
  tenant: string;
  source: string;
  reason: string;
  count: number;
  first_at: number;
  last_at: number;
}

/** The first refusal of a source in a window this isolate has not written a sample for. */
export interface RejectionSample extends Rejection {
  window: number;
}

export interface RejectionBatch {
  counts: RejectionCount[];
  samples: RejectionSample[];
}

export const windowOf = (at: number): number => Math.floor(at / SAMPLE_WINDOW_MS);

const sourceKey = (r: { tenant: string; source: string }) => `${r.tenant}\u0000${r.source}`;

/**
 * Counts per (tenant, source, reason) and keeps one sample candidate per (tenant, source).
 * Its size is bounded by the configured sources times the reasons, whatever the traffic:
 * unknown sources share one bucket.
 */
export class RejectionCounter {
  private counts = new Map<string, RejectionCount>();
  private samples = new Map<string, RejectionSample>();
  /** Per source, the newest window this isolate has written a sample for. */
  private readonly sampled = new Map<string, number>();

  add(rejection: Rejection): void {
    const key = `${sourceKey(rejection)}\u0000${rejection.reason}`;
    const count = this.counts.get(key);
    if (count) {
      count.count++;
      count.first_at = Math.min(count.first_at, rejection.at);
      count.last_at = Math.max(count.last_at, rejection.at);
    } else {
      const { tenant, source, reason, at } = rejection;
      this.counts.set(key, { tenant, source, reason, count: 1, first_at: at, last_at: at });
    }
    this.offerSample(rejection);
  }

  /** Everything counted since the last take (the counter starts again empty), or null if nothing was. */
  take(): RejectionBatch | null {
    if (this.counts.size === 0) return null;
    const batch = { counts: [...this.counts.values()], samples: [...this.samples.values()] };
    this.counts = new Map();
    this.samples = new Map();
    return batch;
  }

  /** A batch that could not be written is counted again with what came since. */
  putBack(batch: RejectionBatch): void {
    for (const count of batch.counts) {
      const key = `${sourceKey(count)}\u0000${count.reason}`;
      const now = this.counts.get(key);
      if (now) {
        now.count += count.count;
        now.first_at = Math.min(now.first_at, count.first_at);
        now.last_at = Math.max(now.last_at, count.last_at);
      } else this.counts.set(key, { ...count });
    }
    for (const sample of batch.samples) this.offerSample(sample);
  }

  /** A written batch: its windows have their sample (from this isolate or another), none is offered again. */
  written(batch: RejectionBatch): void {
    for (const sample of batch.samples) {
      const key = sourceKey(sample);
      this.sampled.set(key, Math.max(this.sampled.get(key) ?? -1, sample.window));
    }
  }

  private offerSample(rejection: Rejection): void {
    const key = sourceKey(rejection);
    const window = windowOf(rejection.at);
    if ((this.sampled.get(key) ?? -1) >= window) return;
    const held = this.samples.get(key);
    // The newest window's first refusal: one pending sample per source, however long writes fail.
    if (held && (held.window > window || (held.window === window && held.at <= rejection.at))) return;
    this.samples.set(key, { ...rejection, window });
  }
}
