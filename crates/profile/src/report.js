// Draws tramp's heap report from the JSON in #data. No network, no library.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("data").textContent);
  var NS = "http://www.w3.org/2000/svg";

  function el(tag, attrs, text) {
    var e = tag.indexOf("svg:") === 0 ? document.createElementNS(NS, tag.slice(4)) : document.createElement(tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function human(v, unit) {
    var units = unit === "bytes" ? ["B", "KiB", "MiB", "GiB", "TiB"] : ["", "k", "M", "G", "T"];
    var step = unit === "bytes" ? 1024 : 1000, i = 0;
    while (Math.abs(v) >= step && i < units.length - 1) { v /= step; i++; }
    return (i === 0 ? String(Math.round(v)) : v.toFixed(1)) + (unit === "bytes" ? " " : "") + units[i];
  }
  function clockLabel(t) {
    if (D.clock !== "time") return human(t, "") + " ev";
    if (t >= 1e9) return (t / 1e9).toFixed(2) + " s";
    if (t >= 1e6) return (t / 1e6).toFixed(1) + " ms";
    if (t >= 1e3) return (t / 1e3).toFixed(0) + " µs";
    return Math.round(t) + " ns";
  }

  // Summary.
  var sum = document.getElementById("summary");
  D.summary.forEach(function (f) {
    var tr = el("tr"); tr.appendChild(el("td", {}, f.label)); tr.appendChild(el("td", {}, f.value)); sum.appendChild(tr);
  });

  // Line chart of series over the time slices.
  function lines(id, series, unit) {
    var svg = document.getElementById(id), W = 1000, H = 220, L = 70, B = 24;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("preserveAspectRatio", "none");
    var sl = D.timeline;
    if (!sl.length) { svg.appendChild(el("svg:text", { x: 10, y: 20 }, "no heap events")); return; }
    var t0 = sl[0].start, t1 = sl[sl.length - 1].end, max = 1;
    series.forEach(function (s) {
      (s.points || sl).forEach(function (x) { max = Math.max(max, s.points ? x[1] : s.get(x)); });
    });
    var xs = function (t) { return L + (W - L - 10) * (t - t0) / Math.max(1, t1 - t0); };
    var ys = function (v) { return H - B - (H - B - 10) * v / max; };
    for (var g = 0; g <= 4; g++) {
      var v = max * g / 4;
      svg.appendChild(el("svg:line", { x1: L, x2: W - 10, y1: ys(v), y2: ys(v), stroke: "#e4e4e4" }));
      svg.appendChild(el("svg:text", { x: 4, y: ys(v) + 4 }, human(v, unit)));
    }
    svg.appendChild(el("svg:text", { x: L, y: H - 6 }, clockLabel(0)));
    svg.appendChild(el("svg:text", { x: W - 80, y: H - 6 }, clockLabel(t1 - t0)));
    series.forEach(function (s, k) {
      var d = s.points
        ? s.points.map(function (p, i) { return (i ? "L" : "M") + xs(Math.min(p[0], t1)).toFixed(1) + " " + ys(p[1]).toFixed(1); }).join(" ")
        : sl.map(function (x, i) { return (i ? "L" : "M") + xs((x.start + x.end) / 2).toFixed(1) + " " + ys(s.get(x)).toFixed(1); }).join(" ");
      if (!d) return;
      svg.appendChild(el("svg:path", { d: d, fill: "none", stroke: s.color, "stroke-width": 2, "vector-effect": "non-scaling-stroke" }));
      svg.appendChild(el("svg:text", { x: L + 10 + 200 * k, y: 14, fill: s.color }, s.name));
    });
    svg.setAttribute("data-points", String(sl.length));
  }
  var memory = [
    { name: "most bytes live in the slice", color: "#c33", get: function (x) { return x.max_live_bytes; } },
    { name: "bytes live at its end", color: "#36c", get: function (x) { return x.live_bytes; } }
  ];
  if (D.rss.length && D.clock === "time") memory.push({ name: "resident set size (RSS)", color: "#888", points: D.rss });
  lines("memory", memory, "bytes");
  document.getElementById("memory").setAttribute("data-rss", String(D.clock === "time" ? D.rss.length : 0));
  lines("allocations", [
    { name: "allocations", color: "#393", get: function (x) { return x.allocations; } },
    { name: "frees", color: "#a60", get: function (x) { return x.frees; } }
  ], "");

  // Bar chart of buckets.
  function bars(id, rows, label, value, unit) {
    var svg = document.getElementById(id), W = 1000, H = 220, L = 70, B = 40;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    if (!rows.length) { svg.appendChild(el("svg:text", { x: 10, y: 20 }, "nothing to show")); return; }
    var max = 1; rows.forEach(function (r) { max = Math.max(max, value(r)); });
    var w = (W - L - 10) / rows.length;
    rows.forEach(function (r, i) {
      var h = (H - B - 10) * value(r) / max, x = L + i * w;
      var rect = el("svg:rect", { x: x + 1, y: H - B - h, width: Math.max(1, w - 2), height: h, fill: "#5a8" });
      rect.appendChild(el("svg:title", {}, label(r) + ": " + human(value(r), unit)));
      svg.appendChild(rect);
      if (rows.length <= 24 || i % Math.ceil(rows.length / 24) === 0)
        svg.appendChild(el("svg:text", { x: x + 2, y: H - B + 14 }, label(r)));
    });
    svg.appendChild(el("svg:text", { x: 4, y: 14 }, human(max, unit)));
    svg.setAttribute("data-points", String(rows.length));
  }
  bars("sizes", D.sizes, function (b) { return b.low === b.high ? String(b.low) : "≤" + human(b.high, "bytes"); },
    function (b) { return b.count; }, "");
  bars("lifetimes", D.lifetimes.buckets, function (b) { return "≤" + clockLabel(b.high); },
    function (b) { return b.objects; }, "");

  // The stacks as a tree (top-down: outermost first; bottom-up: reversed).
  function build(cost, reverse) {
    var root = { name: "all", v: 0, all: [0, 0, 0, 0, 0], kids: {} };
    D.stacks.forEach(function (s) {
      var frames = reverse ? s[0].slice().reverse() : s[0], node = root;
      var add = function (n) { n.v += s[1][cost]; for (var c = 0; c < 5; c++) n.all[c] += s[1][c]; };
      add(root);
      frames.forEach(function (f) {
        var k = node.kids[f];
        if (!k) { k = node.kids[f] = { name: D.frames[f], v: 0, all: [0, 0, 0, 0, 0], kids: {} }; }
        add(k); node = k;
      });
    });
    return root;
  }
  function children(n) {
    return Object.keys(n.kids).map(function (k) { return n.kids[k]; })
      .sort(function (a, b) { return b.v - a.v || (a.name < b.name ? -1 : 1); });
  }

  // Flame graph.
  var costSel = document.getElementById("cost"), flame = document.getElementById("flame");
  var hover = document.getElementById("hover"), search = document.getElementById("search");
  D.costs.forEach(function (c, i) { costSel.appendChild(el("option", { value: i }, c)); });
  var tree = null, zoom = null;
  function unitOf(c) { return c === 1 || c === 3 || c === 4 ? "bytes" : ""; }
  function draw() {
    var cost = +costSel.value, top = zoom || tree, rowH = 17, width = flame.clientWidth || 1000;
    flame.textContent = "";
    var depth = 0, boxes = 0, q = search.value.toLowerCase(), hits = 0;
    function place(n, x, w, d) {
      if (w < 0.5 || n.v === 0) return;
      depth = Math.max(depth, d);
      var b = el("div", { class: "fr", title: n.name });
      b.style.left = x + "px"; b.style.width = w + "px"; b.style.bottom = (d * rowH) + "px";
      var hue = 10 + (n.name.length * 7) % 40;
      b.style.background = "hsl(" + hue + ",80%," + (62 + (d % 3) * 6) + "%)";
      b.textContent = w > 30 ? n.name : "";
      if (q && n.name.toLowerCase().indexOf(q) >= 0) { b.className += " hit"; hits++; }
      b.onclick = function () { zoom = n; draw(); };
      b.onmouseover = function () {
        hover.textContent = n.name + " — " + human(n.v, unitOf(cost)) + " " + D.costs[cost] +
          " (" + (100 * n.v / Math.max(1, tree.v)).toFixed(2) + "% of all)";
      };
      flame.appendChild(b); boxes++;
      var cx = x;
      children(n).forEach(function (k) { var kw = w * k.v / n.v; place(k, cx, kw, d + 1); cx += kw; });
    }
    place(top, 0, width, 0);
    flame.style.height = ((depth + 1) * rowH + 2) + "px";
    flame.setAttribute("data-boxes", String(boxes));
    document.getElementById("matched").textContent = q ? hits + " frames match" : "";
  }
  function rebuild() { tree = build(+costSel.value, false); zoom = null; draw(); tables(); }
  costSel.onchange = rebuild;
  search.oninput = draw;
  document.getElementById("reset").onclick = function () { zoom = null; draw(); };

  // Top-down and bottom-up tables: every cost, three levels, largest first.
  function table(id, reverse) {
    var t = document.getElementById(id), cost = +costSel.value;
    t.textContent = "";
    var head = el("tr"); head.appendChild(el("th", {}, "call stack"));
    D.costs.forEach(function (c) { head.appendChild(el("th", {}, c)); });
    t.appendChild(head);
    var rows = 0;
    function add(n, d) {
      if (rows >= 300 || n.v === 0) return;
      var tr = el("tr"), name = el("td", { class: "name" }, n.name);
      name.style.paddingLeft = (8 + 16 * d) + "px";
      tr.appendChild(name);
      n.all.forEach(function (v, c) { tr.appendChild(el("td", {}, human(v, unitOf(c)))); });
      t.appendChild(tr); rows++;
      if (d < 3) children(n).slice(0, 12).forEach(function (k) { add(k, d + 1); });
    }
    children(build(cost, reverse)).slice(0, 40).forEach(function (k) { add(k, 0); });
    t.setAttribute("data-rows", String(rows));
  }
  function tables() { table("topdown", false); table("bottomup", true); }
  rebuild();
})();
