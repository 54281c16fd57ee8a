// Owns how this process re-launches itself (`tendril dev-mcp` as the agent's default tool server,
// `tendril agent` under `tendril prompt`): compiled binary, `bun main.ts`, or `deno run -A main.ts`.
import { basename } from "node:path";

export interface SelfCommand {
  command: string;
  args: string[];
}

export function selfCommand(): SelfCommand {
  const script = process.argv[1] ?? "";
  if (script.startsWith("/$bunfs/") || script.startsWith("B:\\~BUN\\") || script === "") {
    return { command: process.execPath, args: [] };
  }
  if (basename(process.execPath).startsWith("deno")) return { command: process.execPath, args: ["run", "-A", script] };
  return { command: process.execPath, args: [script] };
}
