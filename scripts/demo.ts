// The offline demo (README's main job): `tendril prompt` drives `tendril agent` with the replay provider
// answering from a hand-written cassette, while the tools run for real in a temporary copy of
// scripts/demo/workspace. Exits non-zero unless the edit landed and the project's check passes.
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dir, "..");
const bin = join(root, "dist", "tendril");
const cassette = join(root, "scripts", "demo", "fix-greeting.jsonl");
const work = mkdtempSync(join(tmpdir(), "tendril-demo-"));
cpSync(join(root, "scripts", "demo", "workspace"), work, { recursive: true });

const prompt = "greet.sh prints a misspelled greeting. Fix it and make sure check.sh passes.";
console.error(`demo: workspace ${work}\ndemo: $ tendril prompt --approve all ${JSON.stringify(prompt)}\n`);
const run = spawnSync(bin, ["prompt", "--cwd", work, "--approve", "all", prompt], {
  stdio: "inherit",
  timeout: 60_000,
  env: { ...process.env, TENDRIL_PROVIDER: "replay", TENDRIL_REPLAY: cassette },
});
const edited = readFileSync(join(work, "greet.sh"), "utf8");
const check = spawnSync("sh", ["check.sh"], { cwd: work, encoding: "utf8" });
console.error(`\ndemo: tendril prompt exited ${run.status}; greet.sh line 3 is now: ${edited.split("\n")[2]}`);
console.error(`demo: ${check.stdout.trim()}`);
if (!process.env.TENDRIL_DEMO_KEEP) rmSync(work, { recursive: true, force: true });
process.exit(run.status === 0 && check.status === 0 ? 0 : 1);
