// Owns which tier each test file is in. The rule: a test file that starts a process (the built binary,
// a fixture server over stdio, a shell, git, bwrap, Chromium, a process group) is end-to-end and listed
// here; every other test file is the logic tier (in memory: the turn, sessions, policy, routing, parsers,
// schemas), which `npm test` runs with scripts/logic-tier-guard.ts preloaded so that a process start fails.
import { Glob } from "bun";

/** The logic tier's goal: its test time on a loaded 2-core machine (scripts/test.ts prints the time). */
export const LOGIC_TIER_GOAL_S = 15;
/** One logic-tier test's bound: its slowest (a first SDK or schema load) takes ~2 s alone, 5x that here. */
export const LOGIC_TEST_TIMEOUT_MS = 10_000;
/** End-to-end's per-test bound: binaries under load, sandboxes, a browser. */
export const END_TO_END_TEST_TIMEOUT_MS = 60_000;
/** The release build's test: its own suite (`npm run check:release`), ~35 s of both cores. */
export const RELEASE_TEST = "tests/release.test.ts";

/** Test files that start processes. */
export const END_TO_END: readonly string[] = [
  "cli/process/fatal.test.ts",
  "cli/process/stdio.test.ts",
  "core/acp-client/agent-process.test.ts",
  "core/acp/elicitation.test.ts",
  "core/acp/mcp-prompts.test.ts",
  "core/mcp/pool.test.ts",
  "core/mcp/server-events.test.ts",
  "core/mcp/stdio-transport.test.ts",
  "core/policy/approvals.test.ts",
  "core/policy/deny-forms.test.ts",
  "core/policy/shell-syntax.test.ts",
  "core/process-group.test.ts",
  "tests/acp-current-a.test.ts",
  "tests/acp-schema.test.ts",
  "tests/acp-sdk-client.test.ts",
  "tests/acp-sdk-subagents.test.ts",
  "tests/acp-v2-prompt.test.ts",
  "tests/acp-v2-schema.test.ts",
  "tests/acp-v2-sdk-client.test.ts",
  "tests/agent.test.ts",
  "tests/auth-cli.test.ts",
  "tests/background-editor.test.ts",
  "tests/background.test.ts",
  "tests/bench-guard.test.ts",
  "tests/cli.test.ts",
  "tests/conductor-rust-requests.test.ts",
  "tests/conductor-v2.test.ts",
  "tests/conductor.test.ts",
  "tests/conductor2-inprocess.test.ts",
  "tests/conductor2.test.ts",
  "tests/crate-fetch.test.ts",
  "tests/crate-proxy.test.ts",
  "tests/dev-mcp.test.ts",
  "tests/dev-tools-paths.test.ts",
  "tests/fake-llm.test.ts",
  "tests/fake-mcp.test.ts",
  "tests/interop.test.ts",
  "tests/lifecycle.test.ts",
  "tests/live-terminal-sdk.test.ts",
  "tests/openai-responses.test.ts",
  "tests/orphans.test.ts",
  "tests/prompt-budget.test.ts",
  "tests/prompt-ci-action.test.ts",
  "tests/prompt-ci.test.ts",
  "tests/prompt-ci2.test.ts",
  "tests/prompt.test.ts",
  "tests/registry-check.test.ts",
  "tests/regressions-crates.test.ts",
  "tests/regressions-exit.test.ts",
  "tests/regressions-tools.test.ts",
  "tests/regressions.test.ts",
  "tests/replay.test.ts",
  "tests/rg-generated.test.ts",
  "tests/rg.test.ts",
  "tests/sandbox.test.ts",
  "tests/sandbox2.test.ts",
  "tests/sandbox3.test.ts",
  "tests/sandbox-kill.test.ts",
  "tests/trace-view.test.ts",
  "tests/tree.test.ts",
  "tools/crates/lock.test.ts",
  "tools/dev/background.test.ts",
  "tools/dev/exec-orphans.test.ts",
  "tools/dev/git-watch.test.ts",
  "tools/dev/sandbox.test.ts",
  "tools/dev/shell.test.ts",
  "tools/search/jit-tier.test.ts",
];

/** Every test file of the repository (not the release test, not dependencies'), sorted. */
export function testFiles(root = "."): string[] {
  const out: string[] = [];
  for (const f of new Glob("**/*.test.ts").scanSync({ cwd: root })) {
    if (f.includes("node_modules/") || f === RELEASE_TEST) continue;
    out.push(f);
  }
  return out.sort();
}

export function tierOf(file: string): "logic" | "end-to-end" {
  return END_TO_END.includes(file) ? "end-to-end" : "logic";
}
