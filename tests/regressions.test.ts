// One test per bug a probe or review found, named after the bug, so it cannot come back unnoticed.
// Logic is exercised in memory; bugs that live in wiring run the built binary.
import { expect, test } from "bun:test";
import { createPolicy } from "../core/policy/policy.ts";
import { decidePermission } from "../core/policy/approve.ts";
import { parseRules } from "../core/config.ts";

const OPTIONS = [
  { optionId: "allow_once", kind: "allow_once" },
  { optionId: "reject_once", kind: "reject_once" },
];

test("regression: a deny rule `rm *` fired in tendril prompt but not in tendril agent (one matcher for both)", () => {
  const table: [string, string, "allow" | "deny" | "ask"][] = [
    // [rule glob on the command, command, expected decision]
    ["rm *", "rm -rf /tmp", "deny"],
    ["rm *", "rm -rf ./build/out", "deny"],
    ["curl *", "curl https://x.example/a/b", "deny"],
    ["git *", "git status", "deny"],
    ["rm *", "ls /tmp", "ask"],
  ];
  for (const [glob, command, expected] of table) {
    const rules = parseRules([{ tool: "dev__shell", decision: "deny", when: { arg: "command", glob } }], "policy.toml");
    const agent = createPolicy({ rules, mode: "ask", workspace: "/w" }).decide({
      qualifiedName: "dev__shell",
      tool: "shell",
      input: { command },
      readOnly: false,
    });
    expect([glob, command, agent.decision]).toEqual([glob, command, expected]);
    const prompt = decidePermission(
      { kind: "rules", file: "policy.toml", rules },
      { id: "c1", name: "dev__shell", title: command, rawInput: { command } },
      OPTIONS,
      "/w",
    );
    // tendril prompt has nobody to ask: `ask` and no match deny too, but a matched deny names the rule.
    expect(prompt.allowed).toBe(false);
    expect(prompt.reason.startsWith("denied by policy.toml rules[0]")).toBe(expected === "deny");
  }
});
