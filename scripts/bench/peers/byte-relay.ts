// The physical floor of putting one more process in a stdio path: a relay that copies bytes from its
// stdin to a child's stdin and from the child's stdout to its own, parsing nothing.
// `bun byte-relay.ts CMD ARGS…` (the benchmark's floor row for a hop).
import { spawn } from "node:child_process";

const [command, ...args] = process.argv.slice(2);
const child = spawn(command!, args, { stdio: ["pipe", "pipe", "inherit"] });
process.stdin.on("data", (chunk) => child.stdin.write(chunk));
process.stdin.on("end", () => child.stdin.end());
child.stdout.on("data", (chunk) => process.stdout.write(chunk));
child.on("exit", (code) => process.exit(code ?? 1));
