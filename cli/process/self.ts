// Owns how this process re-launches itself (`tendril dev-mcp` as the agent's default tool server,
// `tendril agent` under `tendril prompt`): compiled binary, `bun main.ts`, or `deno run -A main.ts`.
import { basename } from "node:path";

export interface SelfCommand {
  command: string;
  args: string[];
}

/** The executable's path. Linux reports a binary replaced on disk (a rebuild or an upgrade while
 * running) as "PATH (deleted)"; the new file at PATH is the one to launch. */
function executable(): string {
  return process.execPath.replace(/ \(deleted\)$/, "");
}

export function selfCommand(): SelfCommand {
  const script = process.argv[1] ?? "";
  const exe = executable();
  if (script.startsWith("/$bunfs/") || script.startsWith("B:\\~BUN\\") || script === "") {
    return { command: exe, args: [] };
  }
  if (basename(exe).startsWith("deno")) return { command: exe, args: ["run", "-A", script] };
  return { command: exe, args: [script] };
}
