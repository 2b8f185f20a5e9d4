// The interactive timeline of `irqsim report`: one track per hardware
// context and device, spans as rectangles, device marks as ticks, flow
// arrows from a device event to the handler it started. Wheel zooms around
// the pointer, dragging pans, double-click shows the whole run, and
// `#zoom=A,B` in the address opens on A..B µs. Only what is in view is
// drawn, so a whole run is no solid wall once zoomed in.
window.addEventListener("error", (e) => { document.body.dataset.error = String(e.message); });
(function () {
  "use strict";
  const NS = "http://www.w3.org/2000/svg";
  const data = JSON.parse(document.getElementById("timeline-data").textContent);
  const box = document.getElementById("timeline");
  const info = document.getElementById("timeline-info");
  const ROW = 22, LEFT = 150, TOP = 20;
  const tracks = data.tracks, spans = data.spans, marks = data.marks, flows = data.flows;
  const width = () => Math.max(400, box.clientWidth || 900);
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("height", TOP + ROW * tracks.length + 10);
  box.appendChild(svg);
  let view = [data.start, data.end];
  // report.html#zoom=A,B opens on A..B µs.
  const zoom = /zoom=([-\d.e]+),([-\d.e]+)/.exec(location.hash);
  if (zoom && Number(zoom[2]) > Number(zoom[1])) view = [Number(zoom[1]), Number(zoom[2])];

  function el(name, attrs, parent) {
    const e = document.createElementNS(NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    (parent || svg).appendChild(e);
    return e;
  }

  function x(t) {
    return LEFT + (t - view[0]) / (view[1] - view[0]) * (width() - LEFT - 10);
  }

  function draw() {
    const w = width();
    svg.setAttribute("width", w);
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    tracks.forEach((name, i) => {
      el("text", { x: 4, y: TOP + ROW * i + 15, class: "track" }, svg).textContent = name;
      el("line", { x1: LEFT, x2: w - 10, y1: TOP + ROW * (i + 1), y2: TOP + ROW * (i + 1), class: "grid" });
    });
    // Time ticks at round steps (1, 2 or 5 × 10^k µs), about eight across.
    const span = view[1] - view[0], raw = span / 8, p10 = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = p10 * (raw / p10 < 2 ? 1 : raw / p10 < 5 ? 2 : 5), digits = Math.max(0, -Math.floor(Math.log10(step)));
    for (let t = Math.ceil(view[0] / step) * step; t <= view[1]; t += step) {
      el("line", { x1: x(t), x2: x(t), y1: TOP - 4, y2: TOP + ROW * tracks.length, class: "grid" });
      el("text", { x: x(t), y: 12, class: "axis", "text-anchor": "middle" }).textContent = t.toFixed(digits);
    }
    el("text", { x: 4, y: 12, class: "axis" }).textContent = "time (µs)";
    let drawn = 0;
    for (const s of spans) {
      if (s.ts + s.dur < view[0] || s.ts > view[1]) continue;
      const x0 = Math.max(x(s.ts), LEFT), x1 = Math.min(x(s.ts + s.dur), w - 10);
      const r = el("rect", { x: x0, y: TOP + ROW * s.track + 3, width: Math.max(x1 - x0, 0.5), height: ROW - 6, fill: data.colors[s.name] || "#999", class: "span" });
      el("title", {}, r).textContent = s.name + " @ " + s.ts.toFixed(3) + " µs, " + s.dur.toFixed(3) + " µs" + (s.args ? " " + s.args : "");
      drawn++;
    }
    for (const m of marks) {
      if (m.ts < view[0] || m.ts > view[1]) continue;
      const t = el("line", { x1: x(m.ts), x2: x(m.ts), y1: TOP + ROW * m.track + 2, y2: TOP + ROW * (m.track + 1) - 2, class: "mark" });
      el("title", {}, t).textContent = m.name + " @ " + m.ts.toFixed(3) + " µs";
    }
    for (const f of flows) {
      if (f.to < view[0] || f.from > view[1]) continue;
      el("line", { x1: x(f.from), y1: TOP + ROW * f.src + ROW / 2, x2: x(f.to), y2: TOP + ROW * f.dst + ROW / 2, class: "flow", "marker-end": "url(#arrow)" });
    }
    const defs = el("defs", {});
    const mk = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto" }, defs);
    el("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }, mk);
    box.dataset.spans = drawn;
    info.textContent = drawn + " spans in view of " + spans.length + "; wheel: zoom, drag: pan, double-click: whole run";
  }

  function at(clientX) {
    const r = svg.getBoundingClientRect();
    return view[0] + (clientX - r.left - LEFT) / (width() - LEFT - 10) * (view[1] - view[0]);
  }

  svg.addEventListener("wheel", (e) => {
    e.preventDefault();
    const t = at(e.clientX), k = e.deltaY > 0 ? 1.25 : 0.8;
    view = [t - (t - view[0]) * k, t + (view[1] - t) * k];
    draw();
  });
  let drag = null;
  svg.addEventListener("mousedown", (e) => { drag = { x: e.clientX, view: view.slice() }; });
  window.addEventListener("mouseup", () => { drag = null; });
  window.addEventListener("mousemove", (e) => {
    if (!drag) return;
    const dt = (e.clientX - drag.x) / (width() - LEFT - 10) * (drag.view[1] - drag.view[0]);
    view = [drag.view[0] - dt, drag.view[1] - dt];
    draw();
  });
  svg.addEventListener("dblclick", () => { view = [data.start, data.end]; draw(); });
  window.irqsimTimeline = { zoom: (a, b) => { view = [a, b]; draw(); return Number(box.dataset.spans); } };
  draw();
})();
