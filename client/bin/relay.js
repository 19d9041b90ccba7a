#!/usr/bin/env node
// `npx relay` in the repository (docs/cli.md). The command is TypeScript that Node runs as it
// is (type stripping, on by default from Node 22.18); the project pins Node 22, which npx puts
// first on the PATH.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  console.error(
    `relay needs Node 22.18 or later (this is ${process.versions.node}); run it as npx relay in the repository.`,
  );
  process.exit(2);
}
const { main } = await import("../src/cli/main.ts");
const controller = new AbortController();
process.once("SIGINT", () => controller.abort());
const code = await main(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
  signal: controller.signal,
});
// Open handles (a socket closing, a keep-alive connection) must not hold the exit back.
process.stdout.write("", () => process.exit(code));
