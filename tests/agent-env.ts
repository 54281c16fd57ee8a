// Owns the environment end-to-end agent tests run `tendril agent` in: the fake LLM as the provider,
// XDG dirs under the test's work dir (so sessions and approvals persist there, and only there). Test-only.
import { join } from "node:path";
import type { FakeLlm } from "./fake-llm.ts";

export function agentEnv(fake: FakeLlm, work: string, provider: "anthropic" | "openai" = "anthropic"): Record<string, string> {
  const env: Record<string, string> = {
    TENDRIL_PROVIDER: provider,
    TENDRIL_MODEL: "fake-model",
    XDG_CONFIG_HOME: join(work, "config"),
    XDG_STATE_HOME: join(work, "state"),
    XDG_CACHE_HOME: join(work, "cache"),
    TENDRIL_MCP_INIT_TIMEOUT_S: "5",
    TENDRIL_LOG: "warn",
  };
  if (provider === "anthropic") Object.assign(env, { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.anthropicBaseUrl });
  else Object.assign(env, { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: fake.openaiBaseUrl });
  return env;
}
