// Owns the trace page as one self-contained HTML document: its markup, the trace's steps embedded as
// JSON that no string in a trace can break out of, and a Content-Security-Policy that lets only the
// page's own style and script run and nothing load from elsewhere (the live page may call back home).
// The page's style and script are trace-view-page.ts's; serving the live page is trace-serve.ts's.
import { createHash } from "node:crypto";
import { PAGE_SCRIPT, PAGE_STYLE } from "./trace-view-page.ts";
import type { TraceStep } from "./trace-steps.ts";

export interface PageData {
  /** What the page shows in its title: the trace file's name. */
  title: string;
  components?: string[];
  steps?: TraceStep[];
  /** The live page: steps arrive as server-sent events from `events`. */
  live?: boolean;
  /** The filters the page opens with (`--session`, `--method`). */
  filters?: { session?: string; method?: string };
  /** A line the page shows above the messages (a cut-short last line). */
  note?: string;
}

/**
 * JSON to sit inside a `<script type="application/json">`: `<`, `>` and `&` are written as JSON escapes,
 * so no `</script>` or `<!--` in a trace string ends the element; the parsed value is unchanged.
 */
export function embedJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

const escapes: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => escapes[c]!);
}

const hash = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;
let hashes: { script: string; style: string } | undefined;

/** The page's policy: its own script and style by hash, nothing else; the live page may read its events. */
export function pageCsp(live: boolean): string {
  hashes ??= { script: hash(PAGE_SCRIPT), style: hash(PAGE_STYLE) };
  return [
    "default-src 'none'",
    `script-src ${hashes.script}`,
    `style-src ${hashes.style}`,
    `connect-src ${live ? "'self'" : "'none'"}`,
    "img-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

/** The whole page. */
export function tracePage(data: PageData): string {
  const title = `trace ${data.title}`;
  const live = data.live === true;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(pageCsp(live))}">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>${PAGE_STYLE}</style>
</head>
<body>
<header>
<div class="bar">
<h1>${escapeHtml(title)}</h1>
${live ? '<span id="live">connecting</span>' : ""}
<span id="status"></span>
<label>session <select id="f-session"><option value="">all</option></select></label>
<label>method <input id="f-method" type="search" placeholder="glob (session/*) or part of a name" size="32"></label>
</div>
<div id="problems"></div>
<div class="row" id="lanes"><span class="t">t ms</span><span class="d"></span><span class="l"></span></div>
</header>
<main>
<div id="sheet"><div id="empty" hidden>no messages</div><div id="rows"></div></div>
<aside id="detail" hidden></aside>
</main>
<script type="application/json" id="trace-data">${embedJson({ ...data, live })}</script>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
}
