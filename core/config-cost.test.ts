// The cost settings of config.ts (SPEC §2, §3.9): TENDRIL_PROMPT_CACHE / prompt_cache and [prices."MODEL"];
// a bad value exits 2 naming it (the ConfigError's message).
import { expect, test } from "bun:test";
import { ConfigError, loadConfig } from "./config.ts";

const HOME = "/home/u";
const FILE = "/home/u/.config/tendril/config.toml";
const files = (m: Record<string, string>) => (p: string) => m[p];

test("prompt cache: on by default; the environment wins over prompt_cache in the file; an unknown value names itself", async () => {
  expect((await loadConfig({}, { HOME }, files({}))).promptCache).toBe("on");
  expect((await loadConfig({}, { HOME }, files({ [FILE]: 'prompt_cache = "1h"\n' }))).promptCache).toBe("1h");
  expect((await loadConfig({}, { HOME, TENDRIL_PROMPT_CACHE: "off" }, files({ [FILE]: 'prompt_cache = "1h"\n' }))).promptCache).toBe("off");
  const env = loadConfig({}, { HOME, TENDRIL_PROMPT_CACHE: "always" }, files({}));
  await expect(env).rejects.toThrow(ConfigError);
  await expect(env).rejects.toThrow('TENDRIL_PROMPT_CACHE must be one of on, off, 1h, got "always"');
  await expect(loadConfig({}, { HOME }, files({ [FILE]: 'prompt_cache = "5m"\n' }))).rejects.toThrow(`${FILE}: prompt_cache must be one of on, off, 1h, got "5m"`);
});

test("[prices.\"MODEL\"] adds or overrides a price, USD per million tokens", async () => {
  const toml = '[prices."llama3:8b"]\ninput = 0\noutput = 0\ncache_write = 0\ncache_read = 0\n\n[prices."gpt-5.4"]\ninput = 2.0\noutput = 12\ncache_write = 2\ncache_read = 0.2\ncache_write_1h = 4\n';
  const c = await loadConfig({}, { HOME }, files({ [FILE]: toml }));
  expect(c.prices).toEqual({
    "llama3:8b": { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 },
    "gpt-5.4": { input: 2, output: 12, cacheWrite: 2, cacheRead: 0.2, cacheWrite1h: 4 },
  });
});

test("a price that is not a non-negative number, an unknown key or a missing one is refused, naming it", async () => {
  const bad = async (body: string) => loadConfig({}, { HOME }, files({ [FILE]: `[prices."m"]\n${body}\n` }));
  await expect(bad('input = -1\noutput = 1\ncache_write = 1\ncache_read = 1')).rejects.toThrow(`${FILE}: [prices."m"] input must be a non-negative number (USD per million tokens), got -1`);
  await expect(bad('input = "3"\noutput = 1\ncache_write = 1\ncache_read = 1')).rejects.toThrow('input must be a non-negative number (USD per million tokens), got "3"');
  await expect(bad("input = 1\noutput = 1\ncache_write = 1\ncache_read = 1\nthinking = 2")).rejects.toThrow('[prices."m"] has an unknown key thinking');
  await expect(bad("input = 1\noutput = 1")).rejects.toThrow('[prices."m"] needs cache_write, cache_read as well');
});
