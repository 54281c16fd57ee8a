import { expect, test } from "bun:test";
import picomatch from "picomatch";
import { compileRule, type RuleSpec } from "./rules.ts";
import { approvalScope, createPolicy, type PolicyCall } from "./policy.ts";

const shell = (command: string): PolicyCall => ({ qualifiedName: "dev__shell", tool: "shell", input: { command }, readOnly: false });
const edit = (path: string): PolicyCall => ({ qualifiedName: "dev__str_replace", tool: "str_replace", input: { path }, readOnly: false });
const rule = (r: Omit<RuleSpec, "label">) => compileRule({ ...r, label: `R(${r.tool} ${r.decision})` }, picomatch);

test("first matching rule wins; deny names the rule", () => {
  const p = createPolicy({
    mode: "ask",
    workspace: "/w",
    rules: [rule({ tool: "dev__shell", decision: "deny", when: { arg: "command", prefix: "rm " } }), rule({ tool: "dev__*", decision: "allow" })],
  });
  expect(p.decide(shell("rm -rf /"))).toEqual({ decision: "deny", why: "denied by policy: R(dev__shell deny)" });
  expect(p.decide(shell("ls")).decision).toBe("allow");
});

test("when: glob, regex and inside_workspace", () => {
  const p = createPolicy({
    mode: "ask",
    workspace: "/w",
    rules: [
      rule({ tool: "*__str_replace", decision: "allow", when: { arg: "path", inside_workspace: true } }),
      rule({ tool: "dev__shell", decision: "allow", when: { arg: "command", regex: "^git (status|diff)" } }),
      rule({ tool: "dev__shell", decision: "deny", when: { arg: "command", glob: "curl *" } }),
    ],
  });
  expect(p.decide(edit("src/a.ts")).decision).toBe("allow");
  expect(p.decide(edit("/etc/passwd")).decision).toBe("ask");
  expect(p.decide(edit("../outside")).decision).toBe("ask");
  expect(p.decide(shell("git status")).decision).toBe("allow");
  expect(p.decide(shell("curl example")).decision).toBe("deny");
  expect(p.decide(shell("make")).decision).toBe("ask");
});

test("readOnlyHint allows when no rule matches; modes decide the rest", () => {
  const p = createPolicy({ mode: "ask", workspace: "/w", rules: [] });
  expect(p.decide({ qualifiedName: "fs__read", tool: "read", input: {}, readOnly: true }).decision).toBe("allow");
  expect(p.decide(shell("ls")).decision).toBe("ask");
  p.setMode("auto-edit");
  expect(p.decide(edit("a")).decision).toBe("allow");
  expect(p.decide(shell("ls")).decision).toBe("ask");
  p.setMode("yolo");
  expect(p.decide(shell("ls")).decision).toBe("allow");
  p.setMode("read-only");
  expect(p.decide(shell("ls")).decision).toBe("deny");
  expect(p.decide({ qualifiedName: "fs__read", tool: "read", input: {}, readOnly: true }).decision).toBe("allow");
});

test("a deny rule beats yolo mode and a remembered allow", () => {
  const p = createPolicy({ mode: "yolo", workspace: "/w", rules: [rule({ tool: "dev__shell", decision: "deny", when: { arg: "command", prefix: "sudo" } })] });
  p.remember(shell("sudo ls"), "allow");
  expect(p.decide(shell("sudo ls")).decision).toBe("deny");
});

test("allow_always / reject_always are scoped to the tool and the shell command's first word", () => {
  const p = createPolicy({ mode: "ask", workspace: "/w", rules: [] });
  p.remember(shell("npm test"), "allow");
  expect(p.decide(shell("npm run build")).decision).toBe("allow");
  expect(p.decide(shell("rm x")).decision).toBe("ask");
  p.remember(shell("rm x"), "reject");
  expect(p.decide(shell("rm y")).decision).toBe("deny");
  p.remember(edit("a"), "allow");
  expect(p.decide(edit("b")).decision).toBe("allow");
  expect(approvalScope(shell("  git  push"))).toBe("dev__shell git");
});
