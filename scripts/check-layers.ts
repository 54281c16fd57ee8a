// Enforces ARCHITECTURE.md's dependency rules on every source file (tests exempt from the SDK rule):
// main → cli → core/tools; core never imports tools/cli; tools import only core/'s leaf modules and types;
// no import cycles (type-only and dynamic imports count); each third-party SDK has one adapter module per side. Prints every violation; exit 1 if any.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { DEFERRED_IMPORTS } from "./deferred-imports.ts";

const ROOT = process.argv[2] ?? process.cwd();
const DIRS = ["main.ts", "cli", "core", "tools"];
/** The leaf modules of core/ that tools/ may use (ARCHITECTURE.md rule 4). */
const CORE_LEAVES = ["core/host-patterns.ts", "core/ids.ts", "core/limits.ts", "core/log.ts", "core/mcp/tool-definition.ts", "core/path-inside.ts", "core/process-group.ts", "core/text-bounds.ts", "core/zod-issue.ts"];
/** SDK import prefix → the one module allowed to load it at run time (per protocol side). */
const ADAPTERS: Record<string, string[]> = {
  "@anthropic-ai/sdk": ["core/llm/anthropic.ts"],
  openai: ["core/llm/openai.ts"],
  "@modelcontextprotocol/sdk/client": ["core/mcp/client.ts"],
  "@modelcontextprotocol/sdk/server": ["core/mcp/server.ts"],
  "@agentclientprotocol/sdk": ["core/acp/agent-server.ts"],
  "@cfworker/json-schema": ["core/acp-client/output-schema.ts"],
};

interface Imp {
  spec: string;
  typeOnly: boolean;
  /** `import("…")`: loaded when the code runs, not when the importing module loads. */
  dynamic: boolean;
}

function files(p: string): string[] {
  const abs = join(ROOT, p);
  if (statSync(abs).isFile()) return [p];
  return readdirSync(abs, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? files(join(p, d.name)) : d.name.endsWith(".ts") ? [join(p, d.name)] : [],
  );
}

function importsOf(text: string): Imp[] {
  const out: Imp[] = [];
  const re = /(?:^|[;\n])\s*(import|export)\s+(type\s+)?(?:[^"';]*?\s+from\s+)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;
  for (const m of text.matchAll(re)) out.push({ spec: (m[3] ?? m[4])!, typeOnly: !!m[2], dynamic: m[4] !== undefined });
  return out;
}

/** Modules every agent session (and `tendril prompt`) loads with the default tools, and the packages their static imports must
 *  not reach: the MCP SDK loads only when a session declares an external server or dev-mcp runs,
 *  node:crypto (~4.5 ms to load) only for a digest (core/ids.ts loads it on first use), node:child_process
 *  (~4 ms) with the first spawn (core/process-group.ts loads it), zod (~5 ms)
 *  only when something is validated (core/zod-issue.ts loads it), picomatch (~1 ms) with the first
 *  permission rule, node:os (~0.3 ms) only for a command a signal ended (tools/dev/exec.ts), the JSON
 *  Schema validator only for `tendril prompt --output-schema`; node:string_decoder (~0.3 ms) not at all
 *  (live terminals decode with the Web TextDecoder). */
const LEAN_ENTRIES = [
  "cli/modes/agent.ts",
  "cli/modes/agent-run.ts",
  "cli/compose/agent-runtime.ts",
  "cli/compose/agent-dev-tools.ts",
  "tools/dev/tool-list.ts",
  "cli/modes/prompt.ts",
  "cli/modes/prompt-run.ts",
  "cli/compose/prompt-agent.ts",
  "core/acp/agent-server.ts",
  "core/acp-client/approve.ts",
  "core/acp-client/client-runner.ts",
  "core/agent/loop.ts",
  "core/config.ts",
  "core/mcp/pool.ts",
];
const LAZY_PACKAGES = ["@modelcontextprotocol/sdk", "node:crypto", "node:child_process", "node:os", "node:string_decoder", "zod", "picomatch", "@cfworker/json-schema"];

const problems: string[] = [];
/** `from spec` of every dynamic import found, against DEFERRED_IMPORTS. */
const dynamicSeen = new Set<string>();
const graph = new Map<string, string[]>();
/** Static (load-time) relative imports and package imports, per file. */
const staticEdges = new Map<string, string[]>();
const staticPackages = new Map<string, string[]>();
const all = DIRS.filter((d) => existsSync(join(ROOT, d))).flatMap(files).filter((f) => !f.endsWith(".d.ts"));

for (const file of all) {
  const isTest = file.endsWith(".test.ts");
  const layer = file === "main.ts" ? "main" : file.split("/")[0]!;
  const edges: string[] = [];
  const loadEdges: string[] = [];
  const packages: string[] = [];
  for (const { spec, typeOnly, dynamic } of importsOf(readFileSync(join(ROOT, file), "utf8"))) {
    if (dynamic && !isTest) dynamicSeen.add(`${file} ${spec}`);
    if (!typeOnly && !dynamic) (spec.startsWith(".") ? loadEdges.push(normalize(join(dirname(file), spec))) : packages.push(spec));
    if (spec.startsWith(".")) {
      const target = normalize(join(dirname(file), spec));
      const tlayer = target === "main.ts" ? "main" : target.split("/")[0]!;
      if (!isTest) edges.push(target); // a circle of type imports is a circle too
      if (tlayer === "cli" && layer !== "cli" && layer !== "main") problems.push(`${file}: imports cli/ (${target})`);
      if (layer === "core" && tlayer === "tools") problems.push(`${file}: core/ must not import tools/ (${target})`);
      if (layer === "tools" && tlayer === "core" && !typeOnly && !CORE_LEAVES.includes(target)) {
        problems.push(`${file}: tools/ may import only the leaf modules of core/ (${CORE_LEAVES.join(", ")}), not ${target}`);
      }
      if (layer === "main" && tlayer !== "cli") problems.push(`main.ts: must import only cli/ (${target})`);
      // The policy engine sits below config and the agent: config reads its mode names, never the reverse.
      if (file.startsWith("core/policy/") && !isTest && tlayer === "core" && !target.startsWith("core/policy/") && !CORE_LEAVES.includes(target)) {
        problems.push(`${file}: core/policy/ may import only itself and core/'s leaf modules, not ${target}`);
      }
      continue;
    }
    if (typeOnly || isTest) continue;
    for (const [prefix, allowed] of Object.entries(ADAPTERS)) {
      if ((spec === prefix || spec.startsWith(prefix + "/")) && !allowed.includes(file)) {
        problems.push(`${file}: imports ${spec}; only ${allowed.join(" or ")} may (one adapter per SDK)`);
      }
    }
  }
  graph.set(file, edges);
  staticEdges.set(file, loadEdges);
  staticPackages.set(file, packages);
}

// what loads with the lean entries must not pull in a lazily loaded package
for (const entry of LEAN_ENTRIES) {
  const seen = new Set<string>();
  const path = new Map<string, string>([[entry, entry]]);
  const todo = [entry];
  while (todo.length > 0) {
    const f = todo.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    for (const pkg of staticPackages.get(f) ?? []) {
      const sdk = LAZY_PACKAGES.find((p) => pkg === p || pkg.startsWith(p + "/"));
      if (sdk) problems.push(`${entry} loads ${pkg} at start-up (${path.get(f)}); import it with await import() where it is needed`);
    }
    for (const t of staticEdges.get(f) ?? []) if (!seen.has(t)) (path.set(t, `${path.get(f)} → ${t}`), todo.push(t));
  }
}

// every import() is a mode's chunk or a listed, measured exception (scripts/deferred-imports.ts)
const listed = new Set(DEFERRED_IMPORTS.map((d) => `${d.from} ${d.spec}`));
for (const seen of dynamicSeen) {
  if (!listed.has(seen)) problems.push(`${seen.replace(" ", ": import(\"")}"): not in scripts/deferred-imports.ts; import it statically, or list it with why and what it costs`);
}
for (const entry of listed) if (!dynamicSeen.has(entry)) problems.push(`scripts/deferred-imports.ts lists ${entry}, which no longer exists`);

// cycle detection over every relative import (types and dynamic ones included)
const state = new Map<string, 1 | 2>();
function visit(f: string, stack: string[]): void {
  if (state.get(f) === 2) return;
  if (state.get(f) === 1) {
    problems.push(`import cycle: ${[...stack.slice(stack.indexOf(f)), f].join(" → ")}`);
    return;
  }
  state.set(f, 1);
  for (const t of graph.get(f) ?? []) visit(t, [...stack, f]);
  state.set(f, 2);
}
for (const f of graph.keys()) visit(f, []);

if (problems.length > 0) {
  for (const p of problems) console.error(`check-layers: ${p}`);
  process.exit(1);
}
console.log(`check-layers: ${all.length} files, dependency rules hold`);
