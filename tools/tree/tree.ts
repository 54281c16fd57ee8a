// Owns the tree shim: a gitignore-aware walk that counts each file's lines and each directory's totals,
// bounded by entries, time and the output cap (totals cut short print with `+`), drawn like `tree`; a large
// walk's counts shared with worker threads. Does not parse arguments or own the process (cli/modes/tree.ts).
import { readlinkSync } from "node:fs";
import { FileReader, shortReadEnds, type LineCount } from "../search/file-bytes.ts";
import { countBatch, epochNow, packPaths, runBatches, type LineCounts } from "../search/rg-parallel.ts";
import type { ShimOutput } from "../search/shim-output.ts";
import { readDir, rootHandle, type DirHandle, type EntryKind, type WalkEntry, type WalkOptions } from "../search/walk.ts";

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
  /** The directory it lies in (its totals, and theirs above, take its counts). */
  up?: Node;
}

export interface TreeResult {
  root: Node;
  /** Why the walk stopped early, if it did. */
  stopped: string | undefined;
}

/** How a large walk shares its line counts with worker threads (tools/search/rg-parallel.ts). */
export interface TreeParallel {
  /** Files counted on this thread before the rest are shared with workers. */
  readonly minFiles: number;
  /** How many workers to start (asked only once the walk has passed `minFiles`); 0 counts on here. */
  readonly workers: () => Promise<number>;
  readonly batchFiles: number;
  readonly workerQueue: number;
  /** Batches sent to a worker before it has started (see `BatchPool.preload`; TREE_WORKER_PRELOAD). */
  readonly preload: number;
}

/** A file the walk found, to be counted. */
interface Found {
  readonly abs: string;
  readonly node: Node;
}

/** A directory being listed: its kept entries and how far the walk has got. */
interface Frame {
  readonly h: DirHandle;
  readonly node: Node;
  readonly entries: WalkEntry[];
  i: number;
  readonly draw: boolean;
}

/**
 * The walk, one file at a time (`next`), depth first in name order, within the budgets; the count of each
 * file found is given to `settle`, at once or later from a worker, and added to its directories' totals.
 * Exported for the tier pins (tools/search/jit-tier.ts) only.
 */
export class TreeWalk {
  private visited = 0;
  private shown = 0;
  private shownBytes = 0;
  readonly deadline: number;
  /** The deadline as `epochNow()` tells time, for workers. */
  private readonly epochDeadline: number;
  private readonly reader = new FileReader();
  private readonly stack: Frame[] = [];
  readonly root: Node;
  stopped: string | undefined;

  constructor(
    private readonly o: TreeOptions,
    private readonly walk: WalkOptions,
    readonly now: () => number,
    root: DirHandle,
    display: string,
  ) {
    this.deadline = now() + o.budgetMs;
    this.epochDeadline = epochNow() + o.budgetMs;
    this.root = { name: display, kind: "dir", lines: 0, files: 0, dirs: 0, partial: false };
    this.open(root, this.root);
  }

  private stop(): boolean {
    if (this.stopped) return true;
    if (this.shown > this.o.maxShown || this.shownBytes > this.o.maxShownBytes) this.stopped = "output";
    else if (this.visited >= this.o.maxEntries) this.stopped = `${this.o.maxEntries} entries`;
    else if (this.now() > this.deadline) this.stopped = `${(this.o.budgetMs / 1000).toFixed(1)} s`;
    return this.stopped !== undefined;
  }

  private open(h: DirHandle, node: Node): void {
    const draw = this.o.maxDepth === undefined || h.depth < this.o.maxDepth;
    if (draw) node.children = [];
    this.stack.push({ h, node, entries: readDir(h, this.walk), i: 0, draw });
  }

  /** The next file to count, or undefined once the walk is over or stopped (its directories then marked partial). */
  next(): Found | undefined {
    const stack = this.stack;
    while (stack.length > 0) {
      const f = stack[stack.length - 1]!;
      if (f.i >= f.entries.length) {
        stack.pop();
        continue;
      }
      if (this.stop()) {
        for (const g of stack) g.node.partial = true;
        stack.length = 0;
        return undefined;
      }
      const e = f.entries[f.i++]!;
      this.visited++;
      const child: Node = { name: e.name, kind: e.kind, lines: 0, files: 0, dirs: 0, partial: false, up: f.node };
      if (f.draw) {
        f.node.children!.push(child);
        this.count(e.name, f.h.depth);
      }
      if (e.kind === "file") {
        child.files = 1;
        for (let a: Node | undefined = f.node; a; a = a.up) a.files++;
        return { abs: e.abs, node: child };
      }
      if (e.kind === "symlink") child.note = `-> ${readlinkOr(e.abs)}`;
      else if (e.dir) {
        for (let a: Node | undefined = f.node; a; a = a.up) a.dirs++;
        this.open(e.dir, child);
      }
    }
    return undefined;
  }

  /** Roughly the bytes the entry's line will take: name, tree drawing and counts. */
  private count(name: string, depth: number): void {
    this.shown++;
    this.shownBytes += Buffer.byteLength(name) + 4 * depth + 28;
  }

  /** Counts a file on this thread. */
  countHere(f: Found): void {
    this.settle(f.node, this.reader.countLines(f.abs, this.pastDeadline, shortReadEnds(f.abs))); // the walk found a regular file
  }

  readonly pastDeadline = (): boolean => this.now() > this.deadline;

  /** Shares the files left with `workers` worker threads, `first` (already found) the first of them. */
  async countShared(first: Found, workers: number, par: TreeParallel): Promise<void> {
    let pending: Found | undefined = first;
    await runBatches<Found[], LineCounts>({
      init: { type: "count-lines", deadline: this.epochDeadline },
      workers, workerQueue: par.workerQueue, preload: par.preload,
      next: () => {
        const batch: Found[] = pending ? [pending] : [];
        pending = undefined;
        while (batch.length < par.batchFiles) {
          const f = this.next();
          if (!f) break;
          batch.push(f);
        }
        return batch.length > 0 ? batch : undefined;
      },
      pack: (batch) => packPaths(batch.map((f) => f.abs)),
      local: (id, batch) => countBatch(this.reader, id, batch.map((f) => f.abs), this.pastDeadline),
      deliver: (r, batch) => {
        for (let i = 0; i < batch.length; i++) this.settle(batch[i]!.node, r.counts[i]!);
      },
      failed: (message) => new Error(`tree: a line counting worker failed: ${message}`),
    });
  }

  /** Takes a file's count, adding it to the totals above. */
  private settle(node: Node, r: LineCount): void {
    if (r === "binary") node.note = "binary";
    else if (typeof r === "string") node.note = `unreadable: ${r}`;
    else {
      node.lines = r.lines;
      node.partial = r.partial;
      for (let a = node.up; a; a = a.up) {
        a.lines += r.lines;
        a.partial ||= r.partial;
      }
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

function treeWalk(abs: string, display: string, cwd: string, o: TreeOptions): TreeWalk {
  const walk: WalkOptions = { hidden: o.all, noIgnore: o.noIgnore, skipGitDir: true };
  return new TreeWalk(o, walk, o.now ?? (() => performance.now()), rootHandle(abs, display, cwd, walk), display);
}

/** Walks `abs` (printed as `display`) within the budgets of `o`, counting on this thread. */
export function buildTree(abs: string, display: string, cwd: string, o: TreeOptions): TreeResult {
  const t = treeWalk(abs, display, cwd, o);
  for (let f = t.next(); f; f = t.next()) t.countHere(f);
  return { root: t.root, stopped: t.stopped };
}

/**
 * As `buildTree`, but once the walk has passed `par.minFiles` files the rest are counted in batches shared
 * with worker threads (the walk runs ahead of the counts by the batches the workers hold), so a small tree
 * costs no worker's start-up. The budgets mean the same: the walk stops on them, and a count still running
 * at the deadline stops between chunks, marked partial.
 */
export async function buildTreeParallel(abs: string, display: string, cwd: string, o: TreeOptions, par: TreeParallel): Promise<TreeResult> {
  const t = treeWalk(abs, display, cwd, o);
  let f = t.next();
  for (let n = 0; f && n < par.minFiles; f = t.next(), n++) t.countHere(f);
  const workers = f ? await par.workers() : 0;
  if (f && workers >= 1) await t.countShared(f, workers, par);
  else for (; f; f = t.next()) t.countHere(f);
  return { root: t.root, stopped: t.stopped };
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
