// The deny side read as bash reads it, failing closed: each attack below ran `rm` under a `prefix = "rm "`
// deny rule. bash is the oracle that the attack is real: it runs each string with a fake `rm` first on
// PATH that records it ran; the rule must match every one. Benign commands stay unmatched.
import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import picomatch from "picomatch";
import { compileRule } from "./rules.ts";

const deny = compileRule({ tool: "*shell", decision: "deny", when: { arg: "command", prefix: "rm " }, label: "no rm" }, picomatch);
const denied = (command: string) => deny.matches(["dev__shell"], { command }, "/w");
const BASH = Bun.which("bash");

/** Whether bash, given `command`, runs `rm` (a fake one that records its run). */
function bashRunsRm(command: string): boolean {
  const dir = mkdtempSync(join(tmpdir(), "tendril-deny-"));
  try {
    const log = join(dir, "ran");
    writeFileSync(join(dir, "rm"), `#!/bin/sh\necho "$@" >> ${log}\n`);
    chmodSync(join(dir, "rm"), 0o755);
    Bun.spawnSync([BASH!, "--norc", "--noprofile", "-c", command], { cwd: dir, env: { PATH: `${dir}:/usr/bin:/bin` }, stdout: "ignore", stderr: "ignore" });
    return existsSync(log) && readFileSync(log, "utf8").length > 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const ATTACKS: [string, string][] = [
  ["regression: $'\\c' swallowing a closing quote", "echo $'\\c' ; rm -rf y ; #'"],
  ["regression: << inside (( … )) read as a here-document", "(( x = 1 << 2 )); rm -rf y"],
  ["regression: << inside $(( … )) read as a here-document", "echo $(( 1 << 2 )); rm -rf y"],
  ["regression: a here-document inside $( … ) ended by EOF)", "x=$(cat <<EOF\nhello\nEOF)\nrm -rf y"],
  ["regression: command rm", "command rm -rf y"],
  ["regression: exec rm", "exec rm -rf y"],
  ["regression: builtin command rm", "builtin command rm -rf y"],
  ["regression: arithmetic expanding a variable that holds $( … )", "x='a[$(rm -rf y)]'; echo $(( x ))"],
  ["regression: eval '…'", "eval 'r''m -rf y'"],
  ["regression: sudo-style wrappers with options", "env -i PATH=$PATH nice -n 5 rm -rf y"],
  ["regression: xargs runs its first argument", "echo y | xargs rm -rf"],
];

for (const [name, command] of ATTACKS) {
  test(`deny rule, checked against bash: ${name}`, () => {
    if (BASH) expect({ command, bashRunsRm: bashRunsRm(command) }).toEqual({ command, bashRunsRm: true });
    expect({ command, denied: denied(command) }).toEqual({ command, denied: true });
  });
}

test("deny rules still leave ordinary commands alone", () => {
  for (const command of ["ls -la", "git rm --cached x", "echo remove", "cat <<< rm", "cat <<EOF\nhello\nEOF", "npm test && echo done", "export A=1; make"]) {
    if (BASH) expect({ command, bashRunsRm: bashRunsRm(command) }).toEqual({ command, bashRunsRm: false });
    expect({ command, denied: denied(command) }).toEqual({ command, denied: false });
  }
});
