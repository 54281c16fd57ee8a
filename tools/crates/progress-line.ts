// Owns the download progress line: bytes, rate and a bar over every crate of one call, as text.
// Does not write anywhere or decide whether to show it (cli/ shows it only on a terminal stderr).
import type { CrateProgress } from "./fetch-crate.ts";

const BAR_WIDTH = 24;

function size(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(0)} KiB`;
  return `${bytes} B`;
}

export class ProgressLine {
  private readonly crates = new Map<string, CrateProgress>();
  private readonly startMs: number;

  constructor(now = Date.now()) {
    this.startMs = now;
  }

  update(p: CrateProgress): void {
    this.crates.set(p.crate, p);
  }

  get active(): boolean {
    return this.crates.size > 0;
  }

  /** e.g. `[#########...............] 1.2 MiB / 3.4 MiB  5.1 MiB/s  2/3 crates  serde 1.0.200`. */
  render(now = Date.now()): string {
    const all = [...this.crates.values()];
    const received = all.reduce((n, p) => n + p.received, 0);
    const knownTotal = all.every((p) => p.total !== undefined);
    const total = knownTotal ? all.reduce((n, p) => n + (p.total ?? 0), 0) : undefined;
    const done = all.filter((p) => p.done).length;
    const rate = received / Math.max((now - this.startMs) / 1000, 0.001);
    const fill = total ? Math.min(BAR_WIDTH, Math.round((received / total) * BAR_WIDTH)) : 0;
    const bar = total ? `[${"#".repeat(fill)}${".".repeat(BAR_WIDTH - fill)}] ` : "";
    const amount = total ? `${size(received)} / ${size(total)}` : size(received);
    const current = all.find((p) => !p.done)?.crate ?? all.at(-1)?.crate ?? "";
    return `${bar}${amount}  ${size(rate)}/s  ${done}/${all.length} crates  ${current}`;
  }
}
