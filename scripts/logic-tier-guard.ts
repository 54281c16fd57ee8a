// Preloaded into the logic tier's test run (scripts/test.ts): starting a process there throws, naming
// the call, so a test that needs one fails until it is listed in the end-to-end tier (scripts/test-tiers.ts).
import childProcess from "node:child_process";

const refuse = (what: string) => () => {
  throw new Error(`${what}: a logic-tier test started a process; list its file in scripts/test-tiers.ts's END_TO_END`);
};
for (const name of ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"] as const) {
  Object.assign(childProcess, { [name]: refuse(`child_process.${name}`) });
}
Object.assign(Bun, { spawn: refuse("Bun.spawn"), spawnSync: refuse("Bun.spawnSync") });
