// The teaching page's JavaScript: it loads the Go WebAssembly (package lab
// behind bsdemoCall), wires the controls and draws what Go returns. It
// computes no batch, graph or metric itself.
"use strict";

const $ = (id) => document.getElementById(id);
const KIND_NAME = { uniform: "Uniform", knn: "kNN Sampler", batchsampler: "BatchSampler" };
// Sampler colours (Okabe–Ito black, vermillion, blue) and line dashes, so
// that the three stay apart in any colour vision.
const KIND_COL = { uniform: "#444444", knn: "#d55e00", batchsampler: "#0072b2" };
const KIND_DASH = { uniform: [6, 4], knn: [2, 3], batchsampler: [] };
const MEASURE_BATCHES = 50;

const S = {
  data: null, batch: null, pos: null, playing: null, scatter: [], scatterKey: "",
  hists: {}, train: null, firstRender: false, busy: false,
};

function call(method, arg) {
  const r = globalThis.bsdemoCall(method, JSON.stringify(arg === undefined ? {} : arg));
  if (r.error) throw new Error(r.error);
  return JSON.parse(r.ok);
}

function status(msg, isError) {
  const el = $("status");
  el.textContent = msg;
  el.classList.toggle("error", !!isError);
  if (isError) console.warn(msg); // shown on the page; not a console error
}

function guard(f) {
  return (...a) => {
    try { return f(...a); } catch (e) { status(e.message, true); }
  };
}

// ---------- loading the WebAssembly ----------

function loadScript(src) {
  return new Promise((ok, fail) => {
    const s = document.createElement("script");
    s.src = src;
    s.onload = ok;
    s.onerror = () => fail(new Error("could not load " + src));
    document.head.appendChild(s);
  });
}

async function loadWasm() {
  const go = new Go();
  const ready = new Promise((ok) => { globalThis.bsdemoReady = ok; });
  let instance;
  if (location.protocol === "file:") {
    // Browsers refuse fetch() of file:// URLs: the same bytes come in a script.
    await loadScript("main.wasm.js");
    const bin = atob(globalThis.BSDEMO_WASM_BASE64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    delete globalThis.BSDEMO_WASM_BASE64;
    instance = (await WebAssembly.instantiate(bytes, go.importObject)).instance;
  } else {
    const resp = await fetch("main.wasm");
    if (!resp.ok) throw new Error("main.wasm: HTTP " + resp.status);
    const ct = resp.headers.get("Content-Type") || "";
    if (ct.startsWith("application/wasm")) {
      instance = (await WebAssembly.instantiateStreaming(resp, go.importObject)).instance;
    } else {
      instance = (await WebAssembly.instantiate(await resp.arrayBuffer(), go.importObject)).instance;
    }
  }
  go.run(instance);
  await ready;
}

// ---------- settings ----------

function sampler() { return document.querySelector("input[name=sampler]:checked").value; }

function settings() {
  return {
    sampler: sampler(), walk: $("c-walk").value, graph: $("c-graph").value,
    m: +$("c-m").value, k: +$("c-k").value, b: +$("c-b").value, alpha: +$("c-alpha").value,
    seed: Math.max(0, Math.floor(+$("c-seed").value || 0)), threshold: +$("c-thr").value,
  };
}

function fmt(x, d = 3) { return Number.isFinite(x) ? x.toFixed(d) : "–"; }

function setMetric(id, v, d = 3) {
  const el = $(id);
  el.textContent = fmt(v, d);
  el.dataset.value = JSON.stringify(v);
}

// Keep the sliders' ranges consistent with N and with each other.
function syncRanges() {
  const n = S.data ? S.data.n : 600;
  const b = $("c-b"), k = $("c-k"), m = $("c-m");
  b.max = Math.min(256, n);
  k.max = Math.min(400, n - 1);
  m.max = n - 1;
  if (+m.value < +k.value) m.value = k.value;
  m.min = k.value;
  const s = settings();
  $("o-b").textContent = s.b;
  $("o-k").textContent = s.k + (s.k < s.b - 1 ? " < B−1" : "");
  $("o-m").textContent = s.m + (s.m >= n - 1 ? " = N−1" : s.m === s.k ? " = K" : "");
  $("o-alpha").textContent = s.alpha.toFixed(2);
  $("o-thr").textContent = s.threshold.toFixed(2);
  $("m-thr").textContent = s.threshold.toFixed(2);
  const bs = s.sampler === "batchsampler";
  for (const id of ["c-k", "c-m", "c-alpha", "c-walk", "c-graph"]) $(id).disabled = !bs;
  $("c-m").disabled = !bs || s.graph === "knn";
  $("c-alpha").disabled = !bs || s.walk !== "rwr";
  $("k-note").classList.toggle("warn", bs && s.k < s.b - 1);
  $("rot-label").hidden = !(S.data && S.data.view === 3);
}

// ---------- the data ----------

function applyData(view) {
  S.data = view;
  S.batch = null;
  S.hists = {};
  S.scatter = [];
  S.scatterKey = "";
  S.train = null;
  $("emb-row").innerHTML = "";
  $("train-final").innerHTML = "";
  for (const id of ["cv-loss", "cv-tfn", "cv-probe"]) clearCanvas($(id));
  const legend = $("legend");
  legend.innerHTML = "";
  view.palette.forEach((c, i) => {
    const s = document.createElement("span");
    s.innerHTML = `<i class="chip" style="background:${c}"></i>class ${i} (${view.sizes[i]})`;
    legend.appendChild(s);
  });
  const info = document.createElement("span");
  info.textContent = view.name + (view.explained ? ` · PCA axes hold ${(100 * view.explained[0]).toFixed(0)}% and ${(100 * view.explained[1]).toFixed(0)}% of the variance` : "");
  legend.appendChild(info);
  syncRanges();
}

function generate() {
  const spec = {
    n: +$("c-n").value, classes: +$("c-classes").value, sub: +$("c-sub").value,
    dim: +$("c-dim").value, spread: +$("c-spread").value, seed: Math.max(0, Math.floor(+$("c-dseed").value || 0)),
  };
  const view = call("data", spec);
  if (view.threshold > 0) $("c-thr").value = view.threshold; // pairs as close as neighbouring sub-clusters
  applyData(view);
  refresh();
}

async function loadRun() {
  const e = $("c-emb").files[0], l = $("c-lab").files[0];
  if (!e || !l) throw new Error("choose both files: the embeddings (FILE.npy) and the labels (FILE_labels.npy)");
  const [eb, lb] = await Promise.all([e.arrayBuffer(), l.arrayBuffer()]);
  const r = globalThis.bsdemoLoadRun(new Uint8Array(eb), new Uint8Array(lb), e.name, l.name);
  if (r.error) throw new Error(r.error);
  applyData(JSON.parse(r.ok));
  const n = S.data.n;
  if (+$("c-b").value > n) $("c-b").value = Math.max(2, Math.floor(n / 4));
  syncRanges();
  refresh();
  status("Loaded " + S.data.name + ". The samplers work on all " + S.data.d + " dimensions; the picture is a 2-D PCA.");
}

// ---------- batches and measures ----------

function newBatch(next) {
  if (!S.data) return;
  const s = settings();
  S.batch = call("batch", { settings: s, next: !!next });
  S.pos = null; // the whole batch
  stopPlay();
  const p = $("batch-panel");
  p.dataset.settings = JSON.stringify(s);
  p.dataset.index = S.batch.index;
  $("m-index").textContent = `#${S.batch.index + 1} of this sampler (${KIND_NAME[s.sampler]}, seed ${s.seed})`;
  setMetric("m-fn", S.batch.metrics.fn);
  setMetric("m-hard", S.batch.metrics.hard);
  setMetric("m-cos", S.batch.metrics.meanCos);
  const g = S.batch.graph;
  if (g) setMetric("m-agree", g.LabelAgreement); else { $("m-agree").textContent = "–"; delete $("m-agree").dataset.value; }
  $("batch-ids").textContent = S.batch.batch.join(" ");
  $("batch-ids").dataset.ids = JSON.stringify(S.batch.batch);
  fallbackNote();
  drawBatch();
}

function fallbackNote() {
  const el = $("fallback-note");
  const v = S.batch;
  if (!v || v.settings.sampler !== "batchsampler") { el.hidden = true; return; }
  const k = v.effK, b = v.settings.b;
  const parts = [];
  if (k < b - 1) parts.push(`K = ${k} < B − 1 = ${b - 1}: u's neighbours alone cannot fill the batch.`);
  if (v.jumps > 0) parts.push(`This walk fell back ${v.jumps} time${v.jumps > 1 ? "s" : ""}: it met no new node for 16·(K+1) = ${16 * (k + 1)} steps (or took 100·B steps) and jumped to the next node not yet covered in the epoch (dashed lines, small stars), which became the new u.`);
  el.textContent = parts.join(" ");
  el.hidden = parts.length === 0;
}

function contextKey(s) { return JSON.stringify([S.data && S.data.name, s.b, s.seed, s.threshold]); }

function label(s) {
  if (s.sampler !== "batchsampler") return KIND_NAME[s.sampler];
  const g = s.graph === "knn" ? "kNN graph" : `M=${s.m}`;
  return `${s.walk.toUpperCase()}${s.walk === "rwr" ? " α=" + s.alpha : ""} ${g} K=${s.k}`;
}

function measure() {
  if (!S.data) return;
  const s = settings();
  const key = contextKey(s);
  if (key !== S.scatterKey) { S.scatter = []; S.hists = {}; S.scatterKey = key; }
  const want = [s];
  for (const kind of ["uniform", "knn"]) if (!S.scatter.some((p) => p.s.sampler === kind)) want.push({ ...s, sampler: kind });
  for (const w of want) {
    const id = JSON.stringify(w.sampler === "batchsampler" ? w : { sampler: w.sampler });
    let p = S.scatter.find((q) => q.id === id);
    if (!p) {
      const m = call("measure", { settings: w, batches: MEASURE_BATCHES });
      p = { id, s: w, m, label: label(w) };
      S.scatter.push(p);
    }
    if (w.sampler === "batchsampler" || !S.hists[w.sampler] || w === s) S.hists[w.sampler] = p;
    if (w === s) S.current = p;
  }
  $("n-measure").textContent = MEASURE_BATCHES;
  drawScatter();
  drawHist();
}

let refreshTimer = 0;
function refresh() {
  clearTimeout(refreshTimer);
  syncRanges();
  guard(() => { newBatch(false); measure(); })();
  if (!S.firstRender && S.batch) {
    S.firstRender = true;
    const ms = performance.now(); // since the navigation started
    document.body.dataset.firstRenderMs = ms.toFixed(0);
    status(`Ready: the Go sampler runs in your browser (first picture after ${(ms / 1000).toFixed(1)} s).`);
    document.body.dataset.ready = "1";
  }
}
function refreshSoon() { syncRanges(); clearTimeout(refreshTimer); refreshTimer = setTimeout(refresh, 120); }

// ---------- stepping the walk ----------

function stepCount() { return S.batch ? S.batch.steps.length : 0; }

function step(d) {
  if (!S.batch || stepCount() === 0) { status("Only BatchSampler builds its batch by a walk; choose it to step."); return; }
  if (S.pos === null) {
    S.pos = 0;
    if (S.data.view === 2) $("c-zoom").checked = true; // stepping: look closely
  }
  S.pos = Math.max(0, Math.min(stepCount(), S.pos + d));
  drawBatch();
}
// nextJump shows the walk up to its next fallback jump (or its end).
function nextJump() {
  if (!S.batch || !stepCount()) { step(1); return; }
  stopPlay();
  const from = S.pos === null ? 0 : S.pos;
  let t = from;
  while (t < stepCount() && S.batch.steps[t][2] !== 2) t++;
  if (S.pos === null) step(0);
  S.pos = Math.min(stepCount(), t + 1);
  drawBatch();
  if (t >= stepCount()) status("No fallback jump after this step: the walk ends without one.");
}
function resetWalk() { if (S.batch && stepCount()) { stopPlay(); S.pos = null; step(0); } }
function endWalk() { stopPlay(); S.pos = null; drawBatch(); }
function stopPlay() { if (S.playing) { clearInterval(S.playing); S.playing = null; $("b-play").firstChild.textContent = "Play "; } }
function play() {
  if (S.playing) { stopPlay(); return; }
  if (!S.batch || !stepCount()) { step(1); return; }
  if (S.pos === null || S.pos >= stepCount()) S.pos = 0;
  $("b-play").firstChild.textContent = "Pause ";
  S.playing = setInterval(() => {
    if (S.pos >= stepCount()) { stopPlay(); return; }
    step(1);
  }, Math.max(20, 2400 / Math.max(1, stepCount())));
}

// ---------- drawing ----------

function ctx2d(cv) {
  const c = cv.getContext("2d");
  c.setTransform(1, 0, 0, 1, 0, 0);
  c.clearRect(0, 0, cv.width, cv.height);
  return c;
}
function clearCanvas(cv) { ctx2d(cv); }

// projector returns a function giving the canvas position and depth of
// point i. With focus (a list of points, 2-D views only) the view zooms to
// their bounding box.
function projector(cv, focus) {
  const v = S.data, W = cv.width, H = cv.height;
  if (v.view === 3) {
    const yaw = (+$("c-rot").value) * Math.PI / 180, pitch = 0.45;
    const cy = Math.cos(yaw), sy = Math.sin(yaw), cp = Math.cos(pitch), sp = Math.sin(pitch);
    const r = 0.45 * Math.min(W, H);
    return (i) => {
      const x = v.xy[3 * i], y = v.xy[3 * i + 1], z = v.xy[3 * i + 2];
      const x1 = cy * x + sy * y, y1 = -sy * x + cy * y;
      const y2 = cp * z - sp * y1, z2 = sp * z + cp * y1; // z2 < 0: facing us
      return [W / 2 + r * x1, H / 2 - r * y2, -z2];
    };
  }
  const box = (idx) => {
    const lo = [Infinity, Infinity], hi = [-Infinity, -Infinity];
    for (const i of idx) for (let c = 0; c < 2; c++) { lo[c] = Math.min(lo[c], v.xy[2 * i + c]); hi[c] = Math.max(hi[c], v.xy[2 * i + c]); }
    return [lo, hi];
  };
  let [lo, hi] = box(Array.from({ length: v.n }, (_, i) => i));
  const full = Math.max(hi[0] - lo[0], hi[1] - lo[1]) || 1;
  if (focus && focus.length) [lo, hi] = box(focus);
  const span = Math.max(hi[0] - lo[0], hi[1] - lo[1], 0.25 * full) * (focus && focus.length ? 1.25 : 1), sc = 0.9 * Math.min(W, H) / span;
  const mx = (lo[0] + hi[0]) / 2, my = (lo[1] + hi[1]) / 2;
  return (i) => [W / 2 + sc * (v.xy[2 * i] - mx), H / 2 - sc * (v.xy[2 * i + 1] - my), 1];
}

function dot(c, x, y, r, fill, stroke, lw = 1) {
  c.beginPath(); c.arc(x, y, r, 0, 2 * Math.PI);
  if (fill) { c.fillStyle = fill; c.fill(); }
  if (stroke) { c.strokeStyle = stroke; c.lineWidth = lw; c.stroke(); }
}
function star(c, x, y, r, fill) {
  c.beginPath();
  for (let i = 0; i < 10; i++) {
    const a = -Math.PI / 2 + i * Math.PI / 5, rr = i % 2 ? 0.45 * r : r;
    c.lineTo(x + rr * Math.cos(a), y + rr * Math.sin(a));
  }
  c.closePath(); c.fillStyle = fill; c.fill(); c.lineWidth = 2.2; c.strokeStyle = "#000"; c.stroke();
  c.lineWidth = 0.8; c.strokeStyle = "#fff"; c.stroke();
}
function line(c, a, b, col, w, dash) {
  c.beginPath(); c.setLineDash(dash || []); c.moveTo(a[0], a[1]); c.lineTo(b[0], b[1]);
  c.strokeStyle = col; c.lineWidth = w; c.stroke(); c.setLineDash([]);
}

function drawBatch() {
  const cv = $("cv-batch"), c = ctx2d(cv), v = S.data;
  if (!v) return;
  const bv0 = S.batch;
  let focus = null;
  if (bv0 && $("c-zoom").checked && v.view === 2) {
    // zoom to the members so far and the rows of the walker's node (stepping), or the whole batch
    const st = bv0.steps, upto0 = S.pos === null ? st.length : S.pos;
    focus = [bv0.batch[0]];
    let at = bv0.batch[0];
    for (let t = 0; t < upto0; t++) { if (st[t][3]) focus.push(st[t][1]); at = st[t][1]; }
    if (!st.length) focus = [...bv0.batch];
    const around = S.pos === null ? focus : [at];
    if (bv0.rows) for (const u of [...around]) if (bv0.rows[u]) focus.push(...bv0.rows[u]);
  }
  const P = projector(cv, focus), pts = [];
  for (let i = 0; i < v.n; i++) pts.push(P(i));
  const col = (i) => v.palette[v.labels[i]];
  const bv = S.batch;
  if (v.view === 3) dot(c, cv.width / 2, cv.height / 2, 0.45 * Math.min(cv.width, cv.height), null, "#ccc", 1); // the sphere's outline
  // the whole data, faint (back of the sphere fainter)
  for (let i = 0; i < v.n; i++) {
    c.globalAlpha = pts[i][2] < 0 ? 0.12 : 0.38;
    dot(c, pts[i][0], pts[i][1], 2.2, col(i));
  }
  c.globalAlpha = 1;
  if (!bv) return;
  const steps = bv.steps, all = S.pos === null, upto = all ? steps.length : S.pos;
  // members so far, in order of joining
  let members = bv.batch;
  const order = new Map();
  if (steps.length) {
    members = [bv.batch[0]];
    for (let t = 0; t < upto; t++) if (steps[t][3]) members.push(steps[t][1]);
  }
  members.forEach((u, j) => order.set(u, j + 1));
  const inBatch = new Set(members);
  // graph edges out of the members (thin), within the batch (darker)
  if (bv.rows) {
    c.lineWidth = 0.6;
    for (const u of members) {
      const row = bv.rows[u] || [];
      for (const x of row) {
        const inside = inBatch.has(x);
        c.strokeStyle = inside ? "rgba(40,40,40,0.35)" : "rgba(120,120,120,0.13)";
        c.beginPath(); c.moveTo(pts[u][0], pts[u][1]); c.lineTo(pts[x][0], pts[x][1]); c.stroke();
      }
    }
  }
  // the path so far
  let cur = bv.batch[0], u = bv.batch[0], restarts = new Map(), starts = [bv.batch[0]];
  for (let t = 0; t < upto; t++) {
    const [from, to, kind] = steps[t];
    if (kind === 2) { line(c, pts[from], pts[to], "rgba(30,30,30,0.8)", 1.2, [5, 4]); u = to; starts.push(to); }
    else {
      if (kind === 1) restarts.set(u, (restarts.get(u) || 0) + 1);
      line(c, pts[from], pts[to], t === upto - 1 && !all ? "#b0106a" : "rgba(176,16,106,0.45)", t === upto - 1 && !all ? 2.4 : 1.1);
    }
    cur = to;
  }
  // the current node's neighbours (step mode)
  const showNb = !all && steps.length > 0;
  if (showNb && bv.rows && bv.rows[cur]) {
    for (const x of bv.rows[cur]) line(c, pts[cur], pts[x], "rgba(0,114,178,0.55)", 1.2);
  }
  // members
  for (const m of members) dot(c, pts[m][0], pts[m][1], 5.2, col(m), "#111", 1);
  for (const s of starts.slice(1)) star(c, pts[s][0], pts[s][1], 8, col(s));
  star(c, pts[bv.batch[0]][0], pts[bv.batch[0]][1], 11, col(bv.batch[0]));
  if (showNb) {
    dot(c, pts[cur][0], pts[cur][1], 9, null, "#b0106a", 2.5);
    // joining order numbers (all members while stepping)
    c.font = "11px system-ui, sans-serif"; c.fillStyle = "#000"; c.textBaseline = "bottom";
    for (const [m, j] of order) if (j > 1) c.fillText(String(j), pts[m][0] + 5, pts[m][1] - 3);
  } else if (steps.length) {
    c.font = "11px system-ui, sans-serif"; c.fillStyle = "#000"; c.textBaseline = "bottom";
    for (const [m, j] of order) if (j > 1 && j <= 12) c.fillText(String(j), pts[m][0] + 5, pts[m][1] - 3);
  }
  for (const [node, r] of restarts) {
    c.font = "bold 13px system-ui, sans-serif"; c.fillStyle = "#b0106a"; c.textBaseline = "top";
    c.fillText("↺" + r, pts[node][0] + 9, pts[node][1] + 4);
  }
  // text beside
  const pos = $("walk-pos");
  if (!steps.length) {
    pos.textContent = bv.settings.sampler === "knn" ? "no walk: the anchor (star) and its B−1 nearest neighbours" : "no walk: a slice of a random permutation";
    $("nbrs").innerHTML = "";
    return;
  }
  const nr = [...restarts.values()].reduce((a, b) => a + b, 0), nj = starts.length - 1;
  pos.textContent = all ? `${steps.length} steps, ${bv.restarts} restarts, ${bv.jumps} fallback jumps (press s to step)`
    : `step ${upto} of ${steps.length}: ${members.length} of ${bv.batch.length} nodes, ${nr} restart${nr === 1 ? "" : "s"}, ${nj} jump${nj === 1 ? "" : "s"}`;
  pos.dataset.step = upto;
  if (!showNb) { $("nbrs").innerHTML = ""; return; }
  let what = upto === 0 ? "the start node u" : "";
  if (upto > 0) {
    const st = steps[upto - 1];
    what = st[2] === 2 ? `a fallback jump to a new start node` : st[2] === 1 ? `a restart: back to u, then along one of u's edges` : `a step along an edge`;
    what += st[3] ? ", a new node joined the batch" : ", to a node already in the batch";
  }
  const row = bv.rows[cur] || [], cs = bv.cos[cur] || [];
  let html = `<p><b>Step ${upto}</b>: ${what}. The walker is at node ${cur} (class ${v.labels[cur]}); its K = ${row.length} out-neighbours, one of which the next step takes:</p><table><tr><th>node</th><th>class</th><th>cosine</th><th>angle</th><th></th></tr>`;
  row.forEach((x, q) => {
    const tag = inBatch.has(x) ? "in the batch" : "";
    const kind = v.labels[x] === v.labels[cur] ? "same class" : (cs[q] >= bv.settings.threshold ? "hard negative" : "other class");
    const deg = Math.acos(Math.max(-1, Math.min(1, cs[q]))) * 180 / Math.PI; // the angle of the cosine Go gave
    html += `<tr><td>${x}</td><td><i class="chip" style="background:${col(x)}"></i>${v.labels[x]}</td><td>${fmt(cs[q], 4)}</td><td>${deg.toFixed(1)}°</td><td>${[kind, tag].filter(Boolean).join(", ")}</td></tr>`;
  });
  $("nbrs").innerHTML = html + "</table>";
}

function axes(c, W, H, pad, xlab, ylab, xmax, ymax, xticks, yticks, xmin = 0, ymin = 0) {
  c.strokeStyle = "#888"; c.lineWidth = 1; c.fillStyle = "#333"; c.font = "11px system-ui, sans-serif";
  c.beginPath(); c.moveTo(pad.l, pad.t); c.lineTo(pad.l, H - pad.b); c.lineTo(W - pad.r, H - pad.b); c.stroke();
  const X = (x) => pad.l + (x - xmin) / (xmax - xmin) * (W - pad.l - pad.r);
  const Y = (y) => H - pad.b - (y - ymin) / (ymax - ymin) * (H - pad.t - pad.b);
  c.textAlign = "center"; c.textBaseline = "top";
  for (const t of xticks) { c.fillText(String(+t.toFixed(2)), X(t), H - pad.b + 3); }
  c.textAlign = "right"; c.textBaseline = "middle";
  for (const t of yticks) { c.fillText(String(+t.toFixed(2)), pad.l - 4, Y(t)); }
  c.textAlign = "center"; c.textBaseline = "bottom"; c.fillText(xlab, (pad.l + W - pad.r) / 2, H - 2);
  c.save(); c.translate(12, (pad.t + H - pad.b) / 2); c.rotate(-Math.PI / 2); c.textBaseline = "middle"; c.fillText(ylab, 0, 0); c.restore();
  c.textAlign = "left";
  return [X, Y];
}
function ticks(max, n = 5) {
  const step = Math.pow(10, Math.floor(Math.log10(max / n))), s = [1, 2, 5, 10].map((m) => m * step).find((x) => max / x <= n) || step;
  const out = [];
  for (let t = 0; t <= max + 1e-9; t += s) out.push(t);
  return out;
}

function drawScatter() {
  const cv = $("cv-scatter"), c = ctx2d(cv), W = cv.width, H = cv.height;
  const pts = S.scatter;
  let ymax = 0.05;
  for (const p of pts) ymax = Math.max(ymax, p.m.metrics.hard + p.m.hardErr);
  ymax = Math.min(1, ymax * 1.15);
  const [X, Y] = axes(c, W, H, { l: 48, r: 12, t: 10, b: 34 }, "false-negative ratio (same-class pairs) →", "hard true negatives →", 1, ymax, ticks(1), ticks(ymax, 4));
  const cur = S.current;
  for (const p of pts) {
    const x = X(p.m.metrics.fn), y = Y(p.m.metrics.hard), k = p.s.sampler;
    c.strokeStyle = KIND_COL[k]; c.lineWidth = 1;
    line(c, [X(p.m.metrics.fn - p.m.fnErr), y], [X(p.m.metrics.fn + p.m.fnErr), y], KIND_COL[k], 1);
    line(c, [x, Y(p.m.metrics.hard - p.m.hardErr)], [x, Y(p.m.metrics.hard + p.m.hardErr)], KIND_COL[k], 1);
    if (k === "knn") { c.fillStyle = KIND_COL[k]; c.fillRect(x - 5, y - 5, 10, 10); }
    else if (k === "uniform") { c.beginPath(); c.moveTo(x, y - 7); c.lineTo(x + 6, y + 5); c.lineTo(x - 6, y + 5); c.closePath(); c.fillStyle = KIND_COL[k]; c.fill(); }
    else dot(c, x, y, 4.5, KIND_COL[k]);
    if (p === cur) dot(c, x, y, 10, null, "#b0106a", 2);
  }
  // labels: Uniform, kNN, the current and the extremes
  c.font = "11px system-ui, sans-serif"; c.fillStyle = "#222"; c.textBaseline = "middle";
  for (const p of pts) {
    if (p.s.sampler !== "batchsampler" || p === cur) {
      const x = X(p.m.metrics.fn), y = Y(p.m.metrics.hard);
      const t = p.label, w = c.measureText(t).width;
      c.fillText(t, x + w + 14 > W ? x - w - 12 : x + 12, y - 10);
    }
  }
  c.fillStyle = "#555";
  c.fillText(`${pts.filter((p) => p.s.sampler === "batchsampler").length} BatchSampler settings tried (blue dots); ringed: the current one`, 56, 18);
}

function drawHist() {
  const cv = $("cv-hist"), c = ctx2d(cv), W = cv.width, H = cv.height;
  const hs = ["uniform", "knn", "batchsampler"].map((k) => S.hists[k]).filter(Boolean);
  if (!hs.length) return;
  let ymax = 0.05;
  for (const h of hs) for (const v of h.m.metrics.hist) ymax = Math.max(ymax, v);
  ymax *= 1.1;
  const bins = hs[0].m.metrics.hist.length;
  const [X, Y] = axes(c, W, H, { l: 48, r: 12, t: 10, b: 34 }, "cosine similarity of a pair in the batch", "share of pairs", 1, ymax, [-1, -0.5, 0, 0.5, 1], ticks(ymax, 4), -1);
  const thr = settings().threshold;
  line(c, [X(thr), Y(0)], [X(thr), Y(ymax)], "rgba(176,16,106,0.6)", 1, [3, 3]);
  c.fillStyle = "#b0106a"; c.font = "11px system-ui, sans-serif"; c.fillText("hard from here", X(thr) - 86, Y(ymax) + 8);
  let ly = 18;
  for (const h of hs) {
    const k = h.s.sampler;
    c.beginPath(); c.setLineDash(KIND_DASH[k]);
    h.m.metrics.hist.forEach((v, i) => {
      const x0 = X(-1 + 2 * i / bins), x1 = X(-1 + 2 * (i + 1) / bins);
      if (i === 0) c.moveTo(x0, Y(v)); else c.lineTo(x0, Y(v));
      c.lineTo(x1, Y(v));
    });
    c.strokeStyle = KIND_COL[k]; c.lineWidth = 2; c.stroke(); c.setLineDash([]);
    line(c, [60, ly], [84, ly], KIND_COL[k], 2, KIND_DASH[k]);
    c.fillStyle = "#222"; c.fillText(h.label, 90, ly + 4); ly += 16;
  }
}

// ---------- train mode ----------

function startTrain() {
  if (!S.data) return;
  if (S.data.source !== "generated") throw new Error("Train mode trains on the generated point set: press Generate first.");
  if (S.train && S.train.timer) { clearTimeout(S.train.timer); S.train.timer = 0; }
  const steps = Math.max(10, Math.min(2000, Math.floor(+$("c-steps").value || 150)));
  const s = settings();
  const d = call("defaults");
  const req = { settings: { ...s, sampler: "batchsampler" }, train: d.train, steps };
  $("train-panel").dataset.request = JSON.stringify(req);
  const start = call("trainInit", req);
  S.train = { req, start, steps, done: 0, runs: {}, timer: 0 };
  for (const k of start.kinds) S.train.runs[k] = { points: [], snaps: [] };
  const row = $("emb-row");
  row.innerHTML = "";
  for (const k of start.kinds) {
    row.insertAdjacentHTML("beforeend", `<figure><canvas id="cv-emb-${k}" width="260" height="260" role="img" aria-label="${KIND_NAME[k]}'s embedding"></canvas><figcaption id="cap-emb-${k}">${KIND_NAME[k]}</figcaption></figure>`);
  }
  trainChunk();
}

function trainChunk() {
  const T = S.train;
  const n = Math.min(5, T.steps - T.done);
  let ups;
  try { ups = call("trainStep", { steps: n }); } catch (e) { status(e.message, true); return; }
  for (const u of ups) { T.runs[u.name].points.push(...(u.points || [])); T.runs[u.name].snaps.push(...(u.snapshots || [])); }
  T.done += n;
  $("train-status").textContent = T.done < T.steps ? `step ${T.done} of ${T.steps}…` : `done: ${T.steps} steps per sampler, seed ${T.req.settings.seed}`;
  drawTrain();
  if (T.done < T.steps) T.timer = setTimeout(guard(trainChunk), 0);
  else { T.timer = 0; trainTable(); $("train-panel").dataset.done = "1"; }
}

function smooth(points, key, w = 10) {
  const out = [];
  for (let i = 0; i < points.length; i++) {
    let s = 0, n = 0;
    for (let j = Math.max(0, i - w + 1); j <= i; j++) { s += points[j][key]; n++; }
    out.push([points[i].step, s / n]);
  }
  return out;
}

function lineChart(cv, series, ymin, ymax, ylab, steps, ref) {
  const c = ctx2d(cv), W = cv.width, H = cv.height;
  const [X, Y] = axes(c, W, H, { l: 44, r: 10, t: 8, b: 32 }, "training step", ylab, steps, ymax, ticks(steps, 4), ticks(ymax - ymin, 4).map((t) => t + ymin), 0, ymin);
  if (ref !== undefined) { line(c, [X(0), Y(ref)], [X(steps), Y(ref)], "#777", 1, [2, 3]); }
  for (const [k, pts] of series) {
    c.beginPath(); c.setLineDash(KIND_DASH[k]);
    pts.forEach(([x, y], i) => { if (i === 0) c.moveTo(X(x), Y(y)); else c.lineTo(X(x), Y(y)); });
    c.strokeStyle = KIND_COL[k]; c.lineWidth = 2; c.stroke(); c.setLineDash([]);
  }
}

function drawTrain() {
  const T = S.train, kinds = T.start.kinds;
  let lmax = 0;
  for (const k of kinds) for (const p of T.runs[k].points) lmax = Math.max(lmax, p.loss);
  lineChart($("cv-loss"), kinds.map((k) => [k, smooth(T.runs[k].points, "loss", 5)]), 0, Math.ceil(lmax), "loss", T.steps);
  lineChart($("cv-tfn"), kinds.map((k) => [k, smooth(T.runs[k].points, "fn", 10)]), 0, 1, "false-negative ratio", T.steps);
  lineChart($("cv-probe"), kinds.map((k) => [k, T.runs[k].snaps.map((s) => [s.step, s.probe])]), 0, 1, "probe accuracy", T.steps, T.start.rawProbe);
  const v = S.data;
  for (const k of kinds) {
    const snaps = T.runs[k].snaps;
    if (!snaps.length) continue;
    const sn = snaps[snaps.length - 1], cv = $("cv-emb-" + k), c = ctx2d(cv);
    let m = 1e-9;
    for (const x of sn.xy) m = Math.max(m, Math.abs(x));
    const sc = 0.45 * cv.width / m;
    for (let i = 0; i < v.n; i++) { c.globalAlpha = 0.8; dot(c, cv.width / 2 + sc * sn.xy[2 * i], cv.height / 2 - sc * sn.xy[2 * i + 1], 2.2, v.palette[v.labels[i]]); }
    c.globalAlpha = 1;
    $("cap-emb-" + k).textContent = `${KIND_NAME[k]}: embedding at step ${sn.step} (PCA), probe ${fmt(sn.probe)}`;
  }
}

function trainTable() {
  const T = S.train, t = $("train-final");
  let html = `<thead><tr><th>sampler</th><th>loss (last step)</th><th>false-negative ratio (mean of all steps)</th><th>kNN probe (last)</th></tr></thead><tbody>`;
  for (const k of T.start.kinds) {
    const P = T.runs[k].points, sn = T.runs[k].snaps;
    const fn = P.reduce((a, p) => a + p.fn, 0) / P.length;
    html += `<tr><th scope="row">${KIND_NAME[k]}</th><td id="t-${k}-loss"></td><td id="t-${k}-fn"></td><td id="t-${k}-probe"></td></tr>`;
    T.final = T.final || {};
    T.final[k] = { loss: P[P.length - 1].loss, fn, probe: sn[sn.length - 1].probe };
  }
  t.innerHTML = html + `<tr><th scope="row">raw input</th><td></td><td></td><td>${fmt(T.start.rawProbe)}</td></tr></tbody>`;
  for (const k of T.start.kinds) {
    setMetric(`t-${k}-loss`, T.final[k].loss);
    setMetric(`t-${k}-fn`, T.final[k].fn);
    setMetric(`t-${k}-probe`, T.final[k].probe);
  }
}

// ---------- wiring ----------

function wire() {
  const on = (id, ev, f) => $(id).addEventListener(ev, guard(f));
  on("b-data", "click", generate);
  $("b-run").addEventListener("click", () => loadRun().catch((e) => status(e.message, true)));
  for (const id of ["c-b", "c-k", "c-m", "c-alpha", "c-thr"]) on(id, "input", refreshSoon);
  for (const id of ["c-walk", "c-graph", "c-seed"]) on(id, "change", refresh);
  for (const r of document.querySelectorAll("input[name=sampler]")) r.addEventListener("change", guard(refresh));
  on("c-rot", "input", drawBatch);
  on("c-zoom", "change", drawBatch);
  on("b-new", "click", () => { newBatch(true); });
  on("b-step", "click", () => step(1));
  on("b-play", "click", play);
  on("b-reset", "click", resetWalk);
  on("b-end", "click", endWalk);
  on("b-jump", "click", nextJump);
  on("b-clear", "click", () => { S.scatter = []; S.hists = {}; measure(); });
  on("b-train", "click", startTrain);
  document.addEventListener("keydown", guard((e) => {
    const t = e.target;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (t && (t.tagName === "SELECT" || (t.tagName === "INPUT" && !["range", "radio", "button", "checkbox"].includes(t.type)))) return;
    const keys = { n: () => newBatch(true), s: () => step(1), j: nextJump, p: play, r: resetWalk, e: endWalk, t: startTrain };
    if (keys[e.key]) { e.preventDefault(); keys[e.key](); }
  }));
}

async function boot() {
  const b = globalThis.BSDEMO_BUILD;
  if (b) $("build").textContent = `Built with ${b.goVersion}; WebAssembly ${(b.wasmBytes / 1e6).toFixed(1)} MB. The batches, graphs, metrics and training all come from the project's Go code (packages sampler and cmd/samplerdemo/internal/lab).`;
  wire();
  try {
    await loadWasm();
  } catch (e) {
    status("Could not start the Go sampler: " + e.message, true);
    return;
  }
  const d = call("defaults");
  $("c-n").value = d.data.n; $("c-classes").value = d.data.classes; $("c-sub").value = d.data.sub;
  $("c-spread").value = d.data.spread; $("c-dseed").value = d.data.seed; $("c-dim").value = d.data.dim;
  guard(generate)();
}

boot();
