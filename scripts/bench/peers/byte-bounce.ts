// The physical floor of a proxy hop: a process in the middle that copies bytes, but sends each direction
// through another process and back before passing it on (client → here → cat → here → agent, and the
// same way back through a second cat), as a conductor sends each message through its proxy. Parses
// nothing. `bun byte-bounce.ts CMD ARGS…` (the benchmark's floor row for a proxy hop).
import { spawn } from "node:child_process";

const [command, ...args] = process.argv.slice(2);
const agent = spawn(command!, args, { stdio: ["pipe", "pipe", "inherit"] });
const down = spawn("cat", [], { stdio: ["pipe", "pipe", "inherit"] });
const up = spawn("cat", [], { stdio: ["pipe", "pipe", "inherit"] });
process.stdin.on("data", (chunk) => down.stdin.write(chunk));
process.stdin.on("end", () => down.stdin.end());
down.stdout.on("data", (chunk) => agent.stdin.write(chunk));
down.stdout.on("end", () => agent.stdin.end());
agent.stdout.on("data", (chunk) => up.stdin.write(chunk));
agent.stdout.on("end", () => up.stdin.end());
up.stdout.on("data", (chunk) => process.stdout.write(chunk));
agent.on("exit", (code) => {
  down.kill();
  up.kill();
  process.exitCode = code ?? 1;
});
up.on("exit", () => process.exit(process.exitCode ?? 0));
