// Enforces ARCHITECTURE.md's dependency rules on every source file (tests exempt from the SDK rule):
// main → cli → core/tools; core never imports tools/cli; tools import only core/'s leaf modules and types;
// no import cycles; each third-party SDK has one adapter module per side. Prints every violation; exit 1 if any.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";

const ROOT = process.argv[2] ?? process.cwd();
const DIRS = ["main.ts", "cli", "core", "tools"];
/** The leaf modules of core/ that tools/ may use (ARCHITECTURE.md rule 4). */
const CORE_LEAVES = ["core/limits.ts", "core/log.ts", "core/process-group.ts", "core/text-bounds.ts"];
/** SDK import prefix → the one module allowed to load it at run time (per protocol side). */
const ADAPTERS: Record<string, string[]> = {
  "@anthropic-ai/sdk": ["core/llm/anthropic.ts"],
  openai: ["core/llm/openai.ts"],
  "@modelcontextprotocol/sdk/client": ["core/mcp/client.ts"],
  "@modelcontextprotocol/sdk/server": ["core/mcp/server.ts"],
  "@agentclientprotocol/sdk": ["core/acp/agent-server.ts"],
};

interface Imp {
  spec: string;
  typeOnly: boolean;
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
  for (const m of text.matchAll(re)) out.push({ spec: (m[3] ?? m[4])!, typeOnly: !!m[2] });
  return out;
}

const problems: string[] = [];
const graph = new Map<string, string[]>();
const all = DIRS.filter((d) => existsSync(join(ROOT, d))).flatMap(files).filter((f) => !f.endsWith(".d.ts"));

for (const file of all) {
  const isTest = file.endsWith(".test.ts");
  const layer = file === "main.ts" ? "main" : file.split("/")[0]!;
  const edges: string[] = [];
  for (const { spec, typeOnly } of importsOf(readFileSync(join(ROOT, file), "utf8"))) {
    if (spec.startsWith(".")) {
      const target = normalize(join(dirname(file), spec));
      const tlayer = target === "main.ts" ? "main" : target.split("/")[0]!;
      if (!typeOnly && !isTest) edges.push(target);
      if (tlayer === "cli" && layer !== "cli" && layer !== "main") problems.push(`${file}: imports cli/ (${target})`);
      if (layer === "core" && tlayer === "tools") problems.push(`${file}: core/ must not import tools/ (${target})`);
      if (layer === "tools" && tlayer === "core" && !typeOnly && !CORE_LEAVES.includes(target)) {
        problems.push(`${file}: tools/ may import only the leaf modules of core/ (${CORE_LEAVES.join(", ")}), not ${target}`);
      }
      if (layer === "main" && tlayer !== "cli") problems.push(`main.ts: must import only cli/ (${target})`);
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
}

// cycle detection over run-time relative imports
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
