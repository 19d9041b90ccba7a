// The Usage page's chart: one counter of each bucket of a usage report as bars for an SVG.
// Pure (no DOM): tested in test/dashboard/ with real reports.

/** What the chart can show: a label, and how a bucket's value is read. */
export const METRICS = {
  requests: { label: "Requests", of: (b) => b.requests },
  sessions: { label: "Sessions", of: (b) => b.sessions },
  runs: { label: "Runs", of: (b) => b.runs },
  handoffs: { label: "Handoffs", of: (b) => b.handoffs },
  tool_calls: { label: "Tool calls", of: (b) => b.tool_calls },
  model_calls: { label: "Model calls", of: (b) => b.model_calls },
  tokens: { label: "Model tokens", of: (b) => b.input_tokens + b.output_tokens },
  d1_rows_written: { label: "D1 rows written", of: (b) => b.d1_rows_written },
  d1_bytes_written: { label: "D1 bytes written", of: (b) => b.d1_bytes_written },
};

/** The axis's top: the smallest 1, 2 or 5 times a power of ten at or above `max` (1 for nothing). */
export function axisTop(max) {
  if (!(max > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}

/**
 * The bars of `metric` over the report's buckets, in a `width` × `height` box (y grows down):
 * one slot per bucket, `gap` between bars, heights scaled to the axis's top.
 */
export function usageBars(buckets, metric, { width, height, gap = 2 }) {
  const of = METRICS[metric].of;
  const values = buckets.map(of);
  const top = axisTop(Math.max(0, ...values));
  const slot = buckets.length > 0 ? width / buckets.length : width;
  const bars = buckets.map((bucket, i) => {
    const value = values[i];
    const tall = Math.round((value / top) * height * 100) / 100;
    return {
      x: Math.round((i * slot + gap / 2) * 100) / 100,
      y: Math.round((height - tall) * 100) / 100,
      width: Math.max(1, Math.round((slot - gap) * 100) / 100),
      height: tall,
      value,
      day: bucket.start.slice(0, 10),
    };
  });
  return { top, bars };
}

/** A count as people read it: 1,234; bytes as kB, MB. */
export function amount(value, metric) {
  if (metric !== "d1_bytes_written") return value.toLocaleString("en");
  if (value < 1000) return `${value} B`;
  if (value < 1_000_000) return `${(value / 1000).toFixed(1)} kB`;
  return `${(value / 1_000_000).toFixed(1)} MB`;
}
