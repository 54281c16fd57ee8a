// Owns knowing that nothing changed under a set of folders since a given moment, without reading them:
// Linux inotify (through Bun's FFI and libc) on every folder a walk read, and a generation counter that
// any event (or a lost one: the queue overflowed, a watch could not be added) moves on. It says only
// "changed or not", never what changed: a caller that sees a change reads everything again. Elsewhere
// (macOS, no FFI, the user's watch limit reached) it is off and every question answers "changed".
import { readFileSync } from "node:fs";

/** Watches this process may hold in all: a quarter of the user's limit, so an editor's own watchers
 *  (which share it) never run out because of us. Past it, a walk is simply not remembered. */
const WATCH_SHARE = 4;
let budget: number | undefined;
let held = 0;
function watchBudget(): number {
  if (budget === undefined) {
    try {
      budget = Math.floor(Number(readFileSync("/proc/sys/fs/inotify/max_user_watches", "latin1").trim()) / WATCH_SHARE) || 0;
    } catch {
      budget = 0;
    }
  }
  return budget;
}

const IN_NONBLOCK = 0o4000;
const IN_CLOEXEC = 0o2000000;
// What can change what a folder holds, or the folder itself.
const IN_MODIFY = 0x2;
const IN_ATTRIB = 0x4;
const IN_CLOSE_WRITE = 0x8;
const IN_MOVED_FROM = 0x40;
const IN_MOVED_TO = 0x80;
const IN_CREATE = 0x100;
const IN_DELETE = 0x200;
const IN_DELETE_SELF = 0x400;
const IN_MOVE_SELF = 0x800;
const IN_ONLYDIR = 0x01000000;
const MASK = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;

interface Inotify {
  init(): number;
  add(fd: number, path: string): number;
  /** Bytes of pending events read into `buf` (discarded); 0 or less: none. */
  drain(fd: number, buf: Buffer): number;
  close(fd: number): void;
}

let lib: Inotify | null | undefined;

function inotify(): Inotify | null {
  if (lib !== undefined) return lib;
  lib = null;
  if (process.platform !== "linux" || typeof Bun === "undefined") return null;
  try {
    // bun:ffi on demand (~1.3 ms to load): only a confined command's git check loads it.
    const { dlopen, FFIType, ptr } = import.meta.require("bun:ffi") as typeof import("bun:ffi");
    const l = dlopen("libc.so.6", {
      inotify_init1: { args: [FFIType.i32], returns: FFIType.i32 },
      inotify_add_watch: { args: [FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
      read: { args: [FFIType.i32, FFIType.ptr, FFIType.u64], returns: FFIType.i64 },
      close: { args: [FFIType.i32], returns: FFIType.i32 },
    });
    lib = {
      init: () => l.symbols.inotify_init1(IN_NONBLOCK | IN_CLOEXEC),
      add: (fd, path) => {
        const c = Buffer.from(`${path}\0`, "utf8");
        return l.symbols.inotify_add_watch(fd, ptr(c), MASK);
      },
      drain: (fd, buf) => Number(l.symbols.read(fd, ptr(buf), BigInt(buf.length))),
      close: (fd) => void l.symbols.close(fd),
    };
  } catch {
    lib = null;
  }
  return lib;
}

/** Changes under the folders it was told to watch, as a generation number. */
export class FolderEvents {
  #fd = -1;
  #generation = 0;
  #buf = Buffer.alloc(64 * 1024);
  /** A watch could not be added since the last `reset` (the user's limit, no inotify): nothing can be
   *  promised, and every question moves the generation on. */
  #blind = false;
  /** The folders this instance watches (a watch per folder however often it is added). */
  readonly #watched = new Set<string>();

  /** Whether this system can watch folders at all. */
  static available(): boolean {
    return inotify() !== null;
  }

  /** A new round of watching (a walk starts): what failed before is forgotten. */
  reset(): void {
    this.#blind = false;
  }

  /** Watches a folder, from now on (call it before reading the folder, so nothing falls between). */
  add(dir: string): void {
    const l = inotify();
    const fresh = !this.#watched.has(dir);
    if (!l || (fresh && held >= watchBudget())) {
      this.#blind = true;
      return;
    }
    if (this.#fd < 0) this.#fd = l.init();
    if (this.#fd < 0 || l.add(this.#fd, dir) < 0) {
      this.#blind = true;
      return;
    }
    if (fresh) {
      this.#watched.add(dir);
      held++;
    }
  }

  /** The generation now: every event read since the last question (or a blind watch) moves it on. */
  now(): number {
    const l = inotify();
    if (!l || this.#fd < 0 || this.#blind) return ++this.#generation;
    for (;;) {
      const n = l.drain(this.#fd, this.#buf);
      if (n <= 0) break;
      this.#generation++;
      if (n < this.#buf.length) break;
    }
    return this.#generation;
  }

  close(): void {
    if (this.#fd >= 0) inotify()?.close(this.#fd);
    this.#fd = -1;
    held -= this.#watched.size;
    this.#watched.clear();
  }
}
