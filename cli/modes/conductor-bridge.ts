// Owns `tendril conductor mcp-bridge`: the MCP stdio server an agent starts for a proxy's MCP-over-ACP
// server, relaying lines to the conductor's bridge socket (core/conductor/mcp-bridge-client.ts) until
// either side closes; its problems are one stderr line and an exit code.
import { runBridgeClient } from "../../core/conductor/mcp-bridge-client.ts";
import { loadLimits } from "../../core/limits.ts";
import { processEnv } from "../process/environment.ts";

/** Relays MCP lines between stdio and the conductor's socket until either side closes. */
export async function runMcpBridge(socket: string, server: string): Promise<number> {
  let limits;
  try {
    limits = loadLimits(processEnv());
  } catch (err) {
    return bridgeSays((err as Error).message, 2);
  }
  return runBridgeClient(socket, server, {
    input: process.stdin,
    output: process.stdout,
    say: (line) => void bridgeSays(line),
    maxLineBytes: limits.MAX_LINE_BYTES,
    refusalWaitMs: limits.MCP_INIT_TIMEOUT_S * 1000,
  });
}

function bridgeSays(line: string, code = 1): number {
  process.stderr.write(`tendril conductor mcp-bridge: ${line}\n`);
  return code;
}
