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

/** The openai provider's API and prompt_cache_key choice, as config gives them. */
function openAiOptions(cfg: Config): { api?: Config["openaiApi"]; promptCacheKey?: boolean } {
  return { ...(cfg.openaiApi ? { api: cfg.openaiApi } : {}), ...(cfg.promptCacheKey !== undefined ? { promptCacheKey: cfg.promptCacheKey } : {}) };
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

/** Where a keyed provider's key and base URL come from, asked on every request (a login or logout
 *  while the agent runs takes effect at the next request); throws when the credentials file is bad. */
export type EndpointSource = () => { apiKey?: string; baseUrl?: string };

/**
 * A provider whose SDK adapter loads on first use: loading an SDK costs ~3-10 ms, which `initialize`
 * (answered before any session asks for a model; the eager model list waits a turn, model-choice.ts)
 * does not wait for. The first request loads it at once: a timer turn there only delayed the request.
 * The adapter is rebuilt when the endpoint (key, base URL) changes.
 */
function deferred(name: string, endpoint: EndpointSource, load: (side: { apiKey?: string; baseUrl?: string }) => Promise<LlmProvider>): LlmProvider {
  let loaded: { at: string; p: Promise<LlmProvider> } | undefined;
  const get = () => {
    const side = endpoint();
    const at = JSON.stringify([side.apiKey ?? null, side.baseUrl ?? null]);
    if (loaded?.at !== at) loaded = { at, p: Promise.resolve(side).then(load) };
    return loaded.p;
  };
  return {
    name,
    // Both SDK adapters map `thought_level` (anthropic: a thinking budget; openai: reasoning effort).
    thoughtLevels: true,
    async *stream(req) {
      let p: LlmProvider;
      try {
        p = await get();
      } catch (err) {
        const kind = (err as Error).name === "CredentialsError" ? "auth" : "transport";
        yield { type: "error", error: { kind, message: kind === "auth" ? (err as Error).message : `the ${name} adapter could not load: ${(err as Error).message}` } };
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
 * `endpoint` (default: the environment's values in cfg) is asked for the key and base URL per request.
 */
export async function createProvider(cfg: Config, readFile: ReadFile, endpoint?: EndpointSource): Promise<LlmProvider> {
  let provider: LlmProvider;
  switch (cfg.provider) {
    case "anthropic": {
      const source = endpoint ?? (() => cfg.anthropic);
      provider = deferred("anthropic", source, async (side) => (await import("./anthropic.ts")).anthropicProvider(sdkOptions(cfg, side)));
      break;
    }
    case "openai": {
      const source = endpoint ?? (() => cfg.openai);
      provider = deferred("openai", source, async (side) => (await import("./openai.ts")).openaiProvider(sdkOptions(cfg, side), openAiOptions(cfg)));
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
