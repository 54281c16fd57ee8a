#!/usr/bin/env node
// The `tendril` command of the npm package tendril-acp: finds the binary in this platform's package
// (tendril-acp-OS-CPU, one of tendril-acp's optionalDependencies or installed beside it) and runs it with
// the same arguments and stdio, passing signals on and exiting as it exits. Windows is not supported.
"use strict";
const { spawn } = require("node:child_process");
const { dirname, join } = require("node:path");
const { version } = require("../package.json");

const SUPPORTED = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"];
const platform = `${process.platform}-${process.arch}`;

function fail(message) {
  process.stderr.write(`tendril: ${message}\n`);
  process.exit(1);
}

if (process.platform === "win32") {
  fail("Windows is not supported: Tendril runs commands in POSIX process groups and stops them with signals. Use it under WSL (Linux).");
}
if (!SUPPORTED.includes(platform)) fail(`there is no Tendril binary for ${platform}; there are binaries for ${SUPPORTED.join(", ")}.`);
const pkg = `tendril-acp-${platform}`;
let bin;
try {
  bin = join(dirname(require.resolve(`${pkg}/package.json`)), "bin", "tendril");
} catch {
  fail(`the package ${pkg}, which holds the binary for this machine (${platform}), is not installed. Install it beside this one: npm install -g ${pkg}@${version} (an install with --omit=optional leaves it out).`);
}

const child = spawn(bin, process.argv.slice(2), { stdio: "inherit" });
child.on("error", (err) => fail(`could not run ${bin}: ${err.message}`));
// The terminal sends Ctrl-C to the whole foreground group, the binary included: do not send it twice.
process.on("SIGINT", () => {});
for (const signal of ["SIGTERM", "SIGHUP", "SIGQUIT"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => {
  if (signal === null) process.exit(code ?? 1);
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
});
