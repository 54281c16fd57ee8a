// Owns `tendril agent approvals list|revoke`: the remembered "always allow/reject" answers as a table
// or JSON, and taking one back. The store itself is core/policy/approvals.ts.
import type { Command } from "commander";
import { resolve } from "node:path";
import { loadConfig } from "../../core/config.ts";
import { ApprovalStore } from "../../core/policy/approvals.ts";
import type { ExitBox } from "../process/exit-box.ts";
import { readFileOrUndefined } from "../process/optional-file.ts";

async function store(configFlag?: string) {
  const cfg = await loadConfig({ config: configFlag }, process.env, readFileOrUndefined);
  return new ApprovalStore(cfg.paths.stateDir);
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join("  ")).join("\n") + "\n";
}

export function describeApprovals(agent: Command, exit: ExitBox): void {
  const approvals = agent.command("approvals").description("the remembered 'always allow' / 'always reject' answers");
  approvals
    .command("list")
    .description("print ID  DECISION  TOOL  SCOPE  WORKSPACE, one approval a line")
    .option("--json", "one JSON array instead of the table")
    .option("--cwd <dir>", "only the approvals of this workspace")
    .option("--config <file>", "config file (TENDRIL_CONFIG), for where state lives")
    .action(async (flags: { json?: boolean; cwd?: string; config?: string }) => {
      const list = (await store(flags.config)).list(flags.cwd === undefined ? undefined : resolve(flags.cwd));
      if (flags.json) process.stdout.write(JSON.stringify(list, null, 2) + "\n");
      else if (list.length === 0) process.stderr.write("no remembered approvals\n");
      else {
        const rows = [["ID", "DECISION", "TOOL", "SCOPE", "WORKSPACE"], ...list.map((a) => [a.id, a.decision, a.tool, a.scope, a.workspace])];
        process.stdout.write(table(rows));
      }
      exit.code = 0;
    });
  approvals
    .command("revoke")
    .description("take back one approval: later calls are asked about again")
    .argument("<id>", "the ID `approvals list` prints")
    .option("--config <file>", "config file (TENDRIL_CONFIG), for where state lives")
    .action(async (id: string, flags: { config?: string }) => {
      if (!(await store(flags.config)).revoke(id)) {
        process.stderr.write(`tendril: no approval with ID ${id}; see 'tendril agent approvals list'\n`);
        exit.code = 2;
        return;
      }
      process.stderr.write(`revoked ${id}\n`);
      exit.code = 0;
    });
}
