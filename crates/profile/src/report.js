// Draws tramp's heap report from the JSON in #data. No network, no library.
(function () {
  "use strict";
  var ALL = JSON.parse(document.getElementById("data").textContent);
  var NS = "http://www.w3.org/2000/svg";
  // A run's page holds a page per image: the switch re-draws every
  // section from the chosen one.
  var SECTIONS = ["summary", "tops", "memory", "allocations", "sizes", "lifetimes", "flame", "topdown",
    "bottomup", "threads", "rangetops", "cost", "merged", "range", "matched", "thread", "shape", "calls"];
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
  function timeLabel(t) {
    if (t >= 1e9) return (t / 1e9).toFixed(2) + " s";
    if (t >= 1e6) return (t / 1e6).toFixed(1) + " ms";
    if (t >= 1e3) return (t / 1e3).toFixed(0) + " µs";
    return Math.round(t) + " ns";
  }
  function render(D) {
  SECTIONS.forEach(function (id) { document.getElementById(id).textContent = ""; });

  function clockLabel(t) { return D.clock !== "time" ? human(t, "") + " ev" : timeLabel(t); }

  // A frame's name with its file's path cut to the file (`parse
  // (/src/app/json/p.c:12)` → `parse (p.c:12)`), the whole name on hover.
  function short(name) {
    return name.replace(/\(([^()]*\/)([^()/]+)\)$/, "($2)").replace(/^(\/[^ ]*\/)([^ /]+\+0x)/, "$2");
  }

  // Summary.
  var sum = document.getElementById("summary");
  D.summary.forEach(function (f) {
    var tr = el("tr"); tr.appendChild(el("td", {}, f.label)); tr.appendChild(el("td", {}, f.value)); sum.appendChild(tr);
  });

  // Who used the memory: for each cost, the ten allocation sites (the
  // code that called the allocator, over every call stack through it)
  // with most of it, as the library computed them; a click shows that
  // cost's flame graph with the site searched.
  var tops = document.getElementById("tops");
  var titles = { peak: "peak consumers (bytes live at the heap's peak)", allocations: "most allocations",
    temporary: "most temporary allocations", leaked: "leaks (bytes live at exit)" };
  D.tops.forEach(function (top) {
    var cost = D.costs.indexOf(top.cost), box = el("div", { class: "top" });
    box.appendChild(el("h3", {}, titles[top.cost] || top.cost));
    var t = el("table", { "data-cost": top.cost });
    top.rows.forEach(function (r) {
      var tr = el("tr", { class: "link", title: r.site + "\n" + r.stacks + " call stack" + (r.stacks > 1 ? "s" : "") });
      tr.appendChild(el("td", { class: "name" }, short(r.site)));
      tr.appendChild(el("td", {}, human(r.amount, unitOf(cost))));
      tr.appendChild(el("td", {}, (100 * r.amount / Math.max(1, top.total)).toFixed(1) + " %"));
      tr.onclick = function () {
        costSel.value = cost; search.value = r.site; rebuild();
        document.getElementById("flame").scrollIntoView();
      };
      t.appendChild(tr);
    });
    if (!top.rows.length) t.appendChild(el("tr")).appendChild(el("td", {}, "none"));
    t.setAttribute("data-rows", String(top.rows.length));
    box.appendChild(t); tops.appendChild(box);
  });

  // Line chart of series over the time slices: a legend in a band above
  // the plot (never on the lines), the y axis of each side labelled with
  // its unit, six ticks on the x axis and its title. A series `on: "right"`
  // has its own scale on the right (RSS beside the heap, which it would
  // flatten). Slices with no event are gaps: a count is 0 across one, a
  // level holds. Sparse points (RSS) are also drawn as dots.
  function lines(id, series, unit, yTitle) {
    var svg = document.getElementById(id), W = 1000, H = 240, L = 74, T = 26, B = 40;
    var right = series.some(function (s) { return s.on === "right"; }), R = right ? 74 : 14;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    var sl = D.timeline;
    if (!sl.length) { svg.appendChild(el("svg:text", { x: 10, y: 20 }, "no heap events")); return; }
    var t0 = sl[0].start, t1 = sl[sl.length - 1].end;
    // Each series as (time, value) points, gaps filled.
    series.forEach(function (s) {
      if (s.points) { s.pts = s.points.map(function (p) { return [Math.min(Math.max(p[0], t0), t1), p[1]]; }); return; }
      s.pts = [];
      sl.forEach(function (x, i) {
        var prev = sl[i - 1];
        if (prev && x.start > prev.end) {
          var held = s.level ? s.get(prev) : 0;
          s.pts.push([prev.end, held], [x.start, held]);
        }
        s.pts.push([(x.start + x.end) / 2, s.get(x)]);
      });
    });
    var max = { left: 1, right: 1 };
    series.forEach(function (s) { s.pts.forEach(function (p) { var k = s.on || "left"; max[k] = Math.max(max[k], p[1]); }); });
    var xs = function (t) { return L + (W - L - R) * (t - t0) / Math.max(1, t1 - t0); };
    var ys = function (v, side) { return H - B - (H - B - T) * v / max[side]; };
    for (var g = 0; g <= 4; g++) {
      svg.appendChild(el("svg:line", { x1: L, x2: W - R, y1: ys(max.left * g / 4, "left"), y2: ys(max.left * g / 4, "left"), stroke: "#e4e4e4" }));
      svg.appendChild(el("svg:text", { x: L - 6, y: ys(max.left * g / 4, "left") + 4, "text-anchor": "end" }, human(max.left * g / 4, unit)));
      if (right) svg.appendChild(el("svg:text", { x: W - R + 6, y: ys(max.right * g / 4, "right") + 4 }, human(max.right * g / 4, "bytes")));
    }
    var ticks = 0;
    for (var k = 0; k <= 5; k++) {
      var t = t0 + (t1 - t0) * k / 5;
      svg.appendChild(el("svg:line", { x1: xs(t), x2: xs(t), y1: H - B, y2: H - B + 4, stroke: "#888" }));
      svg.appendChild(el("svg:text", { x: xs(t), y: H - B + 16, "text-anchor": k === 0 ? "start" : k === 5 ? "end" : "middle" }, clockLabel(t - t0)));
      ticks++;
    }
    svg.appendChild(el("svg:text", { x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle", class: "axis" },
      D.clock === "time" ? "time since the first event" : "heap events since the first"));
    svg.appendChild(el("svg:text", { x: 4, y: 14, class: "axis" }, yTitle));
    if (right) svg.appendChild(el("svg:text", { x: W - 4, y: 14, "text-anchor": "end", class: "axis" }, "RSS (right axis)"));
    var lx = L + 150;
    series.forEach(function (s) {
      var side = s.on || "left";
      var d = s.pts.map(function (p, i) { return (i ? "L" : "M") + xs(p[0]).toFixed(1) + " " + ys(p[1], side).toFixed(1); }).join(" ");
      svg.appendChild(el("svg:path", { d: d, fill: "none", stroke: s.color, "stroke-width": 2, "vector-effect": "non-scaling-stroke" }));
      if (s.pts.length < 64) s.pts.forEach(function (p) {
        svg.appendChild(el("svg:circle", { cx: xs(p[0]), cy: ys(p[1], side), r: 2.5, fill: s.color }));
      });
      // The legend: a swatch and the name, in the band above the plot.
      var item = el("svg:g", { class: "legend" });
      item.appendChild(el("svg:rect", { x: lx, y: 6, width: 12, height: 8, fill: s.color }));
      item.appendChild(el("svg:text", { x: lx + 16, y: 14 }, s.name));
      svg.appendChild(item);
      lx += 24 + 7 * s.name.length;
    });
    svg.setAttribute("data-points", String(sl.length));
    svg.setAttribute("data-ticks", String(ticks));
    svg._geom = { L: L, R: R, W: W, T: T, B: B, H: H, t0: t0, t1: t1 };
  }
  var memory = [
    { name: "most bytes live in the slice", color: "#c33", level: true, get: function (x) { return x.max_live_bytes; } },
    { name: "bytes live at its end", color: "#36c", level: true, get: function (x) { return x.live_bytes; } }
  ];
  if (D.rss.length && D.clock === "time") memory.push({ name: "resident set size (RSS)", color: "#888", on: "right", points: D.rss });
  lines("memory", memory, "bytes", "heap bytes");
  document.getElementById("memory").setAttribute("data-rss", String(D.clock === "time" ? D.rss.length : 0));
  lines("allocations", [
    { name: "allocations", color: "#393", get: function (x) { return x.allocations; } },
    { name: "frees", color: "#a60", get: function (x) { return x.frees; } }
  ], "", "calls per slice");

  // Bar chart of buckets, with both axes titled; at most ten x labels, so
  // that they never run into each other.
  function bars(id, rows, label, value, unit, xTitle, yTitle) {
    var svg = document.getElementById(id), W = 1000, H = 240, L = 74, T = 26, B = 40;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    if (!rows.length) { svg.appendChild(el("svg:text", { x: 10, y: 20 }, "nothing to show")); return; }
    var max = 1; rows.forEach(function (r) { max = Math.max(max, value(r)); });
    var w = (W - L - 14) / rows.length, every = Math.ceil(rows.length / 10), labels = 0;
    for (var g = 0; g <= 4; g++) {
      var y = H - B - (H - B - T) * g / 4;
      svg.appendChild(el("svg:line", { x1: L, x2: W - 14, y1: y, y2: y, stroke: "#e4e4e4" }));
      svg.appendChild(el("svg:text", { x: L - 6, y: y + 4, "text-anchor": "end" }, human(max * g / 4, unit)));
    }
    rows.forEach(function (r, i) {
      var h = (H - B - T) * value(r) / max, x = L + i * w;
      var rect = el("svg:rect", { x: x + 1, y: H - B - h, width: Math.max(1, w - 2), height: h, fill: "#5a8" });
      rect.appendChild(el("svg:title", {}, label(r) + ": " + human(value(r), unit)));
      svg.appendChild(rect);
      if (i % every === 0) {
        svg.appendChild(el("svg:text", { x: x + w / 2, y: H - B + 16, "text-anchor": "middle" }, label(r)));
        labels++;
      }
    });
    svg.appendChild(el("svg:text", { x: (L + W) / 2, y: H - 6, "text-anchor": "middle", class: "axis" }, xTitle));
    svg.appendChild(el("svg:text", { x: 4, y: 14, class: "axis" }, yTitle));
    svg.setAttribute("data-points", String(rows.length));
    svg.setAttribute("data-ticks", String(labels));
  }
  bars("sizes", D.sizes, function (b) { return b.low === b.high ? String(b.low) : "≤" + human(b.high, "bytes"); },
    function (b) { return b.count; }, "", "allocation size (bytes, power-of-two buckets)", "allocations");
  bars("lifetimes", D.lifetimes.buckets, function (b) { return "≤" + clockLabel(b.high); },
    function (b) { return b.objects; }, "", "lifetime (from allocation to free)", "objects");

  // Time ranges. Dragging over the memory chart chooses a range of the
  // grid's slices (each stack's activity per slice, D.slices); the flame
  // graph, the trees and the top tables then show, per stack, what was
  // made in the range (allocations, bytes, frees) or what was live at its
  // end (allocated before it, not yet freed) — the switch chooses. "clear"
  // goes back to the whole trace.
  var range = null;
  var RANGE_COSTS = ["allocations made in range", "bytes made in range", "frees in range",
    "bytes live at range end", "bytes freed in range"];
  // A thread filter: what one thread allocated of each stack.
  var THREAD_COSTS = ["allocations by the thread", "bytes by the thread", "–", "–", "–"];
  var thread = -1;
  function costNames() { return range ? RANGE_COSTS : thread >= 0 ? THREAD_COSTS : D.costs; }
  function costsOf(i) {
    if (!range && thread >= 0) {
      var t = [0, 0, 0, 0, 0];
      (D.by_thread[i] || []).forEach(function (e) { if (e[0] === thread) { t[0] += e[1]; t[1] += e[2]; } });
      return t;
    }
    if (!range) return D.stacks[i][1];
    var c = [0, 0, 0, 0, 0];
    (D.slices[i] || []).forEach(function (s) {
      if (s[0] < range.kb) c[3] += s[2] - s[4];
      if (s[0] >= range.ka && s[0] < range.kb) { c[0] += s[1]; c[1] += s[2]; c[2] += s[3]; c[4] += s[4]; }
    });
    return c;
  }
  function setRange(a, b) {
    var g = D.grid, w = g.width;
    var ka = Math.max(0, Math.floor((Math.min(a, b) - g.t0) / w));
    var kb = Math.max(ka + 1, Math.ceil((Math.max(a, b) - g.t0) / w));
    range = { ka: ka, kb: kb, from: g.t0 + ka * w, to: g.t0 + kb * w };
    thread = -1; tsel.value = -1;
    var mem = document.getElementById("memory"), m = mem._geom;
    var x = function (t) { return m.L + (m.W - m.L - m.R) * (Math.min(t, m.t1) - m.t0) / Math.max(1, m.t1 - m.t0); };
    var band = document.getElementById("band");
    if (!band) { band = el("svg:rect", { id: "band", fill: "#36c", opacity: 0.15 }); mem.insertBefore(band, mem.firstChild); }
    band.setAttribute("x", x(range.from)); band.setAttribute("width", Math.max(1, x(range.to) - x(range.from)));
    band.setAttribute("y", m.T); band.setAttribute("height", m.H - m.B - m.T);
    band.style.display = "";
    costOptions();
    costSel.value = mode.value === "live" ? 3 : 1;
    rebuild();
  }
  function clearRange() {
    range = null;
    var band = document.getElementById("band"); if (band) band.style.display = "none";
    costOptions();
    rebuild();
  }
  // The range's tables: what it made and what was live at its end, by
  // allocation site (the innermost frame), over every stack.
  function rangeTops() {
    var box = document.getElementById("rangetops"), info = document.getElementById("range");
    box.textContent = "";
    if (!range) { info.textContent = D.grid ? "drag over the memory chart to choose a time range" : ""; return; }
    var sites = {}, all = [0, 0, 0, 0, 0];
    D.stacks.forEach(function (s, i) {
      var cs = costsOf(i), f = s[0][s[0].length - 1], r = sites[f] || (sites[f] = [0, 0, 0, 0, 0]);
      for (var c = 0; c < 5; c++) { r[c] += cs[c]; all[c] += cs[c]; }
    });
    info.textContent = "range " + clockLabel(range.from - D.grid.t0) + " – " + clockLabel(range.to - D.grid.t0) +
      ": " + human(all[0], "") + " allocations and " + human(all[1], "bytes") + " made in it, " +
      human(all[2], "") + " frees; " + human(all[3], "bytes") + " live at its end";
    ["from", "to"].forEach(function (k) { info.setAttribute("data-" + k, String(range[k])); });
    info.setAttribute("data-allocations", String(all[0]));
    info.setAttribute("data-bytes", String(all[1]));
    info.setAttribute("data-live", String(all[3]));
    [[0, "most allocations made in the range"], [1, "most bytes made in the range"],
     [3, "most bytes live at the range's end"]].forEach(function (spec) {
      var c = spec[0], rows = Object.keys(sites).filter(function (f) { return sites[f][c] > 0; })
        .sort(function (a, b) { return sites[b][c] - sites[a][c]; }).slice(0, 10);
      var div = el("div", { class: "top" }); div.appendChild(el("h3", {}, spec[1]));
      var t = el("table", { "data-range-cost": String(c) });
      rows.forEach(function (f) {
        var name = D.frames[f], tr = el("tr", { class: "link", title: name });
        tr.appendChild(el("td", { class: "name" }, short(name)));
        tr.appendChild(el("td", {}, human(sites[f][c], unitOf(c))));
        tr.appendChild(el("td", {}, (100 * sites[f][c] / Math.max(1, all[c])).toFixed(1) + " %"));
        tr.onclick = function () { costSel.value = c; search.value = name; rebuild(); document.getElementById("flame").scrollIntoView(); };
        t.appendChild(tr);
      });
      if (!rows.length) t.appendChild(el("tr")).appendChild(el("td", {}, "none"));
      div.appendChild(t); box.appendChild(div);
    });
  }
  var tsel = document.getElementById("thread");
  (function () {
    tsel.appendChild(el("option", { value: -1 }, "every thread"));
    var slot = {};
    (D.thread_slots || []).forEach(function (tid, k) { slot[tid] = k; });
    var any = (D.by_thread || []).some(function (v) { return v.length > 0; });
    D.threads.forEach(function (r) {
      if (any && slot[r[0]] !== undefined) tsel.appendChild(el("option", { value: slot[r[0]] }, "thread " + r[0]));
    });
    tsel.disabled = tsel.options.length < 3;
    tsel.onchange = function () {
      var k = +tsel.value;
      if (range) clearRange();
      thread = k;
      costOptions();
      rebuild();
    };
  })();
  var mode = document.getElementById("rangemode");
  mode.onchange = function () { if (range) { costSel.value = mode.value === "live" ? 3 : 1; rebuild(); } };
  document.getElementById("clear").onclick = clearRange;
  (function () {
    var mem = document.getElementById("memory"), start = null;
    if (!D.grid || !mem._geom) { document.getElementById("rangebar").style.display = "none"; return; }
    function timeAt(ev) {
      var r = mem.getBoundingClientRect(), m = mem._geom;
      var vx = (ev.clientX - r.left) * m.W / Math.max(1, r.width);
      var f = Math.min(1, Math.max(0, (vx - m.L) / (m.W - m.L - m.R)));
      return m.t0 + f * (m.t1 - m.t0);
    }
    mem.style.cursor = "crosshair";
    mem.onmousedown = function (ev) { start = timeAt(ev); ev.preventDefault(); };
    mem.onmouseup = function (ev) {
      if (start === null) return;
      var end = timeAt(ev), a = start; start = null;
      if (Math.abs(end - a) > 0) setRange(a, end);
    };
  })();

  // The stacks as a tree (top-down: outermost first; bottom-up: reversed).
  function build(cost, reverse) {
    var root = { name: "all", v: 0, all: [0, 0, 0, 0, 0], kids: {} };
    D.stacks.forEach(function (s, i) {
      var frames = reverse ? s[0].slice().reverse() : s[0], node = root, cs = costsOf(i);
      var add = function (n) {
        n.v += cs[cost]; for (var c = 0; c < 5; c++) n.all[c] += cs[c];
        if (cs[0] > 0 || cs[cost] > 0) (n.stacks || (n.stacks = [])).push(i);
      };
      add(root);
      frames.forEach(function (f) {
        var k = node.kids[f];
        if (!k) { k = node.kids[f] = { name: D.frames[f], id: f, v: 0, all: [0, 0, 0, 0, 0], kids: {} }; }
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
  // The cost switch's options: the trace's costs, a range's or a thread's.
  function costOptions() {
    costSel.textContent = "";
    costNames().forEach(function (c, i) { costSel.appendChild(el("option", { value: i }, c)); });
  }
  costOptions();
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
      b.textContent = w > 30 ? short(n.name) : "";
      if (q && n.name.toLowerCase().indexOf(q) >= 0) { b.className += " hit"; hits++; }
      b.onclick = function () { zoom = n; draw(); shape(n); calls(n); };
      b.onmouseover = function () {
        // Every cost of the frame's stacks, and their blocks' mean size.
        var a = n.all, mean = a[0] ? human(a[1] / a[0], "bytes") : "–";
        hover.textContent = n.name + " — " + human(n.v, unitOf(cost)) + " " + costNames()[cost] +
          " (" + (100 * n.v / Math.max(1, tree.v)).toFixed(2) + "% of all); " + human(a[0], "") +
          " allocations of " + mean + " on average, " + human(a[2], "") + " temporary, " +
          human(a[3], "bytes") + " at the peak, " + human(a[4], "bytes") + " leaked";
      };
      flame.appendChild(b); boxes++;
      var cx = x;
      children(n).forEach(function (k) { var kw = w * k.v / n.v; place(k, cx, kw, d + 1); cx += kw; });
    }
    place(top, 0, width, 0);
    flame.style.height = ((depth + 1) * rowH + 2) + "px";
    flame.setAttribute("data-boxes", String(boxes));
    // Matches counted over the whole tree: a frame too narrow to draw
    // still matches, and says so.
    var all = 0;
    (function count(n) {
      if (n.v === 0) return;
      if (q && n.name.toLowerCase().indexOf(q) >= 0) all++;
      children(n).forEach(count);
    })(top);
    document.getElementById("matched").textContent = !q ? "" :
      all + " frames match" + (all > hits ? " (" + (all - hits) + " too narrow to draw: see the tables)" : "");
    flame.setAttribute("data-matches", String(all));
    var frame = document.getElementById("flamebox");
    frame.scrollTop = frame.scrollHeight;
  }
  // The selected frame's blocks: their sizes and lifetimes, over the
  // stacks through it (D.shapes: bucket k < 65 sizes, 65 + k lifetimes).
  function shape(n) {
    var box = document.getElementById("shape");
    box.textContent = "";
    var sizes = {}, lives = {}, allocs = 0, frees = 0;
    (n.stacks || []).forEach(function (i) {
      (D.shapes[i] || []).forEach(function (e) {
        if (e[0] < 65) { sizes[e[0]] = (sizes[e[0]] || 0) + e[1]; allocs += e[1]; }
        else { lives[e[0] - 65] = (lives[e[0] - 65] || 0) + e[1]; frees += e[1]; }
      });
    });
    var high = function (k) { return k === 0 ? 0 : k >= 64 ? Math.pow(2, 64) : Math.pow(2, k) - 1; };
    [[sizes, allocs, "sizes of its " + human(allocs, "") + " allocations", function (k) { return "≤ " + human(high(k), "bytes"); }],
     [lives, frees, "lifetimes of its " + human(frees, "") + " freed blocks", function (k) { return "≤ " + clockLabel(high(k)); }]]
      .forEach(function (h) {
        var div = el("div", { class: "top" }); div.appendChild(el("h3", {}, short(n.name) + ": " + h[2]));
        var t = el("table", { "data-count": String(h[1]) });
        Object.keys(h[0]).map(Number).sort(function (a, b) { return a - b; }).forEach(function (k) {
          var tr = el("tr", { "data-bucket": String(k), "data-n": String(h[0][k]) });
          tr.appendChild(el("td", {}, h[3](k)));
          tr.appendChild(el("td", {}, human(h[0][k], "")));
          tr.appendChild(el("td", {}, (100 * h[0][k] / Math.max(1, h[1])).toFixed(1) + " %"));
          t.appendChild(tr);
        });
        div.appendChild(t); box.appendChild(div);
      });
  }
  // Callers and callees of the selected frame's function, over every
  // stack it is in (each stack counted once per caller and per callee),
  // in the cost shown.
  function calls(n) {
    var box = document.getElementById("calls"), cost = +costSel.value;
    box.textContent = "";
    if (n.id === undefined) return;
    var callers = {}, callees = {}, through = 0;
    D.stacks.forEach(function (s, i) {
      var f = s[0], v = costsOf(i)[cost], seenIn = {}, seenOut = {}, hit = false;
      if (!v) return;
      for (var p = 0; p < f.length; p++) {
        if (f[p] !== n.id) continue;
        hit = true;
        var up = p > 0 ? D.frames[f[p - 1]] : "(the stack's root)";
        var down = p + 1 < f.length ? D.frames[f[p + 1]] : "(its own allocations)";
        if (!seenIn[up]) { seenIn[up] = 1; callers[up] = (callers[up] || 0) + v; }
        if (!seenOut[down]) { seenOut[down] = 1; callees[down] = (callees[down] || 0) + v; }
      }
      if (hit) through += v;
    });
    [[callers, "callers of " + short(n.name)], [callees, "callees of " + short(n.name)]].forEach(function (h) {
      var div = el("div", { class: "top" }); div.appendChild(el("h3", {}, h[1] + " (" + costNames()[cost] + ")"));
      var t = el("table", { "data-through": String(through) });
      Object.keys(h[0]).sort(function (a, b) { return h[0][b] - h[0][a]; }).slice(0, 20).forEach(function (name) {
        var tr = el("tr", { title: name, "data-n": String(h[0][name]) });
        tr.appendChild(el("td", { class: "name" }, short(name)));
        tr.appendChild(el("td", {}, human(h[0][name], unitOf(cost))));
        tr.appendChild(el("td", {}, (100 * h[0][name] / Math.max(1, through)).toFixed(1) + " %"));
        t.appendChild(tr);
      });
      div.appendChild(t); box.appendChild(div);
    });
  }
  function rebuild() { tree = build(+costSel.value, false); zoom = null; draw(); tables(); rangeTops();
    flame.setAttribute("data-total", String(tree.v)); }
  costSel.onchange = rebuild;
  search.oninput = draw;
  document.getElementById("reset").onclick = function () { zoom = null; draw(); };

  // Top-down and bottom-up trees: every cost, largest first, the first
  // level open; a click on a row folds or unfolds it; the filter keeps the
  // paths through a frame whose name holds the text (and opens them).
  var filter = document.getElementById("filter");
  function table(id, reverse) {
    var t = document.getElementById(id), cost = +costSel.value, q = filter.value.toLowerCase();
    t.textContent = "";
    var head = el("tr"); head.appendChild(el("th", {}, "call stack"));
    costNames().forEach(function (c) { head.appendChild(el("th", {}, c)); });
    t.appendChild(head);
    var rows = 0;
    function holds(n) {
      if (n.name.toLowerCase().indexOf(q) >= 0) return true;
      return children(n).some(holds);
    }
    function add(n, d, after) {
      if (n.v === 0 || (q && !holds(n))) return after;
      var kids = children(n), tr = el("tr", { class: kids.length ? "fold" : "" });
      var open = q ? true : d === 0 && rows < 20;
      var name = el("td", { class: "name", title: n.name }, (kids.length ? (open ? "▾ " : "▸ ") : "  ") + short(n.name));
      name.style.paddingLeft = (8 + 16 * d) + "px";
      tr.appendChild(name);
      n.all.forEach(function (v, c) { tr.appendChild(el("td", {}, human(v, unitOf(c)))); });
      if (after) t.insertBefore(tr, after.nextSibling); else t.appendChild(tr);
      rows++;
      var shown = [];
      function show() {
        var last = tr;
        kids.slice(0, 200).forEach(function (k) { last = add(k, d + 1, last); });
        shown = collect(tr, d);
      }
      function collect(row, depth) {
        var out = [], r = row.nextSibling;
        while (r && +r.getAttribute("data-depth") > depth) { out.push(r); r = r.nextSibling; }
        return out;
      }
      tr.setAttribute("data-depth", String(d));
      if (kids.length) tr.onclick = function () {
        if (shown.length) { shown.forEach(function (r) { r.remove(); }); shown = []; name.firstChild.textContent = "▸ " + short(n.name); }
        else { show(); name.firstChild.textContent = "▾ " + short(n.name); }
        t.setAttribute("data-rows", String(t.rows.length - 1));
      };
      if (open && kids.length) show();
      var lastRow = tr;
      while (lastRow.nextSibling && +lastRow.nextSibling.getAttribute("data-depth") > d) lastRow = lastRow.nextSibling;
      return lastRow;
    }
    var after = null;
    children(build(cost, reverse)).slice(0, 200).forEach(function (k) { after = add(k, 0, after); });
    t.setAttribute("data-rows", String(t.rows.length - 1));
  }
  function tables() { table("topdown", false); table("bottomup", true); }
  filter.oninput = tables;

  // The threads that allocated most bytes, with their share.
  (function () {
    var t = document.getElementById("threads"), all = D.thread_bytes;
    var head = el("tr");
    ["thread", "allocations", "frees", "reallocs", "bytes allocated", "share of bytes"].forEach(function (h) {
      head.appendChild(el("th", {}, h));
    });
    t.appendChild(head);
    D.threads.forEach(function (r) {
      var tr = el("tr");
      [String(r[0]), human(r[1].allocs, ""), human(r[1].frees, ""), human(r[1].reallocs, ""),
       human(r[1].bytes_allocated, "bytes"), (100 * r[1].bytes_allocated / Math.max(1, all)).toFixed(1) + " %"]
        .forEach(function (v) { tr.appendChild(el("td", {}, v)); });
      t.appendChild(tr);
    });
    if (D.thread_count > D.threads.length) {
      var more = el("tr"); more.appendChild(el("td", {}, (D.thread_count - D.threads.length) +
        " more threads: tramp stats --json lists every one")); t.appendChild(more);
    }
    t.setAttribute("data-rows", String(D.threads.length));
  })();
  // Where the stacks merged to bound the page are.
  if (D.merged_stacks > 0) document.getElementById("merged").textContent = "[other stacks] is " +
    D.merged_stacks + " call stacks merged into one row to keep the page small; the tables above count " +
    "them in full, and `tramp stats --sites --top N` or `tramp stats --folded COST` list every one.";
  rebuild();
  }

  if (!ALL.run) { render(ALL); return; }
  // The run: a switch of its images (the one that used the most first),
  // and each one's heap over the run's time, a line each.
  document.getElementById("runbox").style.display = "";
  var sel = document.getElementById("process");
  ALL.labels.forEach(function (l, i) {
    var o = document.createElement("option"); o.value = i; o.textContent = l; sel.appendChild(o);
  });
  sel.value = ALL.chosen;
  sel.onchange = function () { render(ALL.pages[+sel.value]); };
  document.getElementById("runnote").textContent = ALL.images + " images (processes, or programs an exec started)" +
    (ALL.images > ALL.pages.length ? "; the " + ALL.pages.length + " whose heap peaked highest are here, `tramp stats` lists all" : "");
  (function lanes() {
    var svg = document.getElementById("lanes"), W = 1000, H = 240, L = 74, R = 14, T = 26, B = 40;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    var t1 = 1, max = 1, colors = ["#c33", "#36c", "#393", "#c90", "#939", "#099", "#663", "#c3c", "#555", "#36f", "#f63", "#3c9"];
    ALL.lanes.forEach(function (l) { l.points.forEach(function (p) { t1 = Math.max(t1, p[0]); max = Math.max(max, p[1]); }); });
    var xs = function (t) { return L + (W - L - R) * t / t1; }, ys = function (v) { return H - B - (H - B - T) * v / max; };
    for (var g = 0; g <= 4; g++) {
      svg.appendChild(el("svg:line", { x1: L, x2: W - R, y1: ys(max * g / 4), y2: ys(max * g / 4), stroke: "#e4e4e4" }));
      svg.appendChild(el("svg:text", { x: L - 6, y: ys(max * g / 4) + 4, "text-anchor": "end" }, human(max * g / 4, "bytes")));
    }
    for (var k = 0; k <= 5; k++) {
      svg.appendChild(el("svg:text", { x: xs(t1 * k / 5), y: H - B + 16, "text-anchor": k === 0 ? "start" : k === 5 ? "end" : "middle" },
        timeLabel(t1 * k / 5)));
    }
    svg.appendChild(el("svg:text", { x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle", class: "axis" },
      ALL.common ? "time since the run's first event" : "time since each image's first event"));
    svg.appendChild(el("svg:text", { x: 4, y: 14, class: "axis" }, "heap bytes live"));
    var lx = L + 150;
    ALL.lanes.forEach(function (l, i) {
      var c = colors[i % colors.length];
      // Steps: a slice's level holds until the next slice with events.
      var d = l.points.map(function (p, j) {
        var y = ys(p[1]).toFixed(1), x = xs(p[0]).toFixed(1);
        return j ? "L" + x + " " + ys(l.points[j - 1][1]).toFixed(1) + " L" + x + " " + y : "M" + x + " " + y;
      }).join(" ");
      svg.appendChild(el("svg:path", { d: d, fill: "none", stroke: c, "stroke-width": 2, "vector-effect": "non-scaling-stroke" }));
      var item = el("svg:g", { class: "legend" });
      item.appendChild(el("svg:rect", { x: lx, y: 6, width: 12, height: 8, fill: c }));
      item.appendChild(el("svg:text", { x: lx + 16, y: 14 }, l.label));
      svg.appendChild(item);
      lx += 24 + 7 * l.label.length;
    });
    svg.setAttribute("data-lanes", String(ALL.lanes.length));
  })();
  render(ALL.pages[ALL.chosen]);
})();
