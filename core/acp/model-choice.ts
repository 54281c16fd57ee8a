// Owns which models a session may switch to and how clients are told: the config's `models` list,
// else the provider's own list (fetched once, bounded by MODEL_LIST_TIMEOUT_S, cached), else just the
// current model; shown as ACP's `model` config option and the older `models` state some clients read.
// Does not switch anything itself (session-config.ts does).
import type { SessionConfigOption } from "@agentclientprotocol/sdk";
import type { LlmProvider } from "../llm/types.ts";
import { log } from "../log.ts";
import { AcpError, INVALID_PARAMS } from "./acp-error.ts";

export const MODEL_OPTION_ID = "model";

export class ModelChoices {
  /** The list offered; undefined while an on-demand list has not been asked for. */
  #listed: Promise<string[]> | undefined;

  constructor(
    configured: readonly string[],
    private readonly provider: LlmProvider,
    private readonly timeoutS: number,
    when: "eager" | "on-demand" = "eager",
  ) {
    if (configured.length > 0) this.#listed = Promise.resolve([...configured]);
    // Eager: asked one event-loop turn after start-up (resolving the endpoint reads the credentials
    // file), so an `initialize` already waiting on stdin is answered first.
    else if (when === "eager") this.#listed = new Promise<void>((r) => setTimeout(r, 0)).then(() => fetchList(provider, timeoutS));
  }

  /** The choices, with `current` always among them (first when the list does not have it). */
  async choices(current: string): Promise<string[]> {
    const listed = (await this.#listed) ?? [];
    return listed.includes(current) ? listed : [current, ...listed];
  }

  /** Checks a requested model against the choices (asking the provider for an on-demand list the
   *  first time another model is named); -32602 naming them otherwise. */
  async check(requested: unknown, current: string): Promise<string> {
    if (this.#listed === undefined && typeof requested === "string" && requested !== current) this.#listed = fetchList(this.provider, this.timeoutS);
    const choices = await this.choices(current);
    if (typeof requested === "string" && choices.includes(requested)) return requested;
    throw new AcpError(INVALID_PARAMS, `unknown model ${JSON.stringify(requested)}; choose one of: ${choices.join(", ")}`);
  }

  /** What session/new, load and resume answer with, and set_config_option returns. */
  async describe(current: string): Promise<{ configOptions: SessionConfigOption[]; models: ModelState }> {
    const choices = await this.choices(current);
    return {
      configOptions: [
        {
          id: MODEL_OPTION_ID,
          name: "Model",
          category: "model",
          type: "select",
          currentValue: current,
          options: choices.map((id) => ({ value: id, name: id })),
        },
      ],
      models: { currentModelId: current, availableModels: choices.map((id) => ({ modelId: id, name: id })) },
    };
  }
}

/** The older (unstable) form clients that send `session/set_model` read. */
export interface ModelState {
  currentModelId: string;
  availableModels: { modelId: string; name: string }[];
}

async function fetchList(provider: LlmProvider, timeoutS: number): Promise<string[]> {
  if (!provider.listModels) return [];
  try {
    const ids = await provider.listModels(AbortSignal.timeout(timeoutS * 1000));
    return [...new Set(ids)].sort();
  } catch (err) {
    log.info("the provider did not list its models; offering the current one only", { error: err });
    return [];
  }
}
