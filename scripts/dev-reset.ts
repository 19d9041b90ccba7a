/**
 * `npm run dev:reset`: deletes the local dev state (.wrangler/state: local D1, Durable
 * Objects' storage), so the next `npm run dev` starts from fresh migrations and demo agents.
 * .dev.vars (your keys) is kept. Stop `npm run dev` first: it holds those files open.
 */
import { existsSync, rmSync } from "node:fs";
import { join, relative } from "node:path";

const root = join(import.meta.dirname, "..");
const state = join(root, ".wrangler", "state");
const shown = relative(process.cwd(), state) || state;
if (existsSync(state)) {
  rmSync(state, { recursive: true, force: true });
  console.log(
    `Deleted the local dev state in ${shown} (local D1, Durable Objects). \`npm run dev\` recreates it; .dev.vars is kept.`,
  );
} else {
  console.log(`No local dev state to delete (${shown} does not exist). .dev.vars is kept.`);
}
