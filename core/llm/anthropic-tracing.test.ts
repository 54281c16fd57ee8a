// The Anthropic client starts no OpenTelemetry span per request: nothing in Tendril installs a tracer,
// so a span per request was work for nobody (a few per cent of a tool round trip's CPU).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { INVALID_SPAN_CONTEXT, type Span, type Tracer, type TracerProvider, trace } from "@opentelemetry/api";
import { type FakeLlm, startFakeLlm } from "../../tests/fake-llm.ts";
import { anthropicProvider } from "./anthropic.ts";

let fake: FakeLlm;
beforeAll(async () => void (fake = await startFakeLlm()));
afterAll(() => fake.close());

test("the Anthropic client starts no OpenTelemetry span per request, even with a tracer installed", async () => {
  const started: string[] = [];
  const span = (name: string): Span => (started.push(name), trace.wrapSpanContext(INVALID_SPAN_CONTEXT));
  const counting: TracerProvider = {
    getTracer: (): Tracer => ({
      startSpan: span,
      startActiveSpan: ((name: string, ...rest: unknown[]) => (rest.at(-1) as (s: Span) => unknown)(span(name))) as Tracer["startActiveSpan"],
    }),
  };
  expect(trace.setGlobalTracerProvider(counting)).toBe(true);
  try {
    fake.script([{ text: "hi" }]);
    const provider = anthropicProvider({ apiKey: "k", baseUrl: fake.anthropicBaseUrl, maxResponseBytes: 1 << 20, timeoutS: 10, maxRetries: 0 });
    let text = "";
    let last = "";
    const req = { model: "m", system: "s", messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "q" }] }], tools: [], maxTokens: 100, signal: new AbortController().signal };
    for await (const ev of provider.stream(req)) (last = ev.type), ev.type === "text" && (text += ev.text);
    expect({ text, last }).toEqual({ text: "hi", last: "done" });
    expect(started).toEqual([]);
  } finally {
    trace.disable();
  }
});
