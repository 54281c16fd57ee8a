// Tests of the text output of `tendril prompt` without Node's streams: every byte, in order, through a
// reader slower than the writer; and the terminal check agreeing with node:tty's.
import { expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { isatty } from "node:tty";
import { join } from "node:path";
import { isTerminal } from "./stdio.ts";

const WRITER = `
import { textOut } from ${JSON.stringify(join(import.meta.dir, "stdio.ts"))};
const out = textOut(1), err = textOut(2);
for (let i = 0; i < 2000; i++) out.write(\`line \${i} \${"x".repeat(500)}\\n\`);
err.write("done\\n");
await Promise.all([out.drained(), err.drained()]);
process.exit(0);
`;

test("textOut hands every line to a slow reader, in order, before the process exits", async () => {
  const child = spawn(process.execPath, ["-e", WRITER], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stderr.setEncoding("utf8").on("data", (s: string) => (err += s));
  // read slowly: the 1 MB does not fit the pipe, so the writer has to wait for the reader
  child.stdout.setEncoding("utf8").on("data", (s: string) => {
    out += s;
    child.stdout.pause();
    setTimeout(() => child.stdout.resume(), 1);
  });
  const code = await new Promise<number | null>((done) => child.on("close", done));
  expect(code).toBe(0);
  expect(err).toBe("done\n");
  const lines = out.trimEnd().split("\n");
  expect(lines.length).toBe(2000);
  lines.forEach((l, i) => expect(l.startsWith(`line ${i} `)).toBe(true));
}, 20_000);

test("isTerminal says what node:tty says for stdin, stdout and stderr", () => {
  for (const fd of [0, 1, 2] as const) expect(isTerminal(fd)).toBe(isatty(fd));
});

const SCRIPT = "/usr/bin/script";

test.skipIf(!existsSync(SCRIPT))("isTerminal sees a terminal: stdin and stderr on a pseudo-terminal, stdout a pipe", () => {
  const probe = `import { isTerminal } from ${JSON.stringify(join(import.meta.dir, "stdio.ts"))}; console.error("ttys", [0, 1, 2].map((fd) => isTerminal(fd)).join(","));`;
  // script(1) runs the probe on a pseudo-terminal; its own stdout, the probe's here, is piped through `cat`
  const r = spawnSync(SCRIPT, ["-qec", `'${process.execPath}' -e '${probe.replace(/'/g, "'\\''")}' | cat`, "/dev/null"], { encoding: "utf8", timeout: 15_000 });
  expect(r.stdout).toContain("ttys true,false,true");
});
