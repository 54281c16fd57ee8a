// Owns the OpenAI Responses API mapping: history → input items (reasoning items carried back
// encrypted, `store: false`), and the response event stream → LlmEvents. Imports only the SDK's
// types: openai.ts is the one module loading the SDK, and drives both its APIs through one client.
import type OpenAI from "openai";
import { FrameCache, ItemCache, joinBody, splitFrame } from "./body-text.ts";
import { parseToolInput } from "./http-edge.ts";
import type { LlmEvent, LlmRequest, Message, StopReason, ToolResult, Usage } from "./types.ts";

type Item = OpenAI.Responses.ResponseInputItem;
type Event = OpenAI.Responses.ResponseStreamEvent;
type Body = OpenAI.Responses.ResponseCreateParamsStreaming;

/** Neither OpenAI API has an error flag on tool output; the model learns of the failure from the text. */
export const TOOL_ERROR_PREFIX = "[tool error] ";

export function toolResultText(r: ToolResult): string {
  return r.isError && !r.content.startsWith(TOOL_ERROR_PREFIX) ? TOOL_ERROR_PREFIX + r.content : r.content;
}

export const dataUrl = (i: { mimeType: string; data: string }) => `data:${i.mimeType};base64,${i.data}`;

function toItems(m: Message): Item[] {
  if (m.role === "user") {
    const only = m.content.length === 1 && m.content[0]!.type === "text" ? m.content[0]!.text : undefined;
    if (only !== undefined) return [{ role: "user", content: only }];
    return [
      {
        role: "user",
        content: m.content.map((p): OpenAI.Responses.ResponseInputContent =>
          p.type === "text" ? { type: "input_text", text: p.text } : { type: "input_image", image_url: dataUrl(p), detail: "auto" },
        ),
      },
    ];
  }
  if (m.role === "assistant") {
    const out: Item[] = [];
    // Only this API's reasoning goes back, without its id: with `store: false` the server keeps no
    // item to look an id up by, so the encrypted content is what carries the reasoning.
    for (const r of m.reasoning ?? []) {
      if (!("encrypted" in r)) continue;
      out.push({ type: "reasoning", summary: r.summary.map((text) => ({ type: "summary_text" as const, text })), encrypted_content: r.encrypted } as Item);
    }
    // Items need not alternate here: an answer that said nothing sends no empty message.
    if (m.text !== "") out.push({ role: "assistant", content: m.text });
    for (const c of m.toolCalls) out.push({ type: "function_call", call_id: c.id, name: c.name, arguments: JSON.stringify(c.input) });
    return out;
  }
  return m.results.map((r): Item => {
    const text = toolResultText(r);
    if (!r.images?.length) return { type: "function_call_output", call_id: r.callId, output: text };
    return {
      type: "function_call_output",
      call_id: r.callId,
      output: [{ type: "input_text", text: text || "(image)" }, ...r.images.map((i) => ({ type: "input_image" as const, image_url: dataUrl(i), detail: "auto" as const }))],
    };
  });
}

/** The request body; `cacheKey` says whether `prompt_cache_key` goes out (openai.ts decides per endpoint). */
export function toResponsesBody(req: LlmRequest, cacheKey: boolean): Body {
  const input: Item[] = [];
  for (const m of req.messages) input.push(...toItems(m));
  const body: Body = {
    model: req.model,
    input,
    stream: true,
    // Nothing is kept server-side: the whole conversation is sent each time, reasoning included.
    store: false,
    include: ["reasoning.encrypted_content"],
    max_output_tokens: req.maxTokens,
  };
  if (req.system !== "") body.instructions = req.system;
  // `off` sends nothing: models without reasoning refuse the field, and the others keep their default.
  if (req.thoughtLevel !== undefined && req.thoughtLevel !== "off") body.reasoning = { effort: req.thoughtLevel, summary: "auto" };
  if (req.tools.length > 0) {
    body.tools = req.tools.map((t) => ({ type: "function" as const, name: t.name, description: t.description, parameters: t.inputSchema, strict: false }));
  }
  if (cacheKey && req.cacheKey) body.prompt_cache_key = req.cacheKey;
  return body;
}

/** The Responses body as text, byte for byte `JSON.stringify(toResponsesBody(req, cacheKey))`,
 *  serializing only what is new (body-text.ts). */
export class ResponsesBodyWriter {
  readonly #items = new ItemCache<string[]>();
  readonly #frames = new FrameCache();

  constructor(private readonly cacheKey: boolean) {}

  text(req: LlmRequest): string {
    const frame = this.#frames.of(req, () => splitFrame(JSON.stringify(toResponsesBody({ ...req, messages: [] }, this.cacheKey)), `{"model":${JSON.stringify(req.model)},"input":[`));
    const items: string[] = [];
    for (const m of req.messages) for (const i of this.#items.of(m, undefined, (x) => toItems(x).map((q) => JSON.stringify(q)))) items.push(i);
    return joinBody(frame, items);
  }
}

/** OpenAI's token counts (both APIs count cache reads and writes inside the input total) as Usage,
 *  whose inputTokens is the uncached part. */
export function openAiUsage(input: number, output: number, cached: number, written: number): Usage {
  const usage: Usage = { inputTokens: Math.max(0, input - cached - written), outputTokens: output };
  if (cached) usage.cacheReadTokens = cached;
  if (written) usage.cacheWriteTokens = written;
  return usage;
}

function responsesUsage(u: OpenAI.Responses.ResponseUsage | undefined): Usage {
  const details = u?.input_tokens_details;
  return openAiUsage(u?.input_tokens ?? 0, u?.output_tokens ?? 0, details?.cached_tokens ?? 0, details?.cache_write_tokens ?? 0);
}

const INCOMPLETE: Record<string, StopReason> = { max_output_tokens: "max_tokens", content_filter: "refusal" };

/** Folds Responses stream events into text/thinking/tool_call events; `done` once the response ends. */
export class ResponsesFold {
  usage: Usage = { inputTokens: 0, outputTokens: 0 };
  complete = false;
  private stop: StopReason = "end_turn";
  private calls = 0;
  private refused = false;
  /** Streamed function-call arguments by item id (used when the finished item carries none). */
  private args = new Map<string, string>();
  /** The reasoning summary part last streamed, so parts are separated by a blank line. */
  private summaryAt: string | undefined;

  *push(ev: Event): Generator<LlmEvent> {
    switch (ev.type) {
      case "response.output_text.delta":
        if (ev.delta !== "") yield { type: "text", text: ev.delta };
        break;
      case "response.refusal.delta":
        this.refused = true;
        if (ev.delta !== "") yield { type: "text", text: ev.delta };
        break;
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta": {
        const at = `${ev.item_id}:${"summary_index" in ev ? ev.summary_index : ev.content_index}`;
        const sep = this.summaryAt !== undefined && this.summaryAt !== at ? "\n\n" : "";
        this.summaryAt = at;
        if (ev.delta !== "") yield { type: "thinking", text: sep + ev.delta };
        break;
      }
      case "response.function_call_arguments.delta":
        this.args.set(ev.item_id, (this.args.get(ev.item_id) ?? "") + ev.delta);
        break;
      case "response.output_item.done":
        yield* this.itemDone(ev.item);
        break;
      case "response.completed":
      case "response.incomplete":
        this.usage = responsesUsage(ev.response.usage);
        this.complete = true;
        if (ev.type === "response.incomplete") this.stop = INCOMPLETE[ev.response.incomplete_details?.reason ?? ""] ?? "other";
        else if (this.calls > 0) this.stop = "tool_use";
        else if (this.refused) this.stop = "refusal";
        break;
      case "response.failed": {
        const e = ev.response.error;
        throw new Error(`the response failed${e ? `: ${e.code}: ${e.message}` : ""}`);
      }
      case "error":
        throw new Error(`${ev.code ? `${ev.code}: ` : ""}${ev.message}`);
    }
  }

  private *itemDone(item: OpenAI.Responses.ResponseOutputItem): Generator<LlmEvent> {
    if (item.type === "function_call") {
      this.calls++;
      const args = item.arguments || this.args.get(item.id ?? "") || "";
      yield { type: "tool_call", call: { id: item.call_id || item.id || `call_${this.calls}`, name: item.name, input: parseToolInput(args) } };
    } else if (item.type === "reasoning" && item.encrypted_content) {
      yield { type: "thinking", text: "", encrypted: item.encrypted_content, summary: item.summary.map((s) => s.text) };
    }
  }

  *finish(): Generator<LlmEvent> {
    yield { type: "done", stopReason: this.stop, usage: this.usage };
  }
}
