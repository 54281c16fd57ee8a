// What `tendril prompt --no-session-persistence` gives its in-process agent: sessions that are not
// saved are not offered for load, list, resume or delete either (the initialize answer says so).
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../core/config.ts";
import { bytePipe } from "../../core/wire/byte-pipe.ts";
import { scriptedProvider } from "../../tests/in-memory.ts";
import { openAgent } from "./agent-runtime.ts";

const home = mkdtempSync(join(tmpdir(), "tendril-runtime-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

async function capabilities(persist: boolean): Promise<Record<string, unknown>> {
  const env = { HOME: home, XDG_CONFIG_HOME: join(home, "config"), XDG_STATE_HOME: join(home, "state"), XDG_CACHE_HOME: join(home, "cache") };
  const cfg = await loadConfig({}, env, () => undefined);
  const toAgent = bytePipe();
  const fromAgent = bytePipe();
  const agent = await openAgent({ ...cfg, dev: false }, scriptedProvider(), { input: toAgent.input, sink: fromAgent.sink }, { persist, modelList: "on-demand" });
  try {
    toAgent.sink.write(new TextEncoder().encode(`${JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1 } })}\n`));
    const decoder = new TextDecoder();
    let text = "";
    for await (const chunk of fromAgent.input) {
      text += decoder.decode(chunk, { stream: true });
      if (text.includes("\n")) break;
    }
    return JSON.parse(text.slice(0, text.indexOf("\n"))).result.agentCapabilities;
  } finally {
    toAgent.close();
    await agent.close(true);
  }
}

test("--no-session-persistence: the agent offers no load, list, resume or delete; with persistence it does", async () => {
  const off = await capabilities(false);
  expect(off.loadSession).toBe(false);
  expect(off.sessionCapabilities).toEqual({ close: {}, fork: {}, additionalDirectories: {} });
  const on = await capabilities(true);
  expect(on.loadSession).toBe(true);
  expect(on.sessionCapabilities).toMatchObject({ list: {}, resume: {}, delete: {} });
});
