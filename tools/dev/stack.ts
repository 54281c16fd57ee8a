// Owns detecting the workspace's stack from marker files in its root (Cargo.toml → Rust/cargo,
// package.json → Node and its package manager, go.mod → Go, …), for the server's instructions.
// Looks at the root directory only, reads at most one small manifest, and never runs anything.
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";

export interface StackEntry {
  /** e.g. "Rust", "Node". */
  name: string;
  /** The marker file(s) that gave it away. */
  marker: string;
  /** Build/test commands worth knowing, e.g. "cargo build, cargo test". */
  hint: string;
}

const MAX_ROOT_ENTRIES = 5000;
const MAX_MANIFEST_BYTES = 256 * 1024;
const MAX_SCRIPTS = 12;

interface Rule {
  name: string;
  markers: string[];
  hint: string | ((names: Set<string>) => string);
}

function pythonTool(names: Set<string>): string {
  if (names.has("uv.lock")) return "uv (uv run, uv sync)";
  if (names.has("poetry.lock")) return "poetry (poetry run, poetry install)";
  if (names.has("Pipfile")) return "pipenv";
  return "pip / python -m pytest";
}

const RULES: Rule[] = [
  { name: "Rust", markers: ["Cargo.toml"], hint: "cargo build, cargo test, cargo clippy" },
  { name: "Go", markers: ["go.mod"], hint: "go build ./..., go test ./..., go vet ./..." },
  { name: "Python", markers: ["pyproject.toml", "requirements.txt", "setup.py", "setup.cfg", "Pipfile"], hint: pythonTool },
  { name: "Deno", markers: ["deno.json", "deno.jsonc"], hint: "deno task, deno test" },
  { name: "Ruby", markers: ["Gemfile"], hint: "bundle exec" },
  { name: "Java (Maven)", markers: ["pom.xml"], hint: "mvn test" },
  { name: "JVM (Gradle)", markers: ["build.gradle", "build.gradle.kts", "settings.gradle.kts"], hint: "./gradlew build" },
  { name: "C/C++ (CMake)", markers: ["CMakeLists.txt"], hint: "cmake -B build && cmake --build build" },
  { name: "Elixir", markers: ["mix.exs"], hint: "mix test" },
  { name: "PHP", markers: ["composer.json"], hint: "composer" },
  { name: "Swift", markers: ["Package.swift"], hint: "swift build, swift test" },
  { name: "Zig", markers: ["build.zig"], hint: "zig build" },
  { name: "Haskell", markers: ["stack.yaml", "cabal.project"], hint: "stack / cabal" },
  { name: "Make", markers: ["Makefile", "GNUmakefile"], hint: "make" },
];

function nodeManager(names: Set<string>): string {
  if (names.has("bun.lock") || names.has("bun.lockb")) return "bun";
  if (names.has("pnpm-lock.yaml")) return "pnpm";
  if (names.has("yarn.lock")) return "yarn";
  return "npm";
}

async function nodeEntry(root: string, names: Set<string>): Promise<StackEntry> {
  const pm = nodeManager(names);
  let scripts: string[] = [];
  try {
    const path = join(root, "package.json");
    if ((await stat(path)).size <= MAX_MANIFEST_BYTES) {
      const pkg = JSON.parse(await readFile(path, "utf8")) as { scripts?: Record<string, unknown> };
      if (pkg && typeof pkg.scripts === "object" && pkg.scripts) scripts = Object.keys(pkg.scripts);
    }
  } catch {
    // an unreadable or invalid package.json still says "Node"
  }
  const run = pm === "npm" ? "npm run" : `${pm} run`;
  const shown = scripts.slice(0, MAX_SCRIPTS).join(", ") + (scripts.length > MAX_SCRIPTS ? ", …" : "");
  const hint = scripts.length > 0 ? `${pm}; scripts (${run} NAME): ${shown}` : pm;
  return { name: `Node (${pm})`, marker: "package.json", hint };
}

/** The stacks whose markers sit in `root`; empty when none is recognised or the root is unreadable. */
export async function detectStack(root: string): Promise<StackEntry[]> {
  let entries: string[];
  try {
    entries = (await readdir(root)).slice(0, MAX_ROOT_ENTRIES);
  } catch {
    return [];
  }
  const names = new Set(entries);
  const found: StackEntry[] = [];
  if (names.has("package.json")) found.push(await nodeEntry(root, names));
  for (const rule of RULES) {
    const markers = rule.markers.filter((m) => names.has(m));
    if (markers.length === 0) continue;
    const hint = typeof rule.hint === "function" ? rule.hint(names) : rule.hint;
    found.push({ name: rule.name, marker: markers.join(", "), hint });
  }
  return found;
}

export function describeStack(stack: readonly StackEntry[]): string {
  if (stack.length === 0) return "not recognised (no Cargo.toml, package.json, go.mod, pyproject.toml, … in the root)";
  return stack.map((s) => `- ${s.name} (${s.marker}): ${s.hint}`).join("\n");
}
