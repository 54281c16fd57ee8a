// Owns the names of the LLM providers a user can choose (flag, environment, config, profile): one list
// that every check and message reads.

export const PROVIDERS = ["anthropic", "openai", "replay"] as const;
export type ProviderName = (typeof PROVIDERS)[number];

export function isProviderName(name: string): name is ProviderName {
  return (PROVIDERS as readonly string[]).includes(name);
}
