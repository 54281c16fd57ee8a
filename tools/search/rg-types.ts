// Owns the file types of the built-in rg's -t/-T: a table of common languages with ripgrep's names and
// globs (matched against the file name), --type-add/--type-clear changes to it, and the type verdict for
// the walk.
import type { Verdict } from "./ignore-rules.ts";

export const FILE_TYPES: Readonly<Record<string, readonly string[]>> = {
  c: ["*.[chH]", "*.[chH].in", "*.cats"],
  cpp: ["*.[ChH]", "*.[ChH].in", "*.[ch]pp", "*.[ch]pp.in", "*.[ch]xx", "*.[ch]xx.in", "*.cc", "*.cc.in", "*.hh", "*.hh.in", "*.inl"],
  cmake: ["*.cmake", "CMakeLists.txt"],
  config: ["*.cfg", "*.conf", "*.config", "*.ini"],
  cs: ["*.cs"],
  csharp: ["*.cs"],
  css: ["*.css", "*.scss"],
  csv: ["*.csv"],
  dart: ["*.dart"],
  docker: ["*Dockerfile*"],
  elixir: ["*.eex", "*.ex", "*.exs"],
  go: ["*.go"],
  haskell: ["*.c2hs", "*.cpphs", "*.hs", "*.hsc", "*.lhs"],
  html: ["*.ejs", "*.htm", "*.html"],
  java: ["*.java", "*.jsp", "*.jspx", "*.properties"],
  js: ["*.js", "*.jsx", "*.vue", "*.cjs", "*.mjs"],
  json: ["*.json", "composer.lock"],
  jsonl: ["*.jsonl"],
  kotlin: ["*.kt", "*.kts"],
  lua: ["*.lua"],
  make: ["*.mak", "*.mk", "[Gg][Nn][Uu]makefile", "[Mm]akefile", "[Gg][Nn][Uu]makefile.am", "[Mm]akefile.am", "[Gg][Nn][Uu]makefile.in", "[Mm]akefile.in"],
  markdown: ["*.markdown", "*.md", "*.mdown", "*.mkdn"],
  md: ["*.markdown", "*.md", "*.mdown", "*.mkdn"],
  nix: ["*.nix"],
  php: ["*.php", "*.php3", "*.php4", "*.php5", "*.phtml"],
  proto: ["*.proto"],
  protobuf: ["*.proto"],
  py: ["*.py", "*.pyi"],
  python: ["*.py", "*.pyi"],
  r: ["*.R", "*.Rmd", "*.Rnw", "*.r"],
  ruby: ["*.gemspec", "*.rb", "*.rbw", ".irbrc", "Gemfile", "Rakefile", "config.ru"],
  rust: ["*.rs"],
  scala: ["*.sbt", "*.scala"],
  sh: ["*.bash", "*.bashrc", "*.csh", "*.cshrc", "*.ksh", "*.kshrc", "*.sh", "*.tcsh", "*.zsh", ".bash_login", ".bash_logout", ".bash_profile", ".bashrc", ".cshrc", ".kshrc", ".login", ".logout", ".profile", ".tcshrc", ".zlogin", ".zlogout", ".zprofile", ".zshenv", ".zshrc", "bash_login", "bash_logout", "bash_profile", "bashrc", "profile", "zlogin", "zlogout", "zprofile", "zshenv", "zshrc"],
  sql: ["*.psql", "*.sql"],
  swift: ["*.swift"],
  tex: ["*.bib", "*.cls", "*.dtx", "*.ins", "*.ltx", "*.sty", "*.tex"],
  tf: ["*.tf", "*.tfvars"],
  toml: ["*.toml", "Cargo.lock"],
  ts: ["*.ts", "*.tsx", "*.cts", "*.mts"],
  typescript: ["*.ts", "*.tsx", "*.cts", "*.mts"],
  txt: ["*.txt"],
  xml: ["*.dtd", "*.rng", "*.sch", "*.xhtml", "*.xjb", "*.xml", "*.xml.dist", "*.xsd", "*.xsl", "*.xslt"],
  yaml: ["*.yaml", "*.yml"],
  zig: ["*.zig"],
};

export type TypeTable = Readonly<Record<string, readonly string[]>>;

/** One --type-add (`name:glob` or `name:include:a,b`) or --type-clear (`name`), in command-line order. */
export interface TypeChange {
  readonly kind: "add" | "clear";
  readonly value: string;
}

/** The table after the changes, or the error ripgrep gives for a malformed definition. */
export function typeTable(changes: readonly TypeChange[]): TypeTable | string {
  if (changes.length === 0) return FILE_TYPES;
  const table: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(FILE_TYPES)) table[k] = [...v];
  for (const c of changes) {
    if (c.kind === "clear") {
      delete table[c.value];
      continue;
    }
    const m = /^([^:]+):(?:include:(.+)|(.+))$/.exec(c.value);
    if (!m) return `invalid definition (format is type:glob, e.g., html:*.html): ${c.value}`;
    const globs = m[2] !== undefined ? m[2].split(",").flatMap((t) => table[t] ?? []) : [m[3]!];
    if (m[2] !== undefined && m[2].split(",").some((t) => !table[t])) return `unrecognized file type: ${m[2]}`;
    table[m[1]!] = [...(table[m[1]!] ?? []), ...globs];
  }
  return table;
}

/**
 * The -t/-T verdict on a file name, or an error naming the unknown type. picomatch loads only here, for
 * a run that names types (loading it costs ~0.5 ms).
 */
export async function typeMatcher(
  select: readonly string[],
  negate: readonly string[],
  table: TypeTable = FILE_TYPES,
): Promise<{ ok: true; verdict: ((name: string, isDir: boolean) => Verdict) | undefined } | { ok: false; message: string }> {
  if (select.length === 0 && negate.length === 0) return { ok: true, verdict: undefined };
  for (const t of [...select, ...negate]) {
    if (t === "all") continue;
    if (!table[t]) return { ok: false, message: `unrecognized file type: ${t} (see rg --type-list)` };
  }
  const globsOf = (ts: readonly string[]) => ts.flatMap((t) => (t === "all" ? Object.values(table).flat() : table[t]!));
  const { default: picomatch } = await import("picomatch");
  const opts = { dot: true };
  const yes = select.length > 0 ? picomatch(globsOf(select), opts) : undefined;
  const no = negate.length > 0 ? picomatch(globsOf(negate), opts) : undefined;
  return {
    ok: true,
    verdict: (name, isDir) => {
      if (isDir) return undefined;
      if (no?.(name)) return "ignore";
      if (yes) return yes(name) ? "whitelist" : "ignore";
      return undefined;
    },
  };
}

export function typeList(table: TypeTable = FILE_TYPES): string[] {
  return Object.entries(table)
    .filter(([, globs]) => globs.length > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, globs]) => `${name}: ${[...globs].sort().join(", ")}`);
}
