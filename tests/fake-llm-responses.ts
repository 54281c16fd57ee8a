// Owns the fake LLM's OpenAI Responses wire shapes: one scripted turn as the Responses event stream
// (the event names and fields of the `openai` package's ResponseStreamEvent) or as one JSON response.
// Reasoning comes back as a reasoning item whose encrypted_content is derived from its text.
import type OpenAI from "openai";
import type { ResolvedTurn, SseEvent } from "./fake-llm-wire.ts";
import { chunkText } from "./fake-llm-wire.ts";

/** What the fake puts in a reasoning item's encrypted_content for a given reasoning text. */
export function fakeEncrypted(thinking: string): string {
  return `enc_${Buffer.from(thinking).toString("base64")}`;
}

function usage(t: ResolvedTurn): object {
  return {
    input_tokens: t.usage.input,
    input_tokens_details: { cached_tokens: t.usage.cached ?? 0 },
    output_tokens: t.usage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: t.usage.input + t.usage.output,
  };
}

/** The finished output items, in stream order (reasoning, message, function calls). */
function outputItems(t: ResolvedTurn, encrypted: boolean): object[] {
  const items: object[] = [];
  if (t.thinking) {
    items.push({ id: "rs_fake_1", type: "reasoning", summary: [{ type: "summary_text", text: t.thinking }], ...(encrypted ? { encrypted_content: fakeEncrypted(t.thinking) } : {}) });
  }
  if (t.text) {
    const part = t.stopReason === "refusal" ? { type: "refusal", refusal: t.text } : { type: "output_text", text: t.text, annotations: [], logprobs: [] };
    items.push({ id: "msg_fake_1", type: "message", role: "assistant", status: "completed", content: [part] });
  }
  t.toolCalls.forEach((c, i) => {
    items.push({ id: `fc_fake_${i + 1}`, type: "function_call", call_id: c.id, name: c.name, arguments: JSON.stringify(c.input), status: "completed" });
  });
  return items;
}

function response(t: ResolvedTurn, status: "in_progress" | "completed" | "incomplete", output: object[]): Record<string, unknown> {
  const r: Record<string, unknown> = {
    id: "resp_fake",
    object: "response",
    created_at: 0,
    status,
    model: t.model,
    output,
    error: null,
    incomplete_details: null,
    instructions: null,
    metadata: {},
    parallel_tool_calls: true,
    temperature: null,
    tool_choice: "auto",
    tools: [],
    top_p: null,
  };
  if (status === "incomplete") r.incomplete_details = { reason: "max_output_tokens" };
  if (status !== "in_progress") r.usage = usage(t);
  return r;
}

/** The event stream for one turn. `encrypted`: the request asked for reasoning.encrypted_content. */
export function responsesEvents(t: ResolvedTurn, encrypted: boolean): SseEvent[] {
  const out: SseEvent[] = [];
  let seq = 0;
  // Event names are checked against the SDK's own union, so a misspelt one does not compile.
  const ev = (type: OpenAI.Responses.ResponseStreamEvent["type"], body: Record<string, unknown>) => out.push({ event: type, data: JSON.stringify({ type, sequence_number: seq++, ...body }) });
  ev("response.created", { response: response(t, "in_progress", []) });
  ev("response.in_progress", { response: response(t, "in_progress", []) });
  const items = outputItems(t, encrypted) as ({ id: string; type: string } & Record<string, any>)[];
  items.forEach((item, output_index) => {
    const ids = { item_id: item.id, output_index };
    if (item.type === "reasoning") {
      ev("response.output_item.added", { output_index, item: { id: item.id, type: "reasoning", summary: [] } });
      ev("response.reasoning_summary_part.added", { ...ids, summary_index: 0, part: { type: "summary_text", text: "" } });
      for (const delta of chunkText(t.thinking)) ev("response.reasoning_summary_text.delta", { ...ids, summary_index: 0, delta });
      ev("response.reasoning_summary_text.done", { ...ids, summary_index: 0, text: t.thinking });
      ev("response.reasoning_summary_part.done", { ...ids, summary_index: 0, part: { type: "summary_text", text: t.thinking } });
    } else if (item.type === "message") {
      const part = item.content[0];
      const refusal = part.type === "refusal";
      ev("response.output_item.added", { output_index, item: { ...item, status: "in_progress", content: [] } });
      ev("response.content_part.added", { ...ids, content_index: 0, part: refusal ? { type: "refusal", refusal: "" } : { type: "output_text", text: "", annotations: [], logprobs: [] } });
      for (const delta of chunkText(t.text)) ev(refusal ? "response.refusal.delta" : "response.output_text.delta", { ...ids, content_index: 0, delta, ...(refusal ? {} : { logprobs: [] }) });
      ev(refusal ? "response.refusal.done" : "response.output_text.done", { ...ids, content_index: 0, ...(refusal ? { refusal: t.text } : { text: t.text, logprobs: [] }) });
      ev("response.content_part.done", { ...ids, content_index: 0, part });
    } else {
      ev("response.output_item.added", { output_index, item: { ...item, arguments: "", status: "in_progress" } });
      for (const delta of chunkText(item.arguments)) ev("response.function_call_arguments.delta", { ...ids, delta });
      ev("response.function_call_arguments.done", { ...ids, arguments: item.arguments });
    }
    ev("response.output_item.done", { output_index, item });
  });
  const end = t.stopReason === "max_tokens" ? "incomplete" : "completed";
  ev(end === "completed" ? "response.completed" : "response.incomplete", { response: response(t, end, items) });
  return out;
}

/** The same turn as one non-streamed response. */
export function responsesJson(t: ResolvedTurn, encrypted: boolean): object {
  return response(t, t.stopReason === "max_tokens" ? "incomplete" : "completed", outputItems(t, encrypted));
}
