// Owns the in-sandbox end of the allow-domains proxy, `tendril sandbox-forward PORT SOCKET -- ARGV…`:
// the confined command's first process listens on the sandbox's own loopback (127.0.0.1:PORT), relays
// each connection to the agent's proxy at the unix SOCKET (visible through the read-only root), runs
// ARGV once listening, passes termination signals on, and exits with ARGV's status.
import { spawn } from "node:child_process";
import { connect, createServer, type Socket } from "node:net";
import { constants as osConstants } from "node:os";

function usage(): number {
  process.stderr.write("usage: tendril sandbox-forward PORT SOCKET -- COMMAND [ARGS…] (started by the sandbox, not by hand)\n");
  return 2;
}

export async function run(args: readonly string[]): Promise<number> {
  const [portRaw, socket, sep, ...argv] = args;
  const port = Number(portRaw);
  if (sep !== "--" || !socket || argv.length === 0 || !Number.isInteger(port) || port < 1 || port > 65535) return usage();
  const server = createServer((inner: Socket) => {
    const outer = connect(socket);
    inner.on("error", () => outer.destroy());
    outer.on("error", () => inner.destroy());
    inner.on("close", () => outer.destroy());
    outer.on("close", () => inner.destroy());
    inner.pipe(outer);
    outer.pipe(inner);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", resolve);
    });
  } catch (err) {
    process.stderr.write(`tendril sandbox-forward: cannot listen on 127.0.0.1:${port}: ${(err as Error).message}\n`);
    return 1;
  }
  const child = spawn(argv[0]!, argv.slice(1), { stdio: "inherit" });
  for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(sig, () => child.kill(sig));
  return new Promise<number>((resolve) => {
    child.once("error", (err) => {
      process.stderr.write(`tendril sandbox-forward: cannot run ${argv[0]}: ${err.message}\n`);
      resolve(127);
    });
    child.once("exit", (code, sig) => resolve(code ?? 128 + ((sig && (osConstants.signals as Record<string, number>)[sig]) || 0)));
  });
}
