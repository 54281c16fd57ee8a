// When the provider's model list is asked for: with none configured and "eager", one event-loop turn
// after the agent starts (not while it builds, before an `initialize` waiting on stdin is answered),
// and still before any session needs the choices.
import { expect, test } from "bun:test";
import type { LlmProvider } from "../llm/types.ts";
import { ModelChoices } from "./model-choice.ts";

function listing(ids: string[]): { provider: LlmProvider; asked: () => number } {
  let asked = 0;
  const provider = {
    name: "fake",
    thoughtLevels: false,
    stream: () => (async function* () {})(),
    listModels: async () => (asked++, ids),
  } as unknown as LlmProvider;
  return { provider, asked: () => asked };
}

test("an eager model list is asked for one event-loop turn after start-up, not while the agent builds", async () => {
  const { provider, asked } = listing(["b", "a"]);
  const models = new ModelChoices([], provider, 5, "eager");
  expect(asked()).toBe(0);
  await new Promise((r) => setTimeout(r, 0));
  await Promise.resolve();
  expect(asked()).toBe(1);
  expect(await models.choices("a")).toEqual(["a", "b"]);
  expect(asked()).toBe(1);
});

test("choices asked for before that turn wait for the eager list", async () => {
  const { provider, asked } = listing(["m2", "m1"]);
  const models = new ModelChoices([], provider, 5, "eager");
  expect(await models.choices("m0")).toEqual(["m0", "m1", "m2"]);
  expect(asked()).toBe(1);
});

test("an on-demand list is not asked for until another model is named", async () => {
  const { provider, asked } = listing(["x"]);
  const models = new ModelChoices([], provider, 5, "on-demand");
  await new Promise((r) => setTimeout(r, 5));
  expect(asked()).toBe(0);
  expect(await models.check("x", "y")).toBe("x");
  expect(asked()).toBe(1);
});
