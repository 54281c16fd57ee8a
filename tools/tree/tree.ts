// Owns the tree shim: a gitignore-aware walk that counts each file's lines and each directory's totals,
// bounded by entries, time and the output cap (totals cut short print with `+`), drawn like `tree`.
// Does not parse arguments or own the process (cli/modes/tree.ts).
import { readlinkSync } from "node:fs";
import { FileReader, shortReadEnds } from "../search/file-bytes.ts";
import type { ShimOutput } from "../search/shim-output.ts";
import { readDir, rootHandle, type DirHandle, type EntryKind, type WalkOptions } from "../search/walk.ts";

export interface TreeOptions {
  /** Deepest level drawn (children of the root are level 1); totals still cover everything below. */
  readonly maxDepth: number | undefined;
  readonly all: boolean;
  readonly noIgnore: boolean;
  /** Entries visited before the walk stops. */
  readonly maxEntries: number;
  /** Walk time before it stops, in ms. */
  readonly budgetMs: number;
  /** Entries drawn, and their bytes, before the walk stops (the output cap). */
  readonly maxShown: number;
  readonly maxShownBytes: number;
  readonly now?: () => number;
}

interface Node {
  name: string;
  kind: EntryKind;
  /** Line count (files), or total lines below (directories). */
  lines: number;
  files: number;
  dirs: number;
  partial: boolean;
  note?: string;
  children?: Node[];
}

export interface TreeResult {
  root: Node;
  /** Why the walk stopped early, if it did. */
  stopped: string | undefined;
}

class TreeWalk {
  private visited = 0;
  private shown = 0;
  private shownBytes = 0;
  private readonly deadline: number;
  private readonly reader = new FileReader();
  stopped: string | undefined;

  constructor(
    private readonly o: TreeOptions,
    private readonly walk: WalkOptions,
    private readonly now: () => number,
  ) {
    this.deadline = now() + o.budgetMs;
  }

  private stop = (): boolean => {
    if (this.stopped) return true;
    if (this.shown > this.o.maxShown || this.shownBytes > this.o.maxShownBytes) this.stopped = "output";
    else if (this.visited >= this.o.maxEntries) this.stopped = `${this.o.maxEntries} entries`;
    else if (this.now() > this.deadline) this.stopped = `${(this.o.budgetMs / 1000).toFixed(1)} s`;
    return this.stopped !== undefined;
  };

  dir(h: DirHandle, node: Node): void {
    const draw = this.o.maxDepth === undefined || h.depth < this.o.maxDepth;
    if (draw) node.children = [];
    for (const e of readDir(h, this.walk)) {
      if (this.stop()) {
        node.partial = true;
        return;
      }
      this.visited++;
      const child: Node = { name: e.name, kind: e.kind, lines: 0, files: 0, dirs: 0, partial: false };
      if (e.kind === "file") this.file(e.abs, child);
      else if (e.kind === "symlink") child.note = `-> ${readlinkOr(e.abs)}`;
      else if (e.dir) {
        if (draw) this.count(e.name, h.depth);
        this.dir(e.dir, child);
        node.dirs += child.dirs + 1;
      }
      node.files += child.files;
      node.lines += child.lines;
      node.partial ||= child.partial;
      if (draw) {
        if (e.kind !== "dir") this.count(e.name, h.depth);
        node.children!.push(child);
      }
    }
  }

  /** Roughly the bytes the entry's line will take: name, tree drawing and counts. */
  private count(name: string, depth: number): void {
    this.shown++;
    this.shownBytes += Buffer.byteLength(name) + 4 * depth + 28;
  }

  private file(abs: string, node: Node): void {
    node.files = 1;
    const r = this.reader.countLines(abs, () => this.now() > this.deadline, shortReadEnds(abs)); // the walk found a regular file
    if (r === "binary") node.note = "binary";
    else if (typeof r === "string") node.note = `unreadable: ${r}`;
    else {
      node.lines = r.lines;
      node.partial = r.partial;
    }
  }
}

function readlinkOr(abs: string): string {
  try {
    return readlinkSync(abs);
  } catch {
    return "?";
  }
}

/** Walks `abs` (printed as `display`) within the budgets of `o`. */
export function buildTree(abs: string, display: string, cwd: string, o: TreeOptions): TreeResult {
  const walk: WalkOptions = { hidden: o.all, noIgnore: o.noIgnore, skipGitDir: true };
  const t = new TreeWalk(o, walk, o.now ?? (() => performance.now()));
  const root: Node = { name: display, kind: "dir", lines: 0, files: 0, dirs: 0, partial: false };
  t.dir(rootHandle(abs, display, cwd, walk), root);
  return { root, stopped: t.stopped };
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

function label(n: Node, root = false): string {
  const plus = n.partial ? "+" : "";
  if (n.kind === "dir") {
    const name = root || n.name.endsWith("/") ? n.name : `${n.name}/`;
    return `${name} (${n.files}${plus} ${n.files === 1 && !plus ? "file" : "files"}, ${n.lines}${plus} ${n.lines === 1 && !plus ? "line" : "lines"})`;
  }
  if (n.kind === "symlink") return `${n.name} ${n.note ?? ""}`;
  if (n.kind === "other") return n.name;
  if (n.note) return `${n.name} (${n.note})`;
  return `${n.name} (${n.lines}${plus} ${n.lines === 1 && !plus ? "line" : "lines"})`;
}

function drawChildren(n: Node, prefix: string, out: ShimOutput): boolean {
  const kids = n.children ?? [];
  for (let i = 0; i < kids.length; i++) {
    const last = i === kids.length - 1;
    const kid = kids[i]!;
    if (!out.line(`${prefix}${last ? "└── " : "├── "}${label(kid)}`)) return false;
    if (kid.children && !drawChildren(kid, prefix + (last ? "    " : "│   "), out)) return false;
  }
  return true;
}

/** Draws the tree, a summary line, and a note when the walk stopped on a budget. */
export function renderTree(t: TreeResult, out: ShimOutput): void {
  if (!out.line(label(t.root, true))) return;
  if (!drawChildren(t.root, "", out)) return;
  const r = t.root;
  const plus = r.partial ? "+" : "";
  out.line("");
  const count = (n: number, one: string, many: string) => (plus ? `${n}+ ${many}` : plural(n, one, many));
  out.line(`${count(r.dirs, "directory", "directories")}, ${count(r.files, "file", "files")}, ${count(r.lines, "line", "lines")}`);
  if (t.stopped && t.stopped !== "output") {
    out.line(`[tree: walk stopped after ${t.stopped}; totals marked + are partial; use -L N or a subdirectory]`);
  }
}
