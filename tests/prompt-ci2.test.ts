// End-to-end tests of `tendril prompt`'s CI flags through the built binary (issue 25, second part):
// --output-schema (exit 4), --resume / --continue, `cost` in the result, the grouped --help, against
// Tendril's own agent with the loopback fake LLM and against tests/fixtures/sdk-agent.ts, an agent
// built with the ACP SDK's agent app that shares none of Tendril's habits.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, type RunResult, runBinAsync } from "./binary.ts";
import { type FakeLlm, startFakeLlm } from "./fake-llm.ts";

const SDK_AGENT = `'${process.execPath}' '${join(ROOT, "tests", "fixtures", "sdk-agent.ts")}'`;
let work: string;
let counter = 0;
let fake: FakeLlm;
let verdictSchema: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "tendril-prompt-ci2-"));
  fake = await startFakeLlm();
  verdictSchema = join(work, "verdict.json");
  writeFileSync(
    verdictSchema,
    JSON.stringify({
      type: "object",
      properties: { verdict: { enum: ["approve", "reject"] }, reasons: { type: "array", items: { type: "string" } } },
      required: ["verdict"],
      additionalProperties: false,
    }),
  );
});
afterAll(async () => {
  await fake.close();
  rmSync(work, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = join(work, `ws-${++counter}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** `tendril prompt ARGS` without blocking this process (the fake LLM answers from here). */
function prompt(args: string[], env: Record<string, string> = {}): Promise<RunResult> {
  return runBinAsync(["prompt", ...args], {
    env: {
      ...(process.env as Record<string, string>),
      XDG_CONFIG_HOME: join(work, "config"),
      XDG_STATE_HOME: join(work, "state"),
      XDG_CACHE_HOME: join(work, "cache"),
      TENDRIL_LOG: "warn",
      TENDRIL_PROVIDER: "anthropic",
      TENDRIL_MODEL: "fake-model",
      ANTHROPIC_API_KEY: "test-key",
      ANTHROPIC_BASE_URL: fake.anthropicBaseUrl,
      SDK_AGENT_STATE: join(work, "sdk-agent-state"),
      ...env,
    },
    cwd: work,
    timeoutMs: 25_000,
  });
}

/** What the LLM was sent last, as one string (the conversation it saw). */
const lastMessages = () => JSON.stringify(fake.requests.at(-1)?.body?.messages ?? []);

describe("--output-schema against tendril agent", () => {
  test("a valid first answer: stdout is the document alone; the agent was asked for it, once", async () => {
    const before = fake.requests.length;
    fake.script([{ text: '{"verdict": "approve", "reasons": ["tests pass"]}' }]);
    const r = await prompt(["--cwd", freshDir(), "--output-schema", verdictSchema, "review this"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('{"verdict":"approve","reasons":["tests pass"]}\n');
    expect(fake.requests.length).toBe(before + 1);
    expect(lastMessages()).toContain("review this");
    expect(lastMessages()).toContain("one JSON document, valid against the JSON Schema below");
    expect(lastMessages()).toContain('\\"additionalProperties\\": false');
  });

  test("the last fenced block of a wordy answer is the document; json has it as `structured`", async () => {
    fake.script([{ text: 'Here you are:\n```json\n{"verdict": "draft"}\n```\nand finally:\n```json\n{"verdict": "reject"}\n```\nDone.' }]);
    const r = await prompt(["--cwd", freshDir(), "--output-schema", verdictSchema, "--output", "json", "review this"]);
    expect(r.code).toBe(0);
    const obj = JSON.parse(r.stdout);
    expect(obj).toMatchObject({ stopReason: "end_turn", structured: { verdict: "reject" }, numTurns: 1 });
    expect(obj.text).toContain("Here you are:");
  });

  test("an invalid answer is sent back once with the errors; the corrected one is used", async () => {
    fake.script([
      { text: '{"verdict": "maybe", "extra": 1}', usage: { input: 100, output: 10 } },
      { text: '{"verdict": "reject"}', usage: { input: 150, output: 5 } },
    ]);
    const file = join(freshDir(), "verdict.out");
    const r = await prompt(["--cwd", freshDir(), "--output-schema", verdictSchema, "--output", "stream-json", "-o", file, "review this"]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const retry = lines.find((l) => l.type === "schema_retry");
    expect(retry.problems).toEqual(['the document: must NOT have additional properties ("extra")', '/verdict: must be equal to one of the allowed values: "approve", "reject"']);
    const result = lines.at(-1);
    expect(result).toMatchObject({ type: "result", stopReason: "end_turn", text: '{"verdict": "reject"}', structured: { verdict: "reject" }, numTurns: 2 });
    expect(result.usage).toMatchObject({ inputTokens: 250, outputTokens: 15 });
    // The retry went to the same session: the LLM saw the first answer and the errors.
    expect(lastMessages()).toContain("maybe");
    expect(lastMessages()).toContain("must be equal to one of the allowed values");
    expect(readFileSync(file, "utf8")).toBe('{"verdict":"reject"}\n');
  });

  test("an answer that never satisfies the schema: exit 4 after one retry, the errors on stderr, nothing on stdout", async () => {
    fake.script([{ text: "I think it looks fine." }, { text: "```json\n{verdict: approve}\n```" }]);
    const file = join(freshDir(), "verdict.out");
    const r = await prompt(["--cwd", freshDir(), "--output-schema", verdictSchema, "-o", file, "review this"]);
    expect(r.code).toBe(4);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(
      /^tendril prompt: the answer does not satisfy --output-schema; asking once more:\n {2}the answer is not JSON, and it has no fenced block holding JSON\ntendril prompt: the answer does not satisfy --output-schema, asked twice:\n {2}the answer's last fenced block is not JSON: .+\n$/,
    );
    expect(readFileSync(file, "utf8")).toBe("");
  });

  test("A13: the document bounds are the run's limits (TENDRIL_MAX_OUTPUT_UNIQUE_ITEMS): past them, exit 4 naming the limit", async () => {
    const schema = join(work, "unique.json");
    writeFileSync(schema, JSON.stringify({ type: "object", properties: { ids: { type: "array", uniqueItems: true } } }));
    fake.script([{ text: '{"ids": [1, 2, 3, 4]}' }, { text: '{"ids": [5, 6, 7, 8]}' }]);
    const r = await prompt(["--cwd", freshDir(), "--output-schema", schema, "--timeout", "20", "review this"], { TENDRIL_MAX_OUTPUT_UNIQUE_ITEMS: "3" });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain("the document's arrays hold more than 3 items, more than uniqueItems is checked for (MAX_OUTPUT_UNIQUE_ITEMS)");
  });

  test("json output of a failed schema run: no `structured`, the error says why", async () => {
    fake.script([{ text: '{"verdict": 1}' }, { text: '{"verdict": 2}' }]);
    const r = await prompt(["--cwd", freshDir(), "--output-schema", verdictSchema, "--output", "json", "review this"]);
    expect(r.code).toBe(4);
    const obj = JSON.parse(r.stdout);
    expect(obj.structured).toBeUndefined();
    expect(obj.error).toBe('the answer does not satisfy --output-schema, asked twice:\n  /verdict: must be equal to one of the allowed values: "approve", "reject"');
  });

  test("formats are checked (date-time)", async () => {
    const schema = join(freshDir(), "when.json");
    writeFileSync(schema, JSON.stringify({ type: "object", properties: { when: { type: "string", format: "date-time" } }, required: ["when"] }));
    fake.script([{ text: '{"when": "yesterday"}' }, { text: '{"when": "2026-11-26T01:00:00Z"}' }]);
    const r = await prompt(["--cwd", freshDir(), "--output-schema", schema, "when?"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('/when: must match format "date-time"');
    expect(r.stdout).toBe('{"when":"2026-11-26T01:00:00Z"}\n');
  });

  test("the retry is a turn of its own: with --max-turns 1 it is cancelled (exit 5)", async () => {
    fake.script([{ text: "not json" }, { text: '{"verdict": "approve"}' }]);
    const r = await prompt(["--cwd", freshDir(), "--output-schema", verdictSchema, "--max-turns", "1", "--output", "json", "review this"]);
    expect(r.code).toBe(5);
    expect(JSON.parse(r.stdout)).toMatchObject({ stopReason: null, numTurns: 1 });
    expect(JSON.parse(r.stdout).structured).toBeUndefined();
    expect(fake.remaining()).toBe(0); // the retry was asked, then cancelled at its first update
  });

  const badSchemas: [string, string | undefined, RegExp][] = [
    ["missing", undefined, /^tendril prompt: --output-schema .*missing\.json: cannot read the file: ENOENT\n$/],
    ["not JSON", "{type: object}", /^tendril prompt: --output-schema .*not-json\.json is not JSON: .+\n$/],
    ["an array", "[1, 2]", /^tendril prompt: --output-schema .*an-array\.json is not a JSON Schema: a schema is an object \(or true\/false\)\n$/],
    ["a wrong keyword value", '{"type": "strin"}', /^tendril prompt: --output-schema .* is not a JSON Schema this validator accepts: type must be JSONType or JSONType\[\]: strin\n$/],
    ["data, not a schema", '{"name": "x", "version": 1}', /^tendril prompt: --output-schema .* is not a JSON Schema this validator accepts: strict mode: unknown keyword: "name"\n$/],
    ["an unknown draft", '{"$schema": "http://json-schema.org/draft-04/schema#"}', /^tendril prompt: --output-schema .*: \$schema "http:\/\/json-schema.org\/draft-04\/schema#" is not a draft this validator knows; use draft 2020-12 \(the default\), 2019-09 or draft-07\n$/],
  ];
  for (const [what, content, expected] of badSchemas) {
    test(`a schema file that is ${what}: exit 2 before any agent starts`, async () => {
      const file = join(freshDir(), `${what.toLowerCase().replace(/[^a-z]+/g, "-")}.json`);
      if (content !== undefined) writeFileSync(file, content);
      const before = fake.requests.length;
      const r = await prompt(["--output-schema", content === undefined ? join(work, "missing.json") : file, "hi"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(expected);
      expect(r.stdout).toBe("");
      expect(fake.requests.length).toBe(before);
    });
  }

  test("a draft-07 schema (tuple `items`) is compiled as draft-07", async () => {
    const schema = join(freshDir(), "pair.json");
    writeFileSync(schema, JSON.stringify({ $schema: "http://json-schema.org/draft-07/schema#", type: "array", items: [{ type: "string" }, { type: "integer" }] }));
    fake.script([{ text: '["a", 1]' }]);
    const r = await prompt(["--cwd", freshDir(), "--output-schema", schema, "pair?"]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe('["a",1]\n');
  });
});

describe("--resume and --continue against tendril agent", () => {
  async function firstRun(dir: string, words: string): Promise<string> {
    fake.script([{ text: "Noted." }]);
    const r = await prompt(["--cwd", dir, "--output", "json", words]);
    expect(r.code).toBe(0);
    return JSON.parse(r.stdout).sessionId as string;
  }

  test("--resume ID carries on that session: the LLM sees the earlier turn, the result names the session", async () => {
    const dir = freshDir();
    const id = await firstRun(dir, "remember the number 4711");
    fake.script([{ text: "4711" }]);
    const r = await prompt(["--cwd", dir, "--resume", id, "--output", "json", "which number?"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const obj = JSON.parse(r.stdout);
    expect(obj).toMatchObject({ sessionId: id, text: "4711" });
    expect(obj.cost).toBeUndefined(); // tendril agent reports no cost
    expect(lastMessages()).toContain("remember the number 4711");
    expect(lastMessages()).toContain("which number?");
  });

  test("--continue carries on the newest session of the workspace", async () => {
    const dir = freshDir();
    await firstRun(dir, "the colour is red");
    const newest = await firstRun(dir, "the colour is blue");
    await firstRun(freshDir(), "elsewhere: green"); // another workspace's session is newer still
    fake.script([{ text: "blue" }]);
    const r = await prompt(["--cwd", dir, "--continue", "--output", "json", "which colour?"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).sessionId).toBe(newest);
    expect(lastMessages()).toContain("the colour is blue");
    expect(lastMessages()).not.toContain("the colour is red");
    expect(lastMessages()).not.toContain("green");
  });

  test("A10: `/mode yolo` typed as a prompt does not outlive its run through --continue; `--mode` pins the mode", async () => {
    const dir = freshDir();
    const yolo = await prompt(["--cwd", dir, "--output", "json", "/mode yolo"]);
    expect(yolo.code).toBe(0);
    expect(JSON.parse(yolo.stdout).text).toContain("Mode: yolo.");
    // The next run carries the session on; its command is asked about, and the default ask-deny refuses it.
    const touch = (id: string) => [{ toolCalls: [{ id, name: "dev__shell", input: { command: "touch made-unasked" } }] }, { text: "done" }];
    fake.script(touch("t1"));
    const continued = await prompt(["--cwd", dir, "--continue", "--output", "json", "make the file"]);
    expect(continued.code).toBe(0);
    expect(existsSync(join(dir, "made-unasked"))).toBe(false);
    expect(lastMessages()).toContain("rejected by user");
    // A mode given on the command line is the run's: it is set after the session comes back.
    fake.script(touch("t2"));
    const pinned = await prompt(["--cwd", dir, "--continue", "--mode", "yolo", "--output", "json", "make the file"]);
    expect(pinned.code).toBe(0);
    expect(existsSync(join(dir, "made-unasked"))).toBe(true);
  });

  test("--resume of an id the agent does not know: exit 1 naming it", async () => {
    const before = fake.requests.length;
    const r = await prompt(["--cwd", freshDir(), "--resume", "no-such-session", "hi"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("tendril prompt: --resume no-such-session: the agent has no session no-such-session (it said: unknown session: no-such-session (no saved session with this id), code -32002)\n");
    expect(fake.requests.length).toBe(before);
  });

  test("--continue in a workspace without sessions: exit 1 naming it", async () => {
    const dir = freshDir();
    const r = await prompt(["--cwd", dir, "--continue", "hi"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`tendril prompt: --continue: the agent lists no session for ${dir}\n`);
  });

  test("--resume with --continue: exit 2, one line", async () => {
    const r = await prompt(["--resume", "x", "--continue", "hi"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("tendril prompt: --resume and --continue exclude each other: give one\n");
  });

  test("an empty --resume is a usage error", async () => {
    const r = await prompt(["--resume", "", "hi"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("tendril prompt: --resume must not be empty\n");
  });
});

describe("against an agent built with the ACP SDK's agent app", () => {
  const sdk = (args: string[]) => prompt(["--agent", SDK_AGENT, "--cwd", work, ...args]);

  test("its `agent` auth method is used; the result carries the cost it reports", async () => {
    const r = await sdk(["--output", "json", "say hello"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const obj = JSON.parse(r.stdout);
    expect(obj).toMatchObject({ stopReason: "end_turn", text: "hello", cost: { amount: 0.0125, currency: "USD" }, usage: { contextSize: 8000 } });
    expect(obj.usage.cost).toBeUndefined();
  });

  test("--mode goes through session/set_mode, --model through session/set_model, the system prompt through _meta", async () => {
    const r = await sdk(["--mode", "code", "--model", "large", "--append-system-prompt", "Be brief.", "status"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("mode code, model large, 0 earlier messages, system prompt: yes\n");
  });

  test("flags it cannot honour are refused with one clear line (exit 2)", async () => {
    const model = await sdk(["--model", "huge", "hi"]);
    expect(model.code).toBe(2);
    expect(model.stderr).toBe('tendril prompt: --model "huge" is not offered by the agent; it offers: small, large\n');
    const none = await prompt(["--agent", SDK_AGENT, "--cwd", work, "--model", "large", "hi"], { SDK_AGENT_MODELS: "0" });
    expect(none.code).toBe(2);
    expect(none.stderr).toBe("tendril prompt: --model: the agent offers no model choice\n");
    const mode = await sdk(["--mode", "turbo", "hi"]);
    expect(mode.code).toBe(2);
    expect(mode.stderr).toBe('tendril prompt: --mode "turbo" is not offered by the agent; it offers: ask, code\n');
    const cont = await sdk(["--continue", "hi"]);
    expect(cont.code).toBe(2);
    expect(cont.stderr).toBe("tendril prompt: --continue: the agent cannot list its sessions (it advertises no sessionCapabilities.list); give --resume ID\n");
  });

  test("--resume goes through session/load; its replayed history is not printed", async () => {
    const first = await sdk(["--output", "json", "say first answer"]);
    const id = JSON.parse(first.stdout).sessionId as string;
    const r = await sdk(["--resume", id, "--output", "stream-json", "status"]);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain("first answer");
    const result = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
    expect(result).toMatchObject({ sessionId: id, text: "mode ask, model small, 2 earlier messages, system prompt: no" });
  });

  test("--resume of an id it does not know: exit 1 naming it", async () => {
    const r = await sdk(["--resume", "sdk-gone", "hi"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("tendril prompt: --resume sdk-gone: the agent has no session sdk-gone (it said: Resource not found, code -32002)\n");
  });

  test("--output-schema: retried once in the same session, then exit 0 or 4", async () => {
    const fixed = await sdk(["--output-schema", verdictSchema, "--output", "json", 'say {"verdict": "later"} || {"verdict": "approve"}']);
    expect(fixed.code).toBe(0);
    expect(JSON.parse(fixed.stdout)).toMatchObject({ structured: { verdict: "approve" }, numTurns: 2, cost: { amount: 0.025, currency: "USD" } });
    const never = await sdk(["--output-schema", verdictSchema, "say no || still no"]);
    expect(never.code).toBe(4);
    expect(never.stderr).toEndWith("tendril prompt: the answer does not satisfy --output-schema, asked twice:\n  the answer is not JSON, and it has no fenced block holding JSON\n");
  });
});

describe("--help", () => {
  test("groups the flags as a CI author decides them, with every exit code", async () => {
    const r = await runBinAsync(["prompt", "--help"]);
    expect(r.code).toBe(0);
    const headings = r.stdout.split("\n").filter((l) => /^[A-Z][^:]*:$/.test(l));
    expect(headings).toEqual(["Arguments:", "What to ask:", "Which agent:", "What it may do:", "What you get back:", "Options:"]);
    const section = (h: string) => r.stdout.split(`${h}\n`)[1]!.split("\n\n")[0]!;
    expect(section("What to ask:")).toContain("--resume <ID>");
    expect(section("Which agent:")).toContain("--model <ID>");
    expect(section("What it may do:")).toContain("--max-turns <N>");
    expect(section("What you get back:")).toContain("--output-schema <FILE>");
    expect(r.stdout).toContain("4 the answer misses --output-schema");
  });
});
