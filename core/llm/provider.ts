// Owns choosing the LLM provider from Config (anthropic, openai or replay) and wrapping it for recording.
// SDK adapters load lazily here, so modes that never call an LLM (and `--version`) do not pay for them.
import { type Config, ConfigError } from "../config.ts";
import type { SdkProviderOptions } from "./http-edge.ts";
import type { LlmProvider } from "./types.ts";

/** Returns a file's text, or undefined when it does not exist (as loadConfig's reader does). */
export type ReadFile = (path: string) => string | undefined;

function sdkOptions(cfg: Config, side: { apiKey?: string; baseUrl?: string }): SdkProviderOptions {
  const opts: SdkProviderOptions = {
    maxResponseBytes: cfg.limits.MAX_LLM_RESPONSE_BYTES,
    timeoutS: cfg.limits.LLM_TIMEOUT_S,
    maxRetries: cfg.limits.LLM_MAX_RETRIES,
  };
  if (side.apiKey) opts.apiKey = side.apiKey;
  if (side.baseUrl) opts.baseUrl = side.baseUrl;
  return opts;
}

async function loadReplay(cfg: Config, readFile: ReadFile): Promise<LlmProvider> {
  if (!cfg.replay) throw new ConfigError("TENDRIL_PROVIDER=replay needs TENDRIL_REPLAY=FILE (a cassette written with TENDRIL_RECORD)");
  const text = readFile(cfg.replay);
  if (text === undefined) throw new ConfigError(`replay file not found: ${cfg.replay} (TENDRIL_REPLAY)`);
  const { replayProvider, CassetteError } = await import("./replay.ts");
  try {
    return replayProvider(text);
  } catch (err) {
    if (err instanceof CassetteError) throw new ConfigError(`${cfg.replay}: ${err.message}`);
    throw err;
  }
}

/**
 * A provider whose SDK adapter loads on first use, one event-loop turn later: loading an SDK costs
 * ~10 ms, which `initialize` (answered before any session asks for a model) should not wait for.
 */
function deferred(name: string, load: () => Promise<LlmProvider>): LlmProvider {
  let loaded: Promise<LlmProvider> | undefined;
  const get = () => (loaded ??= new Promise<void>((r) => setTimeout(r, 0)).then(load));
  return {
    name,
    async *stream(req) {
      let p: LlmProvider;
      try {
        p = await get();
      } catch (err) {
        yield { type: "error", error: { kind: "transport", message: `the ${name} adapter could not load: ${(err as Error).message}` } };
        return;
      }
      yield* p.stream(req);
    },
    async listModels(signal) {
      const p = await get();
      if (!p.listModels) return [];
      return p.listModels(signal);
    },
  };
}

/**
 * The provider the configuration asks for; recording-wrapped when `cfg.record` is set.
 * Rejects with a ConfigError (naming the variable to fix) when replay has no usable cassette;
 * credential problems surface later as `auth` error events, so `tendril agent` can still start.
 */
export async function createProvider(cfg: Config, readFile: ReadFile): Promise<LlmProvider> {
  let provider: LlmProvider;
  switch (cfg.provider) {
    case "anthropic": {
      const opts = sdkOptions(cfg, cfg.anthropic);
      provider = deferred("anthropic", async () => (await import("./anthropic.ts")).anthropicProvider(opts));
      break;
    }
    case "openai": {
      const opts = sdkOptions(cfg, cfg.openai);
      provider = deferred("openai", async () => (await import("./openai.ts")).openaiProvider(opts));
      break;
    }
    case "replay":
      provider = await loadReplay(cfg, readFile);
      break;
  }
  if (cfg.record) {
    const { withRecording } = await import("./record.ts");
    provider = withRecording(provider, cfg.record);
  }
  return provider;
}
