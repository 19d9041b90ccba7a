/**
 * A secret read from standard input without ever echoing it: from a pipe or file, its first
 * line (the end of line dropped); on a terminal, typed at a prompt in raw mode, so the
 * characters are not shown, and Ctrl-C gives up (null).
 */

interface SecretInput {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
  /** Where the prompt goes (the terminal's stderr, so a command's stdout stays its output). */
  prompt: { write(text: string): unknown };
  signal: AbortSignal;
}

/** Everything on a non-terminal stdin, up to its end, as text. */
async function readAll(stdin: NodeJS.ReadableStream, signal: AbortSignal): Promise<string | null> {
  let text = "";
  for await (const chunk of stdin) {
    if (signal.aborted) return null;
    text += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
  }
  return text;
}

/** Keys typed on a terminal in raw mode, until Enter (the text) or Ctrl-C / Ctrl-D on nothing (null). */
function readHidden(io: SecretInput, label: string): Promise<string | null> {
  const { stdin } = io;
  io.prompt.write(label);
  stdin.setRawMode?.(true);
  stdin.resume();
  return new Promise((resolve) => {
    let typed = "";
    const done = (value: string | null) => {
      stdin.removeListener("data", onData);
      io.signal.removeEventListener("abort", onAbort);
      stdin.setRawMode?.(false);
      stdin.pause();
      io.prompt.write("\n");
      resolve(value);
    };
    const onAbort = () => done(null);
    const onData = (chunk: Buffer | string) => {
      for (const char of typeof chunk === "string" ? chunk : chunk.toString("utf8")) {
        if (char === "\r" || char === "\n") return done(typed);
        if (char === "\u0003" || (char === "\u0004" && typed === "")) return done(null);
        if (char === "\u007f" || char === "\b") typed = typed.slice(0, -1);
        else if (char >= " ") typed += char;
      }
    };
    stdin.on("data", onData);
    io.signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** The secret, or null when none came (end of input, Ctrl-C). */
export async function readSecret(io: SecretInput, label: string): Promise<string | null> {
  if (io.stdin.isTTY) return readHidden(io, label);
  const text = await readAll(io.stdin, io.signal);
  if (text === null) return null;
  return text.replace(/\r?\n$/, "");
}
