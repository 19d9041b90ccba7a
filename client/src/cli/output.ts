/**
 * Where a command writes: results to stdout, progress and errors to stderr. `--json` prints
 * the API's answers as JSON (streams as one JSON object a line) and nothing decorative;
 * colour and spinners appear only on a terminal (and never with NO_COLOR).
 */

type Stream = { write(text: string): unknown; isTTY?: boolean };

export interface OutputOptions {
  json: boolean;
  stdout: Stream;
  stderr: Stream;
  env: Record<string, string | undefined>;
  noColor?: boolean;
}

const CODES = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
} as const;
export type Style = keyof typeof CODES;

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export class Output {
  readonly json: boolean;
  readonly color: boolean;
  private readonly stdout: Stream;
  private readonly stderr: Stream;
  private readonly spinners: boolean;

  constructor(options: OutputOptions) {
    this.json = options.json;
    this.stdout = options.stdout;
    this.stderr = options.stderr;
    const { env } = options;
    const noColor = options.noColor || (env.NO_COLOR ?? "") !== "" || env.TERM === "dumb";
    this.color = !this.json && !noColor && (Boolean(options.stdout.isTTY) || (env.FORCE_COLOR ?? "0") !== "0");
    this.spinners = !this.json && Boolean(options.stderr.isTTY) && env.TERM !== "dumb";
  }

  /** Text in a style, when colour is on. */
  paint(style: Style, text: string): string {
    if (!this.color) return text;
    const [on, off] = CODES[style];
    return `\u001b[${on}m${text}\u001b[${off}m`;
  }

  /** A line of the result. */
  line(text = ""): void {
    this.stdout.write(`${text}\n`);
  }

  /** Text without a newline (a prompt, a streamed piece). */
  write(text: string): void {
    this.stdout.write(text);
  }

  /** A value as JSON: pretty for one answer, one line each for a stream (`compact`). */
  data(value: unknown, compact = false): void {
    this.stdout.write(`${compact ? JSON.stringify(value) : JSON.stringify(value, null, 2)}\n`);
  }

  /** A note on stderr (progress, hints); silent with --json. */
  note(text: string): void {
    if (!this.json) this.stderr.write(`${text}\n`);
  }

  /** A failure, one line on stderr. */
  error(text: string): void {
    this.stderr.write(`${text}\n`);
  }

  /** A spinner on stderr while `work` runs (terminals only). */
  async spin<T>(label: string, work: Promise<T>): Promise<T> {
    if (!this.spinners) return work;
    let frame = 0;
    const draw = () => this.stderr.write(`\r${SPINNER[frame++ % SPINNER.length]} ${label}`);
    draw();
    const timer = setInterval(draw, 80);
    try {
      return await work;
    } finally {
      clearInterval(timer);
      this.stderr.write(`\r\u001b[2K`);
    }
  }
}

/** Rows as aligned columns (the header dimmed). */
export function table(out: Output, header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const fmt = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  out.line(out.paint("dim", fmt(header)));
  for (const row of rows) out.line(fmt(row));
}
