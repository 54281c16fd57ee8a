// Owns remembered approvals ("always allow" / "always reject") across sessions and processes: one
// append-only JSONL file in the state dir (a grant or a revocation per line, each one O_APPEND write,
// so two agents granting at once lose neither), folded into the approvals in force, re-read only
// when the file changed. Does not decide calls (policy.ts) or print anything (cli/).
import { appendFileSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { log } from "../log.ts";
import { randomHex } from "../ids.ts";

export interface Approval {
  id: string;
  decision: "allow" | "reject";
  /** `server__tool`. */
  tool: string;
  /** What the approval covers: the tool, or for a shell call the tool and the first words of a read command (or the exact command). */
  scope: string;
  /** Absolute workspace the approval was given in; it applies there only. */
  workspace: string;
  at: string;
}

type Line = ({ type: "grant" } & Approval) | { type: "revoke"; id: string; at: string };

export class ApprovalStore {
  readonly file: string;
  #cache: { key: string; approvals: Approval[] } | undefined;

  constructor(stateDir: string) {
    this.file = join(stateDir, "approvals.jsonl");
  }

  /** Records an approval; a later one for the same workspace and scope replaces an earlier one. */
  add(a: Omit<Approval, "id" | "at">): Approval {
    const approval: Approval = { id: randomHex(4), at: new Date().toISOString(), ...a };
    this.#append({ type: "grant", ...approval });
    return approval;
  }

  /** Removes an approval; false when no approval in force has this id. */
  revoke(id: string): boolean {
    if (!this.list().some((a) => a.id === id)) return false;
    this.#append({ type: "revoke", id, at: new Date().toISOString() });
    return true;
  }

  /** The approvals in force (oldest first), optionally one workspace's. */
  list(workspace?: string): Approval[] {
    const all = this.#read();
    return workspace === undefined ? all : all.filter((a) => a.workspace === workspace);
  }

  /** The decision remembered for this workspace and scope, if any. */
  lookup(workspace: string, scope: string): "allow" | "reject" | undefined {
    return this.#read().findLast((a) => a.workspace === workspace && a.scope === scope)?.decision;
  }

  #append(line: Line): void {
    mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
    // One write of one line with O_APPEND: concurrent writers interleave whole lines, never bytes.
    appendFileSync(this.file, JSON.stringify(line) + "\n", { mode: 0o600 });
    this.#cache = undefined;
  }

  #read(): Approval[] {
    let key: string;
    try {
      const st = statSync(this.file);
      key = `${st.size}:${st.mtimeMs}`;
    } catch {
      return [];
    }
    if (this.#cache?.key === key) return this.#cache.approvals;
    const approvals = fold(readFileSync(this.file, "utf8"), this.file);
    this.#cache = { key, approvals };
    return approvals;
  }
}

function fold(text: string, file: string): Approval[] {
  const inForce = new Map<string, Approval>();
  for (const [i, raw] of text.split("\n").entries()) {
    if (raw.trim() === "") continue;
    let line: Line;
    try {
      line = JSON.parse(raw);
    } catch {
      log.warn("skipping a damaged line of the approvals file", { file, line: i + 1 });
      continue;
    }
    if (line.type === "revoke") {
      inForce.delete(line.id);
    } else if (line.type === "grant" && typeof line.scope === "string" && typeof line.workspace === "string") {
      // A newer grant for the same place replaces the older one.
      for (const [id, a] of inForce) if (a.workspace === line.workspace && a.scope === line.scope) inForce.delete(id);
      const { type: _t, ...approval } = line;
      inForce.set(line.id, approval);
    }
  }
  return [...inForce.values()];
}
