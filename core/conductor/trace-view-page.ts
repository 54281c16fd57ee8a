// Owns the trace page's own style and script, as text: lanes, one row per step with its arrow, the
// filters (session, method), the JSON of a clicked step, and in the live page the events that add,
// reset and report. The script builds every element with textContent (never markup from the trace).
// Assembling the page and embedding the data is trace-view.ts's; what a step is, trace-steps.ts's.

/** Width of one lane and height of one row in px (the style and the script agree through these). */
const LANE_PX = 132;
const ROW_PX = 22;

export const PAGE_STYLE = `
:root { --dw: ${LANE_PX * 3}px; font: 13px/1.35 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; color: #1d1f21; }
body { margin: 0; }
header { position: sticky; top: 0; background: #f6f7f9; border-bottom: 1px solid #d0d4da; z-index: 2; }
.bar { display: flex; gap: 12px; align-items: center; padding: 6px 10px; flex-wrap: wrap; }
.bar h1 { font-size: 14px; margin: 0; font-weight: 600; }
.bar label { display: flex; gap: 4px; align-items: center; }
.bar input, .bar select { font: inherit; }
#status { color: #555; }
#live { color: #2a7a2a; }
#live.down { color: #a33; }
.row { display: flex; align-items: center; height: ${ROW_PX}px; white-space: nowrap; cursor: pointer; }
#rows { position: relative; }
#rows .row { position: absolute; left: 0; min-width: 100%; width: max-content; }
.row:hover { background: #eef3fb; }
.row.sel { background: #dce8fa; }
.t { width: 84px; flex: none; text-align: right; padding-right: 8px; color: #666; }
.d { width: var(--dw); flex: none; height: 100%; position: relative;
  background-image: repeating-linear-gradient(to right, transparent 0 ${LANE_PX / 2 - 1}px, #c3c8cf ${LANE_PX / 2 - 1}px ${LANE_PX / 2}px, transparent ${LANE_PX / 2}px ${LANE_PX}px); }
.l { flex: 1 0 360px; overflow: hidden; text-overflow: ellipsis; padding-left: 8px; }
.l b { font-weight: 600; }
.l .as, .l .took { color: #777; }
#lanes { height: 26px; cursor: default; }
#lanes:hover { background: none; }
#lanes .d { background: none; }
.lane { position: absolute; top: 3px; width: ${LANE_PX - 8}px; box-sizing: border-box; overflow: hidden; text-overflow: ellipsis; text-align: center;
  background: #fff; border: 1px solid #c3c8cf; border-radius: 3px; padding: 1px 2px; }
.arrow { position: absolute; top: 10px; height: 0; border-top: 2px solid currentColor; }
.arrow::before { content: ""; position: absolute; top: -5px; width: 6px; height: 6px; border-radius: 50%; background: currentColor; }
.arrow::after { content: ""; position: absolute; top: -7px; border: 6px solid transparent; }
.arrow.right::before { left: -3px; }
.arrow.right::after { right: -4px; border-left: 8px solid currentColor; border-right: 0; }
.arrow.left::before { right: -3px; }
.arrow.left::after { left: -4px; border-right: 8px solid currentColor; border-left: 0; }
.k-req { color: #1b5fae; } .k-res { color: #2a7a2a; } .k-err { color: #b22; } .k-note { color: #666; }
.row .l { color: #1d1f21; }
main { display: flex; align-items: flex-start; }
#sheet { flex: 1; min-width: 0; overflow-x: auto; }
#detail { position: sticky; top: 80px; width: 40%; flex: none; max-height: calc(100vh - 96px); overflow: auto; margin: 8px; border: 1px solid #d0d4da;
  background: #fbfbfc; padding: 8px; box-sizing: border-box; }
#detail[hidden] { display: none; }
#detail h2 { font-size: 13px; margin: 0 0 6px; }
#detail .close { float: right; font: inherit; border: 0; background: none; cursor: pointer; padding: 0 4px; }
#detail pre { margin: 0 0 10px; white-space: pre-wrap; word-break: break-all; }
#empty { padding: 24px; color: #666; }
#problems { color: #b22; padding: 0 10px; }
`;

// Plain ES2017 in a string: it runs in the browser as it is (no build step), so no template literals.
// Rows are drawn only where the window looks (a trace can hold 100,000 messages): `view` lists the
// steps the filters keep, and the rows container is as tall as all of them.
export const PAGE_SCRIPT = `
(function () {
  "use strict";
  var LANE = ${LANE_PX};
  var ROW = ${ROW_PX};
  var OVERSCAN = 40;
  var data = JSON.parse(document.getElementById("trace-data").textContent);
  var components = data.components || [];
  var laneCount = 0;
  var steps = [];
  var view = [];
  var sessionsSeen = {};
  var selected = -1;
  var drawn = "";
  var rows = document.getElementById("rows");
  var lanesRow = document.getElementById("lanes");
  var detail = document.getElementById("detail");
  var empty = document.getElementById("empty");
  var status = document.getElementById("status");
  var problems = document.getElementById("problems");
  var fSession = document.getElementById("f-session");
  var fMethod = document.getElementById("f-method");
  var filter = { session: "", method: null };

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function laneIndex(l) { return l === "client" ? 0 : l === "conductor" ? 1 : 2 + Number(l); }
  function laneName(i) {
    if (i === 0) return "client";
    if (i === 1) return "conductor";
    var n = i - 2;
    return "#" + n + (typeof components[n] === "string" ? " " + components[n] : "");
  }
  function drawLanes(count) {
    count = Math.max(count, 2 + components.length);
    if (count <= laneCount) return;
    laneCount = count;
    document.documentElement.style.setProperty("--dw", count * LANE + "px");
    var d = lanesRow.querySelector(".d");
    d.textContent = "";
    for (var i = 0; i < count; i++) {
      var name = laneName(i);
      var lane = el("span", "lane", name);
      lane.title = name;
      lane.setAttribute("data-lane", String(i));
      lane.style.left = i * LANE + 4 + "px";
      d.appendChild(lane);
    }
  }

  function globRe(g) {
    var out = "";
    for (var i = 0; i < g.length; i++) {
      var c = g[i];
      if (c === "*") { if (g[i + 1] === "*") { out += ".*"; i++; } else out += "[^/]*"; }
      else if (c === "?") out += "[^/]";
      else out += c.replace(/[.+^$(){}|[\\]\\\\]/g, "\\\\$&");
    }
    return new RegExp("^" + out + "$");
  }
  function readFilters() {
    filter.session = fSession.value;
    var m = fMethod.value.trim();
    if (!m) filter.method = null;
    else if (/[*?]/.test(m)) { var re = globRe(m); filter.method = function (x) { return re.test(x); }; }
    else filter.method = function (x) { return x.indexOf(m) !== -1; };
  }
  function shown(s) {
    if (filter.session && s.session !== filter.session) return false;
    if (filter.method && !filter.method(s.method || "")) return false;
    return true;
  }
  function applyFilters() {
    readFilters();
    view = [];
    for (var i = 0; i < steps.length; i++) if (shown(steps[i])) view.push(i);
    layout();
  }
  function layout() {
    rows.style.height = view.length * ROW + "px";
    status.textContent = steps.length + " messages" + (view.length !== steps.length ? ", " + view.length + " shown" : "");
    empty.hidden = steps.length !== 0;
    drawn = "";
    draw();
  }

  function addSession(id) {
    if (typeof id !== "string" || sessionsSeen[id]) return;
    sessionsSeen[id] = true;
    var o = el("option", null, id);
    o.value = id;
    fSession.appendChild(o);
    if (id === filter.session) fSession.value = id;
  }

  function rowOf(i, at) {
    var s = steps[i];
    var r = el("div", "row k-" + s.kind + (i === selected ? " sel" : ""));
    r.setAttribute("data-i", String(i));
    r.tabIndex = 0;
    r.style.top = at * ROW + "px";
    r.appendChild(el("span", "t", Number(s.t).toFixed(2)));
    var d = el("span", "d");
    var a = laneIndex(s.from), b = laneIndex(s.to);
    var arrow = el("span", "arrow " + (a <= b ? "right" : "left"));
    arrow.style.left = Math.min(a, b) * LANE + LANE / 2 + "px";
    arrow.style.width = Math.max(Math.abs(b - a) * LANE, 4) + "px";
    d.appendChild(arrow);
    r.appendChild(d);
    var l = el("span", "l");
    var name = s.kind === "res" ? "\\u21a9 " : s.kind === "err" ? "\\u2717 " : "";
    name += s.method || "?";
    if ((s.kind === "req" || s.kind === "note") && s.id !== undefined) name += " #" + s.id;
    l.appendChild(el("b", null, name));
    if (s.as) l.appendChild(el("span", "as", " [" + s.as + "]"));
    if (s.summary) l.appendChild(document.createTextNode("  " + s.summary));
    if (s.took !== undefined) l.appendChild(el("span", "took", "  (" + Number(s.took).toFixed(2) + " ms)"));
    r.appendChild(l);
    return r;
  }
  /** The rows the window shows (and OVERSCAN more each side), redrawn when that range changes. */
  function draw() {
    var top = rows.getBoundingClientRect().top;
    var first = Math.max(0, Math.floor(-top / ROW) - OVERSCAN);
    var last = Math.min(view.length, Math.ceil((window.innerHeight - top) / ROW) + OVERSCAN);
    var key = first + ":" + last;
    if (key === drawn) return;
    drawn = key;
    var frag = document.createDocumentFragment();
    for (var k = first; k < last; k++) frag.appendChild(rowOf(view[k], k));
    rows.textContent = "";
    rows.appendChild(frag);
  }
  var pending = false;
  function drawSoon() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () { pending = false; draw(); });
  }
  window.addEventListener("scroll", drawSoon);
  window.addEventListener("resize", drawSoon);

  function select(i) {
    selected = i;
    var rs = rows.querySelectorAll(".row");
    for (var k = 0; k < rs.length; k++) rs[k].classList.toggle("sel", rs[k].getAttribute("data-i") === String(i));
  }
  function hideDetail() {
    detail.hidden = true;
    select(-1);
  }
  function show(i) {
    var s = steps[i];
    if (!s) return;
    select(i);
    detail.textContent = "";
    detail.hidden = false;
    var close = el("button", "close", "\\u00d7");
    close.title = "close (Esc)";
    close.addEventListener("click", hideDetail);
    detail.appendChild(close);
    detail.appendChild(el("h2", null, laneName(laneIndex(s.from)) + " \\u2192 " + laneName(laneIndex(s.to)) + " at " + Number(s.t).toFixed(2) + " ms"));
    detail.appendChild(el("pre", "json", JSON.stringify(s.message, null, 2)));
    if (s.routed !== undefined) {
      detail.appendChild(el("h2", null, "as written to " + laneName(laneIndex(s.to))));
      detail.appendChild(el("pre", "json routed", JSON.stringify(s.routed, null, 2)));
    }
  }
  rows.addEventListener("click", function (e) {
    var r = e.target.closest(".row");
    if (r) show(Number(r.getAttribute("data-i")));
  });
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape") hideDetail();
  });
  // the lanes' names sit outside the sheet: they follow its sideways scroll
  var sheet = document.getElementById("sheet");
  sheet.addEventListener("scroll", function () { lanesRow.style.transform = "translateX(" + -sheet.scrollLeft + "px)"; });
  rows.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && e.target.classList.contains("row")) show(Number(e.target.getAttribute("data-i")));
  });

  function add(list) {
    if (list.length === 0) return;
    var atBottom = data.live && window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 4;
    var most = laneCount;
    for (var i = 0; i < list.length; i++) {
      var s = list[i];
      steps.push(s);
      addSession(s.session);
      most = Math.max(most, laneIndex(s.from) + 1, laneIndex(s.to) + 1);
      if (shown(s)) view.push(steps.length - 1);
    }
    drawLanes(most);
    layout();
    if (atBottom) window.scrollTo(0, document.documentElement.scrollHeight);
  }
  function reset() {
    steps = [];
    view = [];
    components = [];
    laneCount = 0;
    drawLanes(2);
    detail.hidden = true;
    selected = -1;
    problems.textContent = "";
    layout();
  }
  function problem(text) {
    problems.appendChild(el("div", null, text));
  }

  fSession.addEventListener("change", applyFilters);
  fMethod.addEventListener("input", applyFilters);
  if (data.filters && data.filters.method) fMethod.value = data.filters.method;
  if (data.filters && data.filters.session) { addSession(data.filters.session); fSession.value = data.filters.session; }
  readFilters();
  drawLanes(2);
  layout();
  if (data.note) problem(data.note);

  if (!data.live) {
    add(data.steps || []);
    document.body.setAttribute("data-ready", "true");
    return;
  }
  var live = document.getElementById("live");
  var es = new EventSource("events");
  es.addEventListener("open", function () { live.textContent = "live"; live.className = ""; });
  es.addEventListener("error", function () { live.textContent = "disconnected, retrying"; live.className = "down"; });
  es.addEventListener("reset", function () { reset(); });
  es.addEventListener("meta", function (e) { components = JSON.parse(e.data).components || []; laneCount = 0; drawLanes(2); });
  es.addEventListener("steps", function (e) { add(JSON.parse(e.data)); });
  es.addEventListener("problem", function (e) { problem(JSON.parse(e.data).message); });
  es.addEventListener("ready", function () { document.body.setAttribute("data-ready", "true"); });
})();
`;
