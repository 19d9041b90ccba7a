#!/usr/bin/env node
// `npx relay` in the repository (docs/cli.md). The command is TypeScript that Node runs as it
// is (type stripping, on by default from Node 22.18); the project pins Node 22, which npx puts
// first on the PATH.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  // Said here, as main.ts says every failure: this Node cannot load main.ts to say it.
  const message = `relay needs Node 22.18 or later (this is ${process.versions.node}); run it as npx relay in the repository.`;
  console.error(
    process.argv.includes("--json")
      ? JSON.stringify({ error: { code: "NODE_TOO_OLD", message } })
      : `relay: NODE_TOO_OLD: ${message}`,
  );
  process.exit(2);
}
const { fail, main } = await import("../src/cli/main.ts");
const { Interrupts } = await import("../src/cli/interrupts.ts");
const argv = process.argv.slice(2);
// What escapes main (an error thrown in an event listener, a promise nobody awaited) is still
// one coded line, never a stack (docs/cli.md, Errors).
const last = (error) => {
  let code = 6;
  try {
    code = fail(error, argv, process.stderr);
  } catch {
    // stderr itself failed: the exit code is all that is left
  }
  process.exit(code);
};
process.on("uncaughtException", last);
process.on("unhandledRejection", last);
// Every Ctrl-C is a press: the first may be claimed by the command (chat cancels its running turn),
// one nobody claims ends the command; one more after that stops a command that did not end.
const interrupts = new Interrupts();
process.on("SIGINT", () => {
  if (interrupts.signal.aborted) process.exit(130);
  interrupts.press();
});
const code = await main(argv, {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
  signal: interrupts.signal,
  interrupts,
});
// Open handles (a socket closing, a keep-alive connection) must not hold the exit back.
process.stdout.write("", () => process.exit(code));
