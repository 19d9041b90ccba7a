/**
 * The local provider's summary — NOT A MODEL'S: an extractive digest, so compaction works
 * offline (docs/memory.md, Offline). It keeps whole lines of the text it is given, the ones
 * most likely to carry facts (an earlier summary's, the user's, lines with numbers, ids,
 * names or addresses), as many as the word limit the request names allows, in their order.
 */

/** Lines that frame a summary request rather than carry the conversation. */
const FRAME = /^(Summary so far:|Transcript \(|What followed \(|Write the summary)/;
const LIMIT = /at most (\d+) words/;
const LINE_CHARS = 300;

function lineScore(line: string, earlier: boolean): number {
  let score = earlier ? 4 : 0;
  if (/^user:/.test(line)) score += 2;
  if (/^tool /.test(line)) score -= 1;
  score += Math.min(4, (line.match(/\d+/g) ?? []).length);
  score += Math.min(3, (line.slice(line.indexOf(":") + 1).match(/(?<=\s)\p{Lu}\p{L}+/gu) ?? []).length);
  if (/[@#]/.test(line)) score += 1;
  return score;
}

function words(line: string): number {
  return line.split(/\s+/).filter(Boolean).length;
}

/** The digest of a summary request's text, within the word limit it names (200 when none). */
export function extractiveDigest(text: string): string {
  const limit = Number(LIMIT.exec(text)?.[1] ?? 200);
  let earlier = false;
  const lines: { line: string; score: number; at: number }[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    if (FRAME.test(line)) {
      earlier = line.startsWith("Summary so far:");
      continue;
    }
    const clipped = line.length > LINE_CHARS ? `${line.slice(0, LINE_CHARS - 1)}…` : line;
    lines.push({ line: clipped, score: lineScore(clipped, earlier), at: lines.length });
  }
  const chosen: typeof lines = [];
  let used = 0;
  for (const candidate of [...lines].sort((a, b) => b.score - a.score || a.at - b.at)) {
    const n = words(candidate.line);
    if (used + n > limit) continue;
    chosen.push(candidate);
    used += n;
  }
  return chosen
    .sort((a, b) => a.at - b.at)
    .map((c) => c.line)
    .join("\n");
}
