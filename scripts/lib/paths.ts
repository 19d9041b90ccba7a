import path from "node:path";

/** Where the user was and the environment that says so: the inputs of {@link resolveUserPath}. */
export interface Invocation {
  /** The process's working directory (under `npm run`, always the package root). */
  cwd: string;
  /** `INIT_CWD`, which npm and npx set to the directory the user typed the command in. */
  initCwd?: string | undefined;
}

/**
 * Resolves a path the user typed (a `--dir` flag, an env var) the way the user meant it:
 * an absolute path stays as it is; a relative one is read from the directory the command
 * was typed in. `npm run` changes the working directory to the package root, so joining
 * onto `process.cwd()` would both mangle absolute paths and misread relative ones.
 */
export function resolveUserPath(typed: string, where: Invocation): string {
  return path.resolve(where.initCwd || where.cwd, typed);
}

/** The invocation of the running process. */
export function currentInvocation(): Invocation {
  return { cwd: process.cwd(), initCwd: process.env.INIT_CWD };
}
