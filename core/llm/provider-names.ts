// Owns the names of the LLM providers a user can choose (flag, environment, config, profile), and of
// the OpenAI APIs (TENDRIL_OPENAI_API): one list each that every check and message reads.

export const PROVIDERS = ["anthropic", "openai", "replay"] as const;
export type ProviderName = (typeof PROVIDERS)[number];

export function isProviderName(name: string): name is ProviderName {
  return (PROVIDERS as readonly string[]).includes(name);
}

/** The OpenAI APIs the openai provider speaks: Responses, or Chat Completions (any compatible server). */
export const OPENAI_APIS = ["responses", "chat"] as const;
export type OpenAiApi = (typeof OPENAI_APIS)[number];

export function isOpenAiApi(name: string): name is OpenAiApi {
  return (OPENAI_APIS as readonly string[]).includes(name);
}
