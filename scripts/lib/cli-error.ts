/**
 * A failure the user can fix (a missing folder, an invalid file, an unreachable server): the
 * scripts print its message alone, with no stack trace, and exit non-zero. Anything else
 * thrown is a bug in the script and keeps its stack.
 */
export class CliError extends Error {
  override readonly name = "CliError";
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** Runs a script's main function; a CliError becomes its message on stderr and an exit code. */
export async function runCli(main: () => void | Promise<void>): Promise<void> {
  try {
    await main();
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    console.error(error.message);
    process.exit(error.exitCode);
  }
}
