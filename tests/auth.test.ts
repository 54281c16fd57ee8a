// Authentication over the real ACP surface, in memory: authMethods with and without the client's
// terminal auth capability, auth_required on session/new without a key, authenticate, logout (a real
// credentials file in a temp dir), each answer validated against the stable v1 JSON schema.
import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { AgentAuth } from "../core/acp/auth.ts";
import { credentialsPath, keySource, storeKey } from "../core/credentials.ts";
import type { ProviderName } from "../core/llm/provider-names.ts";
import { memoryAgent, type MemoryAgent } from "./memory-agent.ts";

const schema = JSON.parse(readFileSync(join(import.meta.dir, "..", "node_modules", "@agentclientprotocol", "sdk", "schema", "v1", "schema.json"), "utf8"));
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
// uint16/uint64… are the schema's own integer formats; their bounds are in minimum/maximum.
for (const f of ["uint16", "uint32", "uint64", "int64", "double", "int32"]) ajv.addFormat(f, true);
ajv.addSchema(schema, "acp");

/** Validates `value` against one of the schema's definitions; returns the errors (empty = valid). */
function schemaErrors(def: string, value: unknown): string[] {
  const validate = ajv.getSchema(`acp#/$defs/${def}`)!;
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

let dirs: string[] = [];
let agents: MemoryAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.map((a) => a.close()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
  agents = [];
});

/** An agent whose key comes from `env` then a credentials file in a fresh config dir. */
function agentWithKeys(provider: ProviderName, env: { apiKey?: string; baseUrl?: string } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "tendril-auth-"));
  dirs.push(dir);
  const file = credentialsPath(join(dir, "tendril"));
  const auth = new AgentAuth(keySource(provider, env, file).auth);
  const a = memoryAgent({}, {}, { auth });
  agents.push(a);
  return { a, file, dir };
}

let nextId = 1;
async function call(a: MemoryAgent, method: string, params: unknown) {
  const id = nextId++;
  a.send({ jsonrpc: "2.0", id, method, params });
  return a.response(id);
}

const init = (a: MemoryAgent, terminal?: boolean) =>
  call(a, "initialize", { protocolVersion: 1, clientCapabilities: terminal === undefined ? {} : { auth: { terminal } } });

describe("auth methods in initialize", () => {
  test("a client without terminal auth gets the agent method api-key only, and logout is advertised", async () => {
    const { a } = agentWithKeys("anthropic");
    const r = await init(a);
    expect(schemaErrors("InitializeResponse", r.result)).toEqual([]);
    expect(r.result.authMethods.map((m: { id: string }) => m.id)).toEqual(["api-key"]);
    expect(r.result.authMethods[0].type).toBeUndefined(); // the schema's default kind: agent
    expect(r.result.agentCapabilities.auth).toEqual({ logout: {} });
    const off = await init(a, false);
    expect(off.result.authMethods.map((m: { id: string }) => m.id)).toEqual(["api-key"]);
  });

  test("a client with clientCapabilities.auth.terminal also gets the terminal method login with args [login]", async () => {
    const { a } = agentWithKeys("openai");
    const r = await init(a, true);
    expect(schemaErrors("InitializeResponse", r.result)).toEqual([]);
    const login = r.result.authMethods.find((m: { id: string }) => m.id === "login");
    expect(login).toMatchObject({ type: "terminal", args: ["login"] });
    expect(schemaErrors("AuthMethod", login)).toEqual([]);
  });
});

describe("session/new without a usable key", () => {
  test("answers -32000 naming the methods and tendril agent login; sessions start once the key exists", async () => {
    const { a, file } = agentWithKeys("anthropic");
    await init(a, true);
    const r = await call(a, "session/new", { cwd: tmpdir(), mcpServers: [] });
    expect(r.error.code).toBe(-32000);
    expect(r.error.message).toContain("api-key (agent)");
    expect(r.error.message).toContain("login (terminal)");
    expect(r.error.message).toContain("tendril agent login");
    expect(r.error.message).toContain("ANTHROPIC_API_KEY");
    const refused = await call(a, "authenticate", { methodId: "api-key" });
    expect(refused.error.code).toBe(-32000);
    expect(refused.error.message).toContain("tendril agent login");
    storeKey(file, "anthropic", { api_key: "sk-stored" }); // what `tendril agent login` does meanwhile
    const ok = await call(a, "authenticate", { methodId: "api-key" });
    expect(ok.result).toEqual({});
    expect(schemaErrors("AuthenticateResponse", ok.result)).toEqual([]);
    const s = await call(a, "session/new", { cwd: tmpdir(), mcpServers: [] });
    expect(typeof s.result.sessionId).toBe("string");
  });

  test("an environment key, an OpenAI-compatible base URL without a key, and replay need nothing stored", async () => {
    for (const [provider, env] of [["anthropic", { apiKey: "sk-env" }], ["openai", { baseUrl: "http://127.0.0.1:11434/v1" }], ["replay", {}]] as const) {
      const { a } = agentWithKeys(provider, env);
      await init(a);
      const s = await call(a, "session/new", { cwd: tmpdir(), mcpServers: [] });
      expect(s.error).toBeUndefined();
      expect((await call(a, "authenticate", { methodId: "api-key" })).result).toEqual({});
    }
  });

  test("a credentials file others can read is named with the fix in the -32000 answer", async () => {
    const { a, file } = agentWithKeys("anthropic");
    storeKey(file, "anthropic", { api_key: "sk-stored" });
    chmodSync(file, 0o644);
    await init(a);
    const r = await call(a, "session/new", { cwd: tmpdir(), mcpServers: [] });
    expect(r.error.code).toBe(-32000);
    expect(r.error.message).toContain(file);
    expect(r.error.message).toContain(`chmod 600 ${file}`);
  });

  test("authenticate with the terminal method or an unknown id is -32602 naming the methods", async () => {
    const { a } = agentWithKeys("anthropic", { apiKey: "sk-env" });
    await init(a, true);
    const login = await call(a, "authenticate", { methodId: "login" });
    expect(login.error.code).toBe(-32602);
    expect(login.error.message).toContain("tendril agent login");
    const unknown = await call(a, "authenticate", { methodId: "oauth" });
    expect(unknown.error.code).toBe(-32602);
    expect(unknown.error.message).toContain("api-key");
    const missing = await call(a, "authenticate", {});
    expect(missing.error.code).toBe(-32602);
  });
});

describe("logout", () => {
  test("removes the stored key of the agent's provider only; the next session/new needs a key again", async () => {
    const { a, file } = agentWithKeys("anthropic");
    storeKey(file, "anthropic", { api_key: "sk-a" });
    storeKey(file, "openai", { api_key: "sk-o" });
    await init(a);
    expect((await call(a, "session/new", { cwd: tmpdir(), mcpServers: [] })).result.sessionId).toBeDefined();
    const out = await call(a, "logout", {});
    expect(out.result).toEqual({});
    expect(schemaErrors("LogoutResponse", out.result)).toEqual([]);
    const text = readFileSync(file, "utf8");
    expect(text).not.toContain("sk-a");
    expect(text).toContain("sk-o");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect((await call(a, "session/new", { cwd: tmpdir(), mcpServers: [] })).error.code).toBe(-32000);
    // Idempotent: nothing stored is still a successful logout; no params is none; a wrong type is named.
    expect((await call(a, "logout", {})).result).toEqual({});
    expect((await call(a, "logout", undefined)).result).toEqual({});
    const bad = await call(a, "logout", { _meta: "x" });
    expect(bad.error.code).toBe(-32602);
    expect(bad.error.message).toContain("_meta");
  });

  test("logout of the last stored key removes the file", async () => {
    const { a, file } = agentWithKeys("openai");
    storeKey(file, "openai", { api_key: "sk-o" });
    await init(a);
    await call(a, "logout", {});
    expect(existsSync(file)).toBe(false);
  });
});
