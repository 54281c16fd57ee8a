import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CredentialsError, credentialsPath, endpointUsable, keySource, readCredentials, removeKey, resolveEndpoint, storeKey, storedProvider } from "./credentials.ts";
import { loadConfig } from "./config.ts";

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

function fresh(): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), "tendril-creds-"));
  dirs.push(dir);
  return { dir, file: credentialsPath(join(dir, "tendril")) };
}

function writeRaw(file: string, text: string, mode = 0o600): void {
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, text);
  chmodSync(file, mode);
}

const errorOf = (f: () => unknown): Error => {
  try {
    f();
  } catch (err) {
    return err as Error;
  }
  throw new Error("no error");
};

describe("credentials.toml", () => {
  test("stored keys are written 0600 (directory created), kept per provider, and removed one by one", () => {
    const { file } = fresh();
    storeKey(file, "anthropic", { api_key: "sk-a" });
    storeKey(file, "openai", { api_key: "sk-o", base_url: "http://127.0.0.1:1/v1" });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readCredentials(file)).toEqual({ anthropic: { api_key: "sk-a" }, openai: { api_key: "sk-o", base_url: "http://127.0.0.1:1/v1" } });
    expect(removeKey(file, "anthropic")).toBe(true);
    expect(removeKey(file, "anthropic")).toBe(false);
    expect(readCredentials(file)).toEqual({ openai: { api_key: "sk-o", base_url: "http://127.0.0.1:1/v1" } });
  });

  test("a missing file is empty", () => {
    expect(readCredentials(fresh().file)).toEqual({});
  });

  test("a file group or others can read is refused, naming the file and chmod 600", () => {
    const { file } = fresh();
    writeRaw(file, '[anthropic]\napi_key = "sk"\n', 0o640);
    const err = errorOf(() => readCredentials(file));
    expect(err).toBeInstanceOf(CredentialsError);
    expect(err.message).toContain(file);
    expect(err.message).toContain(`chmod 600 ${file}`);
  });

  test("bad TOML names the file and the line", () => {
    const { file } = fresh();
    writeRaw(file, '[anthropic]\napi_key = "sk"\nbase_url = \n');
    const err = errorOf(() => readCredentials(file));
    expect(err.message).toContain(`${file}:3:`);
    expect(err.message).toContain("fix line 3");
  });

  test("unknown keys are named, at the top and inside a provider's table", () => {
    const { file } = fresh();
    writeRaw(file, '[gemini]\napi_key = "sk"\n');
    expect(errorOf(() => readCredentials(file)).message).toContain('unknown key "gemini"');
    writeRaw(file, '[openai]\napi_key = "sk"\norg = "x"\n');
    expect(errorOf(() => readCredentials(file)).message).toContain('unknown key "openai.org"');
    writeRaw(file, '[openai]\nbase_url = "http://x"\n');
    expect(errorOf(() => readCredentials(file)).message).toContain("needs api_key");
  });
});

describe("which key wins", () => {
  test("the environment's key wins over the file's; the file's is used when the environment has none", () => {
    const { file } = fresh();
    storeKey(file, "anthropic", { api_key: "sk-file", base_url: "http://127.0.0.1:2" });
    expect(resolveEndpoint("anthropic", { apiKey: "sk-env" }, file)).toEqual({ apiKey: "sk-env", keyFrom: "environment" });
    expect(resolveEndpoint("anthropic", {}, file)).toEqual({ apiKey: "sk-file", baseUrl: "http://127.0.0.1:2", keyFrom: "file" });
  });

  test("A12: a stored key goes only to the base URL stored with it unless both key and base URL come from the environment", () => {
    const { file } = fresh();
    storeKey(file, "anthropic", { api_key: "sk-file", base_url: "http://127.0.0.1:2" });
    storeKey(file, "openai", { api_key: "sk-file-openai" });
    expect(errorOf(() => resolveEndpoint("anthropic", { baseUrl: "https://collector.evil.test" }, file))).toEqual(
      new CredentialsError(
        `ANTHROPIC_BASE_URL is https://collector.evil.test, but the anthropic key comes from ${file}, where it is stored for http://127.0.0.1:2; a stored key goes only there. Set ANTHROPIC_API_KEY too to use https://collector.evil.test, unset ANTHROPIC_BASE_URL, or run tendril agent login --base-url https://collector.evil.test`,
      ),
    );
    expect(errorOf(() => resolveEndpoint("openai", { baseUrl: "https://collector.evil.test/v1" }, file)).message).toContain("where it is stored for the provider's own endpoint; a stored key goes only there");
    // The same URL as stored, or both from the environment: as asked.
    expect(resolveEndpoint("anthropic", { baseUrl: "http://127.0.0.1:2" }, file)).toEqual({ apiKey: "sk-file", baseUrl: "http://127.0.0.1:2", keyFrom: "file" });
    expect(resolveEndpoint("anthropic", { apiKey: "sk-env", baseUrl: "https://gw.test" }, file)).toEqual({ apiKey: "sk-env", baseUrl: "https://gw.test", keyFrom: "environment" });
    // Through the agent's key source the refusal reaches the request as an error, and the key goes nowhere.
    expect(() => keySource("anthropic", { baseUrl: "https://collector.evil.test" }, file, () => {}).endpoint()).toThrow(CredentialsError);
  });

  test("A12: a plain-http base URL to another machine gets a warning, once per URL", () => {
    const { file } = fresh();
    const warnings: string[] = [];
    const source = keySource("openai", { apiKey: "sk-env", baseUrl: "http://10.0.0.5:8000/v1" }, file, (m) => warnings.push(m));
    source.endpoint();
    source.endpoint();
    expect(warnings).toEqual(["the base URL http://10.0.0.5:8000/v1 is plain http to another machine: the API key and every prompt cross the network unencrypted; use https"]);
    for (const quiet of ["http://127.0.0.1:11434/v1", "http://localhost:8080", "http://[::1]:9/", "https://gw.example.test", undefined]) {
      const seen: string[] = [];
      keySource("openai", { apiKey: "sk-env", ...(quiet ? { baseUrl: quiet } : {}) }, file, (m) => seen.push(m)).endpoint();
      expect([quiet, seen]).toEqual([quiet, []]);
    }
  });

  test("A12: the credentials temp file is created with O_EXCL|O_NOFOLLOW: a planted symlink at its name is not followed", () => {
    const { dir, file } = fresh();
    storeKey(file, "anthropic", { api_key: "sk-old" });
    const victim = join(dir, "victim");
    writeFileSync(victim, "untouched\n");
    // The temp name's random part made predictable, as an attacker racing for it would hope.
    const random = crypto.getRandomValues;
    crypto.getRandomValues = <T extends ArrayBufferView | null>(a: T): T => ((a as unknown as Uint8Array).fill(7), a);
    try {
      symlinkSync(victim, `${file}.${process.pid}.${"07".repeat(8)}.tmp`);
      expect((errorOf(() => storeKey(file, "anthropic", { api_key: "sk-new" })) as NodeJS.ErrnoException).code).toBe("EEXIST");
    } finally {
      crypto.getRandomValues = random;
    }
    expect(readFileSync(victim, "utf8")).toBe("untouched\n");
    expect(readCredentials(file).anthropic?.api_key).toBe("sk-old");
    storeKey(file, "anthropic", { api_key: "sk-new" }); // a fresh name next time
    expect(readCredentials(file).anthropic?.api_key).toBe("sk-new");
  });

  test("an environment key never reads the file, so a broken file does not stop it", () => {
    const { file } = fresh();
    writeRaw(file, "not toml = = =\n", 0o644);
    expect(resolveEndpoint("openai", { apiKey: "sk-env" }, file).apiKey).toBe("sk-env");
  });

  test("usable: a key, a base URL alone (local servers), or replay", () => {
    const { file } = fresh();
    expect(endpointUsable("openai", resolveEndpoint("openai", {}, file))).toBe(false);
    expect(endpointUsable("openai", resolveEndpoint("openai", { baseUrl: "http://127.0.0.1:11434/v1" }, file))).toBe(true);
    expect(endpointUsable("replay", resolveEndpoint("replay", {}, file))).toBe(true);
  });

  test("the default provider: an environment key first, then the first provider the file holds", async () => {
    const { dir, file } = fresh();
    const env = { HOME: dir, XDG_CONFIG_HOME: dir };
    const read = (p: string) => {
      try {
        return readFileSync(p, "utf8");
      } catch {
        return undefined;
      }
    };
    expect((await loadConfig({}, env, read)).provider).toBe("openai");
    storeKey(file, "anthropic", { api_key: "sk" });
    expect(storedProvider(file)).toBe("anthropic");
    expect((await loadConfig({}, env, read)).provider).toBe("anthropic");
    expect((await loadConfig({}, { ...env, OPENAI_API_KEY: "sk-o" }, read)).provider).toBe("openai");
    expect((await loadConfig({}, { ...env, OPENAI_BASE_URL: "http://127.0.0.1:1/v1" }, read)).provider).toBe("openai");
  });
});
