// What the Anthropic adapter loads of its SDK: the base client and the two resources it calls
// (Messages, Models), not every resource of the API, which the SDK's default export builds with each
// client (loading and building them was ~3 ms of a one-answer `tendril prompt`). Measured on the bundle.
import { expect, test } from "bun:test";
import { join } from "node:path";
import { anthropicProvider } from "./anthropic.ts";
import { startFakeLlm } from "../../tests/fake-llm.ts";

/** The API paths (`/v1/NAME`) the code bundled from `entry` can request. */
async function apiPathsOf(entry: string): Promise<string[]> {
  const out = await Bun.build({ entrypoints: [entry], target: "bun", format: "esm", minify: true });
  expect(out.success).toBe(true);
  const text = (await Promise.all(out.outputs.map((o) => o.text()))).join("\n");
  return [...new Set([...text.matchAll(/["'`]\/v1\/([a-z_]+)/g)].map((m) => m[1]!))].sort();
}

test("the anthropic adapter bundles only the SDK resources it calls (messages, models)", async () => {
  const paths = await apiPathsOf(join(import.meta.dir, "anthropic.ts"));
  // `oauth`: the SDK's credential chain, part of the base client.
  expect(paths).toEqual(["messages", "models", "oauth"]);
}, 30_000);

test("the anthropic adapter lists models through its Models resource", async () => {
  const fake = await startFakeLlm();
  try {
    fake.setModels(["m-one", "m-two"]);
    const p = anthropicProvider({ apiKey: "k", baseUrl: fake.anthropicBaseUrl, maxRetries: 0, timeoutS: 5, maxResponseBytes: 1_000_000 });
    expect(await p.listModels!(AbortSignal.timeout(5_000))).toEqual(["m-one", "m-two"]);
    expect(fake.modelListings()).toBe(1);
  } finally {
    await fake.close();
  }
});
