import Foundation

/// The flame graph page: HTML, CSS and JavaScript, with `{{TITLE}}` and `{{DATA}}` to fill in.
///
/// The graph is drawn root at the top (an icicle), one row per stack depth, widths proportional to
/// time. Hover shows the frame, its time and its share; click zooms into a frame (click the root or
/// press Escape to zoom out); the search box highlights matching frames and sums their time. App
/// frames are blue, system frames orange, synthetic frames grey.
enum FlameGraphTemplate {
    static let page = #"""
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{TITLE}}</title>
        <style>
          :root { --row: 18px; }
          * { box-sizing: border-box; }
          body { margin: 0; font: 13px/1.4 -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #1d2330; background: #fafbfc; }
          header { padding: 12px 16px 8px; border-bottom: 1px solid #dde1e6; background: #fff; }
          h1 { font-size: 17px; margin: 0 0 6px; }
          .stats { display: flex; flex-wrap: wrap; gap: 6px 22px; margin: 0; }
          .stats div { display: flex; flex-direction: column; }
          .stats dt { font-size: 11px; text-transform: uppercase; letter-spacing: .04em; color: #66707f; }
          .stats dd { margin: 0; font-weight: 600; font-size: 14px; }
          .toolbar { display: flex; align-items: center; gap: 12px; margin-top: 10px; flex-wrap: wrap; }
          .toolbar input { font: inherit; padding: 3px 8px; width: 320px; border: 1px solid #b9c0ca; border-radius: 4px; }
          .toolbar button { font: inherit; padding: 3px 10px; border: 1px solid #b9c0ca; border-radius: 4px; background: #f1f3f6; cursor: pointer; }
          .legend { display: flex; gap: 12px; color: #4a5260; }
          .legend span::before { content: ""; display: inline-block; width: 11px; height: 11px; margin-right: 4px; vertical-align: -1px; border-radius: 2px; background: var(--c); }
          #status { color: #4a5260; }
          #chart { position: relative; margin: 8px 16px 24px; }
          .fr { position: absolute; height: calc(var(--row) - 1px); overflow: hidden; white-space: nowrap; text-overflow: ellipsis;
                padding: 0 3px; font: 11.5px/17px ui-monospace, "DejaVu Sans Mono", monospace; color: #14171c; border-radius: 2px;
                cursor: pointer; border-right: 1px solid #fafbfc; }
          .fr.app { background: hsl(var(--h), 62%, var(--l)); }
          .fr.sys { background: hsl(var(--h), 85%, var(--l)); }
          .fr.syn { background: #c9ced6; color: #333; font-style: italic; }
          .fr.anc { opacity: .55; }
          .fr.match { background: #e3179a !important; color: #fff; }
          .fr.dim { opacity: .35; }
          #tip { position: fixed; pointer-events: none; display: none; max-width: 640px; padding: 7px 9px; background: #1d2330; color: #f4f6f8;
                 border-radius: 5px; font-size: 12px; box-shadow: 0 3px 12px rgba(0,0,0,.25); z-index: 10; word-break: break-word; }
          #tip b { display: block; font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-weight: 600; margin-bottom: 3px; }
          #tip span { color: #aab3c0; }
          noscript { display: block; padding: 16px; }
        </style>
        </head>
        <body>
        <header>
          <h1 id="title">{{TITLE}}</h1>
          <dl class="stats" id="stats"></dl>
          <div class="toolbar">
            <input id="search" type="search" placeholder="Search frames (substring or /regex/)" aria-label="Search frames">
            <button id="reset" type="button">Reset zoom</button>
            <span class="legend"><span style="--c: hsl(205, 62%, 62%)">app frame</span><span style="--c: hsl(28, 85%, 62%)">system frame</span><span style="--c: #c9ced6">no stack / syscall</span><span style="--c: #e3179a">search match</span></span>
            <span id="status"></span>
          </div>
        </header>
        <noscript>This flame graph needs JavaScript.</noscript>
        <div id="chart" role="img" aria-label="Flame graph of stall samples"></div>
        <div id="tip"></div>
        <script type="application/json" id="flame-data">{{DATA}}</script>
        <script>
        "use strict";
        (function () {
          const data = JSON.parse(document.getElementById("flame-data").textContent);
          const frames = data.frames;
          const ROW = 18;
          // Flatten the tree in pre-order: the subtree of node i is nodes[i .. i + size - 1].
          const nodes = [];
          (function flatten() {
            const stack = [{ node: data.root, depth: 0, x: 0, parent: -1 }];
            while (stack.length) {
              const item = stack.pop();
              const index = nodes.length;
              nodes.push({ f: item.node.f, w: item.node.w, n: item.node.n, d: item.depth, x: item.x, p: item.parent, size: 1 });
              const children = item.node.c || [];
              let x = item.x;
              const pending = [];
              for (const child of children) { pending.push({ node: child, depth: item.depth + 1, x: x, parent: index }); x += child.w; }
              for (let k = pending.length - 1; k >= 0; k--) stack.push(pending[k]);
            }
            for (let i = nodes.length - 1; i > 0; i--) nodes[nodes[i].p].size += nodes[i].size;
          })();
          const total = nodes.length ? nodes[0].w : 0;
          const chart = document.getElementById("chart");
          const tip = document.getElementById("tip");
          const status = document.getElementById("status");
          let zoom = 0;
          let matcher = null;

          function ms(value) {
            if (value >= 60000) return (value / 60000).toFixed(1) + " min";
            if (value >= 1000) return (value / 1000).toFixed(2) + " s";
            return (value >= 100 ? value.toFixed(0) : value.toFixed(1)) + " ms";
          }
          function pct(part, whole) { return whole > 0 ? (part / whole * 100).toFixed(1) + " %" : "–"; }
          function hash(text) { let h = 0; for (let i = 0; i < text.length; i++) h = (h * 31 + text.charCodeAt(i)) | 0; return Math.abs(h); }

          function header() {
            const s = data.summary;
            const classes = Object.keys(s.classifications).sort().map(k => k + " " + s.classifications[k]).join(", ");
            const b = s.blockingCalls;
            const items = b ? [
              ["Call sites", String(b.callSites)], ["Distinct (fingerprints)", String(b.fingerprints)],
              ["Blocking calls", String(b.calls)], ["Blocked time", ms(b.blockedMs)],
              ["Longest call", ms(b.worstMs) + (b.worstFingerprint ? " · " + b.worstFingerprint : "")],
              ["Executables", s.executables.join(", ") || "–"],
              ["First / last report", (s.firstStart || "–") + " / " + (s.lastStart || "–")]
            ] : [
              ["Stalls", String(s.stalls)], ["Distinct (fingerprints)", String(s.fingerprints)],
              ["Total stall time", ms(s.totalStallMs)], ["Sampled time", ms(s.sampledMs) + " in " + s.samples + " samples"],
              ["Worst stall", ms(s.worstMs) + (s.worstFingerprint ? " · " + s.worstFingerprint : "")],
              ["Classification", classes || "–"], ["Executables", s.executables.join(", ") || "–"],
              ["First / last stall", (s.firstStart || "–") + " / " + (s.lastStart || "–")]
            ];
            if (s.hiddenNodes) items.push(["Not drawn", s.hiddenNodes + " calls with less than " + s.minPercent + " % of the samples each"]);
            const stats = document.getElementById("stats");
            for (const [label, value] of items) {
              const div = document.createElement("div");
              const dt = document.createElement("dt"); dt.textContent = label;
              const dd = document.createElement("dd"); dd.textContent = value;
              div.append(dt, dd); stats.append(div);
            }
          }

          function makeMatcher(text) {
            if (!text) return null;
            const regex = /^\/(.+)\/([a-z]*)$/.exec(text);
            if (regex) { try { const r = new RegExp(regex[1], regex[2].includes("i") ? regex[2] : regex[2] + "i"); return name => r.test(name); } catch (e) { return null; } }
            const needle = text.toLowerCase();
            return name => name.toLowerCase().includes(needle);
          }

          function matches(frame) { return matcher(frame.name) || (frame.full !== undefined && matcher(frame.full)); }

          function render() {
            const width = chart.clientWidth || 1200;
            const z = nodes[zoom];
            const scale = z.w > 0 ? width / z.w : 0;
            const fragment = document.createDocumentFragment();
            let maxDepth = 0;
            function box(i, left, w, ancestor) {
              const node = nodes[i];
              const frame = frames[node.f];
              const el = document.createElement("div");
              const kind = frame.synthetic ? "syn" : (frame.app ? "app" : "sys");
              el.className = "fr " + kind + (ancestor ? " anc" : "");
              if (!frame.synthetic) {
                const h = hash(frame.name);
                el.style.setProperty("--h", String(frame.app ? 195 + h % 30 : 14 + h % 30));
                el.style.setProperty("--l", String(frame.app ? 58 + h % 14 : 56 + (h >> 4) % 14) + "%");
              }
              if (matcher && matches(frame)) el.classList.add("match");
              el.style.left = left + "px";
              el.style.width = Math.max(w, 1) + "px";
              el.style.top = node.d * ROW + "px";
              el.dataset.i = i;
              if (w > 28) el.textContent = frame.name;
              fragment.append(el);
              if (node.d > maxDepth) maxDepth = node.d;
            }
            for (let a = nodes[zoom].p; a >= 0; a = nodes[a].p) box(a, 0, width, true);
            const end = zoom + z.size;
            for (let i = zoom; i < end; i++) {
              const node = nodes[i];
              const w = node.w * scale;
              if (w < 0.5) { i += node.size - 1; continue; }
              box(i, (node.x - z.x) * scale, w, false);
            }
            chart.replaceChildren(fragment);
            chart.style.height = (maxDepth + 1) * ROW + "px";
            updateStatus();
          }

          function updateStatus() {
            const parts = [];
            if (zoom !== 0) parts.push("zoomed into " + frames[nodes[zoom].f].name.slice(0, 60) + " (" + pct(nodes[zoom].w, total) + ")");
            if (matcher) {
              let matched = 0, count = 0;
              for (let i = 0; i < nodes.length; i++) {
                if (matches(frames[nodes[i].f])) { matched += nodes[i].w; count++; i += nodes[i].size - 1; }
              }
              parts.push("search: " + ms(matched) + " (" + pct(matched, total) + ") in " + count + " frame" + (count === 1 ? "" : "s"));
            }
            status.textContent = parts.join(" · ");
          }

          function showTip(event, i) {
            const node = nodes[i];
            const frame = frames[node.f];
            tip.replaceChildren();
            const name = document.createElement("b"); name.textContent = frame.name; tip.append(name);
            const lines = [
              ms(node.w) + " · " + pct(node.w, total) + " of all sampled time" + (zoom !== 0 ? " · " + pct(node.w, nodes[zoom].w) + " of the zoomed frame" : ""),
              node.n + " sample" + (node.n === 1 ? "" : "s") + (frame.synthetic ? "" : frame.app ? " · app frame" : " · system frame")
            ];
            if (frame.full) lines.push(frame.full);
            if (frame.image) lines.push("image " + frame.image);
            if (frame.file) lines.push(frame.file);
            for (const line of lines) { const span = document.createElement("span"); span.textContent = line; tip.append(span, document.createElement("br")); }
            tip.style.display = "block";
            const x = Math.min(event.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
            const y = event.clientY + 16 + tip.offsetHeight > window.innerHeight ? event.clientY - tip.offsetHeight - 10 : event.clientY + 16;
            tip.style.left = Math.max(4, x) + "px"; tip.style.top = Math.max(4, y) + "px";
          }

          chart.addEventListener("mousemove", event => {
            const target = event.target.closest(".fr");
            if (target) showTip(event, Number(target.dataset.i)); else tip.style.display = "none";
          });
          chart.addEventListener("mouseleave", () => { tip.style.display = "none"; });
          chart.addEventListener("click", event => {
            const target = event.target.closest(".fr");
            if (!target) return;
            zoom = Number(target.dataset.i) === zoom ? Math.max(nodes[zoom].p, 0) : Number(target.dataset.i);
            render();
          });
          document.getElementById("reset").addEventListener("click", () => { zoom = 0; render(); });
          document.getElementById("search").addEventListener("input", event => { matcher = makeMatcher(event.target.value.trim()); render(); });
          document.addEventListener("keydown", event => { if (event.key === "Escape") { zoom = 0; render(); } });
          window.addEventListener("resize", render);
          header();
          if (nodes.length) render();
          document.body.dataset.rendered = String(chart.childElementCount);
        })();
        </script>
        </body>
        </html>
        """#
}
