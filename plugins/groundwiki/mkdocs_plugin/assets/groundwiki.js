/*
 * groundwiki: the browser side of the MkDocs plugin. Plain ES2017, no build step, no library
 * but the vendored force-graph (global `ForceGraph`, loaded before this file).
 *
 * What it reads from the page (the HTML the plugin writes):
 *
 *   <div class="gw-graph" data-graph="URL of graph.json, relative to this page"
 *        data-base="URL of the site root, relative to this page, e.g. ../../"
 *        data-limit="the most nodes drawn at first; 0 or absent: all">
 *     The whole graph, 70vh high, with a filter box above it and a legend under it. Node and
 *     edge counts go to a `.gw-graph-stats` element among the div's parent's children, created
 *     inside the div when there is none. Past `data-limit` nodes it draws the most-linked ones
 *     (`data-drawn` holds how many) with a "Show all" button; the filter searches every node
 *     and draws the matches beside them.
 *
 *   <div class="gw-local-graph" data-graph="…" data-base="…" data-key="node id">
 *     The node `data-key` and its direct neighbours (edges both ways, every type) with the edges
 *     that touch it, 320px high, the centre node ringed.
 *
 *   Both get `data-rendered="<number of nodes drawn>"` after the first frame, and
 *   `data-gw-state="loading" | "ready" | "error"` (with a visible message on error).
 *
 *   <pre class="gw-source"> … <span class="gw-line" id="L7"><a class="gw-ln" href="#L7">7</a>…</span>
 *     On a raw source's page a fragment `#L10-L24` (or `#L10`) marks lines 10..24 with the class
 *     `gw-hl` and scrolls them into view. Shift-click on a line number extends the range.
 *
 * graph.json: {"version": 1, "nodes": [{id, type: "page"|"source", title, kind, tags, path, url}],
 *              "edges": [{source, target, type: "ref"|"wikilink"|"link"|"provenance", line, via}]}
 * Node `url` is relative to the site root; a click opens `data-base + url`.
 *
 * Works with mkdocs-material's instant navigation: it runs again on every `document$` emission
 * (and stops the graphs of pages that were navigated away from), else once on DOMContentLoaded.
 */
(function () {
  'use strict';

  if (window.groundwiki && window.groundwiki.loaded) return; // loaded twice: keep the first

  // --- colours --------------------------------------------------------------------------------

  // Readable on material's light ("default") and dark ("slate") schemes alike.
  const PALETTE = [
    '#f28e2b', '#e15759', '#59a14f', '#b07aa1', '#edc948',
    '#76b7b2', '#ff9da7', '#9c755f', '#17becf', '#bcbd22',
    '#4e79a7', '#d37295',
  ];
  const UNTAGGED_COLOR = '#6f7fd8';
  const SOURCE_COLOR = '#9e9e9e';
  const EDGE_STYLE = {
    ref: { color: [38, 166, 154], alpha: 0.75, dash: null, label: 'ref (frontmatter)' },
    wikilink: { color: [92, 107, 192], alpha: 0.65, dash: null, label: 'wikilink' },
    link: { color: [120, 144, 156], alpha: 0.65, dash: null, label: 'Markdown link' },
    provenance: { color: [158, 158, 158], alpha: 0.45, dash: [2, 2], label: 'citation (provenance)' },
  };
  const EDGE_PRIORITY = ['ref', 'wikilink', 'link', 'provenance'];
  const FULL_HEIGHT_VH = 70;
  const LOCAL_HEIGHT_PX = 320;

  function hashString(text) { // FNV-1a, 32 bit: the same tag gets the same colour everywhere
    let h = 0x811c9dc5;
    for (let i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i);
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    return h >>> 0;
  }

  function tagColor(tag) {
    return PALETTE[hashString(String(tag).toLowerCase()) % PALETTE.length];
  }

  function nodeColor(node) {
    if (node.type === 'source') return SOURCE_COLOR;
    return node.tags.length ? tagColor(node.tags[0]) : UNTAGGED_COLOR;
  }

  function rgba(rgb, alpha) {
    return 'rgba(' + rgb[0] + ',' + rgb[1] + ',' + rgb[2] + ',' + alpha + ')';
  }

  // The page's scheme, read from material's CSS variables (with fallbacks off material).
  const theme = { fg: '#333', fgLight: '#777', bg: '#fff', accent: '#526cfe', font: 'sans-serif' };

  function readTheme() {
    const style = getComputedStyle(document.body || document.documentElement);
    const pick = (name, fallback) => (style.getPropertyValue(name) || '').trim() || fallback;
    theme.fg = pick('--md-default-fg-color', '#333');
    theme.fgLight = pick('--md-default-fg-color--light', '#777');
    theme.bg = pick('--md-default-bg-color', '#fff');
    theme.accent = pick('--md-accent-fg-color', '#526cfe');
    theme.font = style.fontFamily || 'sans-serif';
  }

  // --- helpers --------------------------------------------------------------------------------

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text != null) node.textContent = text;
    return node;
  }

  function escapeHtml(text) {
    return String(text).replace(/[&<>"']/g, (c) => (
      { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]
    ));
  }

  function plural(n, one, many) {
    return n + ' ' + (n === 1 ? one : many);
  }

  function siteBase(div) {
    if (div.dataset.base != null && div.dataset.base !== '') return div.dataset.base;
    const graph = div.dataset.graph || '';
    const suffix = 'groundwiki/graph.json';
    return graph.endsWith(suffix) ? (graph.slice(0, -suffix.length) || './') : './';
  }

  // Node URLs are paths inside the site, named after the writers' files: they are always
  // joined to the site root, never read as a URL of their own, and whatever would leave this
  // site's http(s) (a `javascript:` page name, a host) is refused.
  function nodeHref(base, node) {
    if (node.url == null) return null; // e.g. a source without a page of its own
    const root = base === '' ? './' : (base.endsWith('/') ? base : base + '/');
    const path = node.url.replace(/^[\/\\]+/, '');
    const href = root + (/^[^/]*:/.test(path) ? './' + path : path);
    let resolved;
    try { resolved = new URL(href, document.baseURI); } catch (e) { return null; }
    const here = new URL(document.baseURI);
    if (resolved.protocol !== here.protocol || resolved.host !== here.host) return null;
    return resolved.href;
  }

  // --- graph.json -----------------------------------------------------------------------------

  const jsonCache = new Map(); // absolute URL → Promise of the parsed graph (per browser session)

  function loadGraph(url) {
    const absolute = new URL(url, document.baseURI).href;
    if (!jsonCache.has(absolute)) {
      const pending = fetch(absolute, { credentials: 'same-origin' })
        .then((response) => {
          if (!response.ok) throw new Error('HTTP ' + response.status + ' ' + response.statusText);
          return response.json();
        })
        .then(normalise);
      pending.catch(() => jsonCache.delete(absolute)); // let a later visit try again
      jsonCache.set(absolute, pending);
    }
    return jsonCache.get(absolute);
  }

  function normalise(data) {
    if (!data || !Array.isArray(data.nodes)) throw new Error('not a groundwiki graph.json');
    const nodes = [];
    const byId = new Map();
    for (const raw of data.nodes) {
      if (!raw || raw.id == null || byId.has(String(raw.id))) continue;
      const node = {
        id: String(raw.id),
        type: raw.type === 'source' ? 'source' : 'page',
        title: raw.title != null && raw.title !== '' ? String(raw.title) : String(raw.id),
        kind: raw.kind != null ? String(raw.kind) : '',
        tags: Array.isArray(raw.tags) ? raw.tags.map(String) : [],
        path: raw.path != null ? String(raw.path) : '',
        url: raw.url != null ? String(raw.url) : null, // "" is the site root itself
      };
      nodes.push(node);
      byId.set(node.id, node);
    }
    const edges = [];
    for (const raw of Array.isArray(data.edges) ? data.edges : []) {
      if (!raw) continue;
      const source = String(raw.source);
      const target = String(raw.target);
      if (!byId.has(source) || !byId.has(target)) continue;
      edges.push({ source, target, type: EDGE_STYLE[raw.type] ? raw.type : 'link' });
    }
    return { nodes, edges, byId };
  }

  // The drawn data: fresh objects (force-graph adds positions and swaps ids for nodes), parallel
  // edges of different types merged into one link drawn in the strongest type's style.
  function buildData(nodes, edges) {
    // Sources first, pages after: later nodes are drawn on top, with their labels.
    const order = (n) => (n.type === 'source' ? 0 : 1);
    nodes = nodes.slice().sort((a, b) => order(a) - order(b));
    const copies = nodes.map((n) => Object.assign({}, n, { degree: 0, color: nodeColor(n) }));
    const byId = new Map(copies.map((n) => [n.id, n]));
    const pairs = new Map();
    for (const e of edges) {
      if (e.source === e.target) continue;
      const key = e.source + '\u0000' + e.target;
      let link = pairs.get(key);
      if (!link) {
        link = { source: e.source, target: e.target, types: [] };
        pairs.set(key, link);
        byId.get(e.source).degree++;
        byId.get(e.target).degree++;
      }
      if (link.types.indexOf(e.type) < 0) link.types.push(e.type);
    }
    const links = Array.from(pairs.values());
    for (const link of links) {
      link.type = EDGE_PRIORITY.find((t) => link.types.indexOf(t) >= 0) || 'link';
      link.curvature = pairs.has(link.target + '\u0000' + link.source) ? 0.2 : 0;
    }
    return { nodes: copies, links, byId };
  }

  function nodeVal(node) {
    if (node.type === 'source') return 0.8;
    const base = 1 + Math.min(node.degree, 12) * 0.2;
    return node.kind === 'overview' ? base * 3 : base;
  }

  // --- one graph widget -----------------------------------------------------------------------

  const widgets = []; // live graphs, so navigation away can stop them

  function setup(div, local) {
    if (div.dataset.gwInit) return;
    div.dataset.gwInit = '1';
    div.dataset.gwState = 'loading';
    div.textContent = '';

    const toolbar = el('div', 'gw-graph-toolbar');
    let filter = null;
    if (!local) {
      filter = el('input', 'gw-graph-filter');
      filter.type = 'search';
      filter.placeholder = 'Filter by title or tag…';
      filter.setAttribute('aria-label', 'Highlight nodes whose title or tag contains');
      filter.autocomplete = 'off';
      filter.spellcheck = false;
      toolbar.appendChild(filter);
    } else {
      toolbar.appendChild(el('span', 'gw-graph-title', 'Local graph'));
    }
    let stats = null;
    if (!local && div.parentElement) {
      stats = Array.from(div.parentElement.children).find(
        (c) => c.classList.contains('gw-graph-stats') && !c.dataset.gwClaimed
      ) || null;
    }
    if (!stats) {
      stats = el('span', 'gw-graph-stats');
      toolbar.appendChild(stats);
    }
    stats.dataset.gwClaimed = '1';
    const canvasBox = el('div', 'gw-graph-canvas');
    canvasBox.appendChild(el('p', 'gw-graph-message', 'Loading the graph…'));
    const legend = el('div', 'gw-graph-legend');
    div.appendChild(toolbar);
    div.appendChild(canvasBox);
    div.appendChild(legend);

    const fail = (message, detail) => {
      div.dataset.gwState = 'error';
      if (detail) div.dataset.gwError = detail;
      canvasBox.textContent = '';
      canvasBox.classList.add('gw-graph-empty');
      const box = el('div', 'gw-graph-message gw-graph-error');
      box.setAttribute('role', 'alert');
      box.appendChild(el('strong', null, message));
      if (detail) box.appendChild(el('span', null, ' (' + detail + ')'));
      if (location.protocol === 'file:') {
        box.appendChild(el('br'));
        box.appendChild(el('span', null,
          'This page was opened straight from disk (file://), where browsers do not let pages ' +
          'read other files. Serve the site instead, e.g. with “mkdocs serve”, or with ' +
          '“python3 -m http.server” in the built site folder.'));
      }
      canvasBox.appendChild(box);
      stats.textContent = '';
    };

    if (typeof window.ForceGraph !== 'function') {
      fail('The graph library (force-graph) did not load.');
      return;
    }
    loadGraph(div.dataset.graph)
      .then((graph) => {
        if (!div.isConnected) return;
        let nodes = graph.nodes;
        let edges = graph.edges;
        let centre = null;
        if (local) {
          const key = div.dataset.key;
          if (!graph.byId.has(key)) {
            div.dataset.rendered = '0';
            div.dataset.gwState = 'ready';
            canvasBox.textContent = '';
            canvasBox.classList.add('gw-graph-empty');
            canvasBox.appendChild(el('p', 'gw-graph-message', 'This page is not in the graph.'));
            stats.textContent = '';
            return;
          }
          const keep = new Set([key]);
          for (const e of edges) {
            if (e.source === key) keep.add(e.target);
            if (e.target === key) keep.add(e.source);
          }
          // Drawn last, so its label stays on top. Only the centre's own edges: a clean star.
          nodes = nodes.filter((n) => keep.has(n.id) && n.id !== key).concat([graph.byId.get(key)]);
          edges = edges.filter((e) => e.source === key || e.target === key);
          centre = key;
        }
        const limit = local ? 0 : parseInt(div.dataset.limit || '0', 10) || 0;
        try {
          draw(div, { local, nodes, edges, centre, canvasBox, legend, stats, filter, toolbar, limit });
        } catch (error) {
          fail('Could not draw the graph.', error && error.message ? error.message : String(error));
        }
      }, (error) => {
        if (!div.isConnected) return;
        fail('Could not load the graph data from ' + div.dataset.graph + '.',
          error && error.message ? error.message : String(error));
      });
  }

  // The nodes a limited graph draws at first: the `limit` most linked (pages before sources on
  // a tie, then by title, so the same wiki always shows the same ones).
  function mostLinked(nodes, limit) {
    const order = (n) => (n.type === 'source' ? 1 : 0);
    return new Set(nodes.slice().sort((a, b) => b.degree - a.degree || order(a) - order(b) ||
      (a.title < b.title ? -1 : a.title > b.title ? 1 : 0)).slice(0, limit));
  }

  function draw(div, opts) {
    const { local, nodes, edges, centre, canvasBox, legend, stats, filter, toolbar } = opts;
    const full = buildData(nodes, edges);
    const base = siteBase(div);
    const pages = nodes.filter((n) => n.type === 'page').length;
    // A limited graph draws `top` (and the filter's matches beside them) until "Show all".
    const limited = opts.limit > 0 && full.nodes.length > opts.limit;
    const top = limited ? mostLinked(full.nodes, opts.limit) : null;
    // The links as force-graph was first given them (ids, not node objects): each new set of
    // drawn nodes gets fresh link objects, as force-graph rewrites the ones it is given.
    const linkSpecs = full.links.map((l) => Object.assign({}, l));
    const subset = (keep) => {
      if (!keep) return { nodes: full.nodes, links: linkSpecs.map((l) => Object.assign({}, l)) };
      const ids = new Set(Array.from(keep, (n) => n.id));
      return {
        nodes: full.nodes.filter((n) => keep.has(n)),
        links: linkSpecs.filter((l) => ids.has(l.source) && ids.has(l.target))
          .map((l) => Object.assign({}, l)),
      };
    };
    let showAll = !limited;
    let drawn = subset(top);
    const data = { nodes: full.nodes, links: full.links, byId: full.byId };
    const state = {
      hover: null, // node under the pointer
      hoverNeighbours: new Set(),
      query: '',
      matches: null, // Set of matching nodes while filtering
      centre: centre != null ? data.byId.get(centre) : null,
      pointerInside: false,
    };
    const neighbours = new Map(data.nodes.map((n) => [n, new Set()]));
    for (const link of data.links) {
      neighbours.get(data.byId.get(link.source)).add(data.byId.get(link.target));
      neighbours.get(data.byId.get(link.target)).add(data.byId.get(link.source));
    }
    if (state.centre) { state.centre.fx = 0; state.centre.fy = 0; }

    const isDimmed = (node) => {
      if (state.matches && !state.matches.has(node)) return true;
      if (state.hover && node !== state.hover && !state.hoverNeighbours.has(node)) return true;
      return false;
    };
    const isMarked = (node) => node === state.centre || node === state.hover ||
      (state.matches != null && state.matches.has(node));
    const labelsAt = local || drawn.nodes.length <= 30 ? 0 : 1.6; // zoom from which all titles show

    canvasBox.textContent = '';
    canvasBox.setAttribute('role', 'img');
    canvasBox.setAttribute('aria-label', (local ? 'Local graph: ' : 'Link graph: ') +
      plural(drawn.nodes.length, 'node', 'nodes') + ', ' + plural(edges.length, 'edge', 'edges'));
    const mount = el('div', 'gw-graph-mount');
    canvasBox.appendChild(mount);
    const size = () => ({
      width: canvasBox.clientWidth || (div.clientWidth || 600),
      height: canvasBox.clientHeight ||
        (local ? LOCAL_HEIGHT_PX : Math.round(window.innerHeight * FULL_HEIGHT_VH / 100)),
    });
    const first = size();
    let framed = false;
    let stopped = false;
    let userMoved = false; // once the reader zooms, pans or drags, stop re-fitting the view
    const started = Date.now();
    let ticks = 0;
    const fit = (ms) => { if (!userMoved) graph.zoomToFit(ms, local ? 34 : 44); }; // room for labels

    const graph = window.ForceGraph()(mount)
      .width(first.width)
      .height(first.height)
      .backgroundColor('rgba(0,0,0,0)')
      .nodeRelSize(4)
      .nodeId('id')
      .nodeVal(nodeVal)
      .nodeLabel((n) => {
        const facts = [n.type === 'source' ? 'raw source' : (n.kind || 'page')];
        if (n.tags.length) facts.push(n.tags.map((t) => '#' + t).join(' '));
        return '<div class="gw-tip"><b>' + escapeHtml(n.title) + '</b><br><small>' +
          escapeHtml(facts.join(' · ')) + '</small></div>';
      })
      .nodeCanvasObjectMode(() => 'replace')
      .nodeCanvasObject((node, ctx, scale) => paintNode(node, ctx, scale))
      .nodePointerAreaPaint((node, color, ctx) => {
        const r = Math.sqrt(nodeVal(node)) * 4 + 1;
        ctx.fillStyle = color;
        ctx.beginPath();
        ctx.arc(node.x, node.y, r, 0, 2 * Math.PI);
        ctx.fill();
      })
      .linkSource('source')
      .linkTarget('target')
      .linkCurvature('curvature')
      .linkColor((link) => {
        const style = EDGE_STYLE[link.type];
        const dim = isDimmed(link.source) || isDimmed(link.target);
        return rgba(style.color, dim ? 0.08 : style.alpha);
      })
      .linkWidth((link) => (state.hover && (link.source === state.hover ||
        link.target === state.hover) ? 2 : 1))
      .linkLineDash((link) => EDGE_STYLE[link.type].dash)
      .linkDirectionalArrowLength(3.5)
      .linkDirectionalArrowRelPos(1)
      .linkLabel((link) => escapeHtml(link.types.map((t) => EDGE_STYLE[t].label).join(', ')))
      .minZoom(0.05)
      .maxZoom(local ? 6 : 14)
      .warmupTicks(drawn.nodes.length > 600 ? 20 : 80)
      .cooldownTime(local ? 2500 : 4000)
      .onEngineTick(() => {
        // Keep the layout in view while it spreads out during its first second or so.
        if (framed && ++ticks % 15 === 0 && Date.now() - started < 1500) fit(0);
      })
      .onNodeHover((node) => {
        state.hover = node || null;
        state.hoverNeighbours = node ? neighbours.get(node) : new Set();
        canvasBox.classList.toggle('gw-graph-pointing', !!(node && node.url != null));
        kick();
      })
      .onNodeClick((node, event) => {
        const href = nodeHref(base, node);
        if (!href) return;
        if (event && (event.ctrlKey || event.metaKey || event.button === 1)) {
          window.open(new URL(href, document.baseURI).href, '_blank', 'noopener');
        } else {
          location.href = href;
        }
      })
      .onRenderFramePost(() => {
        // The first frames can come before the data is in (force-graph applies it a tick later).
        if (framed || !drawn.nodes.length || !Number.isFinite(drawn.nodes[0].x)) return;
        framed = true;
        fit(0);
        markRendered();
      })
      .onEngineStop(() => {
        if (stopped) return;
        stopped = true;
        fit(400);
      })
      .graphData(drawn);

    graph.d3Force('charge').strength(local ? -160 : -110);
    graph.d3Force('link').distance((link) => (link.type === 'provenance' ? 30 : local ? 55 : 45));

    function markRendered() {
      if (div.dataset.rendered == null || div.dataset.gwState !== 'ready') {
        div.dataset.rendered = String(drawn.nodes.length);
        div.dataset.gwState = 'ready';
      }
    }
    // A graph below the fold may not get an animation frame yet: count it as drawn anyway.
    setTimeout(markRendered, 1500);

    function paintNode(node, ctx, scale) {
      const r = Math.sqrt(nodeVal(node)) * 4;
      const dim = isDimmed(node);
      const marked = isMarked(node);
      ctx.globalAlpha = dim ? 0.18 : 1;
      ctx.beginPath();
      if (node.type === 'source') {
        const s = r * 1.7;
        ctx.rect(node.x - s / 2, node.y - s / 2, s, s);
      } else {
        ctx.arc(node.x, node.y, r, 0, 2 * Math.PI);
      }
      ctx.fillStyle = node.color;
      ctx.fill();
      ctx.lineWidth = 1 / scale;
      ctx.strokeStyle = theme.bg;
      ctx.stroke();
      if (marked) { // a ring in the accent colour: the centre, the hovered node, filter matches
        ctx.beginPath();
        ctx.arc(node.x, node.y, (node.type === 'source' ? r * 1.25 : r) + 3 / scale, 0, 2 * Math.PI);
        ctx.lineWidth = (node === state.centre ? 2.5 : 2) / scale;
        ctx.strokeStyle = theme.accent;
        ctx.stroke();
      }
      const showLabel = marked || scale >= labelsAt ||
        (state.hover && state.hoverNeighbours.has(node));
      if (showLabel && !(dim && !marked)) {
        let text = node.title;
        if (text.length > 42) text = text.slice(0, 40) + '…';
        const small = node.type === 'source' && !marked; // sources: quieter labels
        const size = Math.max((small ? 9.5 : 11) / scale, 1.5);
        ctx.font = (marked ? '600 ' : '') + size + 'px ' + theme.font;
        ctx.textAlign = 'center';
        ctx.textBaseline = 'top';
        const y = node.y + (node.type === 'source' ? r * 0.85 : r) + 2 / scale;
        ctx.lineJoin = 'round';
        ctx.lineWidth = 3 / scale;
        ctx.strokeStyle = theme.bg;
        ctx.strokeText(text, node.x, y);
        ctx.fillStyle = small ? theme.fgLight : theme.fg;
        ctx.fillText(text, node.x, y);
      }
      ctx.globalAlpha = 1;
    }

    // force-graph stops redrawing once the layout settles; hover and filter changes need frames.
    let idleTimer = null;
    function kick() {
      graph.autoPauseRedraw(false);
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        if (!state.pointerInside) graph.autoPauseRedraw(true);
      }, 500);
    }
    for (const type of ['pointerdown', 'wheel', 'touchstart']) {
      canvasBox.addEventListener(type, () => { userMoved = true; }, { passive: true });
    }
    canvasBox.addEventListener('pointerenter', () => {
      state.pointerInside = true;
      graph.autoPauseRedraw(false);
    });
    canvasBox.addEventListener('pointerleave', () => {
      state.pointerInside = false;
      if (state.hover) { state.hover = null; state.hoverNeighbours = new Set(); }
      kick();
    });

    function showStats() {
      const sources = data.nodes.length - pages;
      let text = plural(data.nodes.length, 'node', 'nodes') + ' (' + plural(pages, 'page', 'pages') +
        ', ' + plural(sources, 'source', 'sources') + ') · ' + plural(edges.length, 'edge', 'edges');
      if (drawn.nodes.length < data.nodes.length) {
        text += ' · ' + drawn.nodes.length + ' drawn' + (state.matches ? '' : ' (the most linked)');
      }
      if (state.matches) text += ' · ' + state.matches.size + ' matching';
      stats.textContent = text;
      div.dataset.drawn = String(drawn.nodes.length);
    }
    showStats();

    // Draw another set of nodes (a limited graph's filter, "Show all"): the nodes kept keep
    // their places, the new ones settle around them.
    function redraw() {
      let keep = null;
      if (!showAll) {
        keep = new Set(top);
        if (state.matches) {
          // The matches beside the most linked, at most as many again (the best linked first).
          const extra = Array.from(state.matches).filter((n) => !keep.has(n))
            .sort((a, b) => b.degree - a.degree).slice(0, opts.limit);
          for (const n of extra) keep.add(n);
        }
      }
      const next = subset(keep);
      if (next.nodes.length === drawn.nodes.length &&
          next.nodes.every((n, i) => n === drawn.nodes[i])) return;
      drawn = next;
      stopped = false;
      graph.graphData(drawn);
      canvasBox.setAttribute('aria-label', 'Link graph: ' +
        plural(drawn.nodes.length, 'node', 'nodes') + ' drawn of ' + data.nodes.length);
    }

    if (limited) {
      const all = el('button', 'gw-graph-all');
      all.type = 'button';
      const label = () => {
        all.textContent = showAll ? 'Show the ' + opts.limit + ' most linked'
          : 'Show all ' + data.nodes.length + ' nodes';
        all.setAttribute('aria-pressed', showAll ? 'true' : 'false');
      };
      label();
      all.addEventListener('click', () => {
        showAll = !showAll;
        label();
        redraw();
        showStats();
        kick();
      });
      toolbar.appendChild(all);
    }

    if (filter) {
      const apply = () => {
        const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
        state.query = words.join(' ');
        if (!words.length) {
          state.matches = null;
        } else {
          state.matches = new Set(data.nodes.filter((n) => {
            const hay = [n.title, n.id].concat(n.tags).join('\n').toLowerCase();
            return words.every((w) => hay.indexOf(w) >= 0);
          }));
        }
        div.classList.toggle('gw-graph-filtering', !!state.matches);
        if (limited) redraw();
        showStats();
        kick();
      };
      filter.addEventListener('input', apply);
      filter.addEventListener('keydown', (event) => {
        if (event.key === 'Enter' && state.matches && state.matches.size) {
          event.preventDefault();
          userMoved = true;
          graph.zoomToFit(400, 60, (n) => state.matches.has(n));
        } else if (event.key === 'Escape') {
          filter.value = '';
          apply();
        }
      });
      legend.addEventListener('click', (event) => {
        const item = event.target.closest('[data-tag]');
        if (!item) return;
        filter.value = filter.value === item.dataset.tag ? '' : item.dataset.tag;
        apply();
        filter.focus();
      });
      if (filter.value) apply(); // a value the browser restored on "back"
    }

    buildLegend(legend, data, !local);

    // Follow the box's size; pause drawing while the graph is off screen.
    let resizeObserver = null;
    if (window.ResizeObserver) {
      resizeObserver = new ResizeObserver(() => {
        const now = size();
        if (Math.abs(now.width - graph.width()) > 1) graph.width(now.width);
        if (Math.abs(now.height - graph.height()) > 1) graph.height(now.height);
      });
      resizeObserver.observe(canvasBox);
    }
    let intersectionObserver = null;
    if (window.IntersectionObserver) {
      intersectionObserver = new IntersectionObserver((entries) => {
        const visible = entries.some((entry) => entry.isIntersecting);
        if (visible) graph.resumeAnimation(); else if (framed) graph.pauseAnimation();
      });
      intersectionObserver.observe(canvasBox);
    }

    widgets.push({
      div,
      graph,
      redraw: kick,
      destroy() {
        clearTimeout(idleTimer);
        if (resizeObserver) resizeObserver.disconnect();
        if (intersectionObserver) intersectionObserver.disconnect();
        try { graph._destructor(); } catch (e) { graph.pauseAnimation(); }
      },
    });
  }

  function buildLegend(legend, data, clickable) {
    legend.textContent = '';
    const counts = new Map();
    let untagged = 0;
    let sources = 0;
    for (const n of data.nodes) {
      if (n.type === 'source') sources++;
      else if (!n.tags.length) untagged++;
      else counts.set(n.tags[0], (counts.get(n.tags[0]) || 0) + 1);
    }
    const tags = Array.from(counts.keys()).sort((a, b) => counts.get(b) - counts.get(a) ||
      a.localeCompare(b));
    const item = (swatchClass, color, text, count, tag) => {
      const node = el(tag != null && clickable ? 'button' : 'span', 'gw-legend-item');
      if (tag != null && clickable) {
        node.type = 'button';
        node.dataset.tag = tag;
        node.title = 'Highlight the nodes tagged ' + tag;
      }
      const swatch = el('span', 'gw-legend-swatch ' + swatchClass);
      if (swatchClass.indexOf('line') >= 0) swatch.style.borderTopColor = color;
      else swatch.style.backgroundColor = color;
      node.appendChild(swatch);
      node.appendChild(el('span', 'gw-legend-label', text));
      if (count != null) node.appendChild(el('span', 'gw-legend-count', String(count)));
      legend.appendChild(node);
    };
    for (const tag of tags) item('gw-legend-dot', tagColor(tag), tag, counts.get(tag), tag);
    if (untagged) item('gw-legend-dot', UNTAGGED_COLOR, 'no tag', untagged);
    if (sources) item('gw-legend-square', SOURCE_COLOR, 'raw source', sources);
    const types = new Set(data.links.map((l) => l.type));
    for (const type of EDGE_PRIORITY) {
      if (!types.has(type)) continue;
      const style = EDGE_STYLE[type];
      item('gw-legend-line' + (style.dash ? ' gw-legend-line--dashed' : ''),
        rgba(style.color, Math.min(1, style.alpha + 0.2)), style.label);
    }
  }

  // --- raw-source pages: #L10-L24 ----------------------------------------------------------

  let anchorLine = null; // last line picked, for shift-click ranges

  function parseLines(hash) {
    let text = hash || '';
    try { text = decodeURIComponent(text); } catch (e) { /* keep it raw */ }
    const m = /^#?L(\d+)(?:-L?(\d+))?$/.exec(text);
    if (!m) return null;
    let start = parseInt(m[1], 10);
    let end = m[2] ? parseInt(m[2], 10) : start;
    if (end < start) { const t = start; start = end; end = t; }
    return { start, end };
  }

  function lineElement(number) {
    const node = document.getElementById('L' + number);
    return node && node.classList.contains('gw-line') ? node : null;
  }

  function highlightLines(scroll) {
    if (!document.querySelector('.gw-source')) return;
    for (const node of document.querySelectorAll('.gw-line.gw-hl')) node.classList.remove('gw-hl');
    const range = parseLines(location.hash);
    if (!range) return;
    let firstLine = null;
    let lastLine = null;
    for (let n = range.start; n <= range.end && n - range.start < 100000; n++) {
      const line = lineElement(n);
      if (!line) { if (n > range.start) break; else continue; }
      line.classList.add('gw-hl');
      if (!firstLine) firstLine = line;
      lastLine = line;
    }
    if (!firstLine) return;
    anchorLine = range.start;
    if (scroll) {
      // After material's own scrolling (it only knows single ids, not "L10-L24").
      setTimeout(() => scrollToLines(firstLine, lastLine), 0);
    }
  }

  function scrollToLines(firstLine, lastLine) {
    const top = firstLine.getBoundingClientRect().top + window.pageYOffset;
    const bottom = lastLine.getBoundingClientRect().bottom + window.pageYOffset;
    const header = document.querySelector('.md-header');
    const offset = (header ? header.getBoundingClientRect().height : 0) + 16;
    const room = window.innerHeight - offset;
    const height = bottom - top;
    const y = height < room * 0.8 ? top - offset - (room - height) / 2 : top - offset;
    window.scrollTo({ top: Math.max(0, y), left: window.pageXOffset });
  }

  document.addEventListener('click', (event) => {
    const link = event.target.closest && event.target.closest('a.gw-ln');
    if (!link || !event.shiftKey || anchorLine == null) return;
    const line = parseLines(link.hash); // material's instant navigation makes hrefs absolute
    if (!line) return;
    event.preventDefault();
    event.stopPropagation(); // not a navigation for material either
    const a = Math.min(anchorLine, line.start);
    const b = Math.max(anchorLine, line.start);
    history.replaceState(history.state, '', '#L' + a + (b > a ? '-L' + b : ''));
    const keep = anchorLine;
    highlightLines(false);
    anchorLine = keep;
  }, true);
  window.addEventListener('hashchange', () => highlightLines(true));

  // --- lifecycle --------------------------------------------------------------------------

  function init() {
    watchScheme();
    readTheme();
    for (let i = widgets.length - 1; i >= 0; i--) {
      if (!widgets[i].div.isConnected) {
        widgets[i].destroy();
        widgets.splice(i, 1);
      }
    }
    for (const div of document.querySelectorAll('div.gw-graph[data-graph]')) setup(div, false);
    for (const div of document.querySelectorAll('div.gw-local-graph[data-graph][data-key]')) {
      whenNear(div, () => setup(div, true));
    }
    highlightLines(true);
  }

  // A local graph stands at the end of its page and reads the whole graph file (megabytes in
  // a wiki of thousands of pages): fetched when the reader comes near it, not on every visit.
  function whenNear(div, run) {
    if (!window.IntersectionObserver) { run(); return; }
    const watcher = new IntersectionObserver((entries) => {
      if (!entries.some((entry) => entry.isIntersecting)) return;
      watcher.disconnect();
      if (div.isConnected) run();
    }, { rootMargin: '300px 0px' });
    watcher.observe(div);
  }

  // Material's palette toggle switches attributes on <body>: redraw in the new colours.
  let watching = false;
  function watchScheme() {
    if (watching || !window.MutationObserver || !document.body) return;
    watching = true;
    new MutationObserver(() => {
      readTheme();
      for (const w of widgets) w.redraw();
    }).observe(document.body, {
      attributes: true,
      attributeFilter: ['data-md-color-scheme', 'data-md-color-primary', 'data-md-color-accent'],
    });
  }

  function start() {
    let emitted = false;
    if (window.document$ && typeof window.document$.subscribe === 'function') {
      window.document$.subscribe(() => { emitted = true; init(); });
      // Same-page fragment changes under instant navigation come through location$, not
      // hashchange (material uses pushState).
      if (window.location$ && typeof window.location$.subscribe === 'function') {
        window.location$.subscribe(() => setTimeout(() => highlightLines(true), 0));
      }
    }
    // Without material, or when its document$ never emits (material with navigation.instant
    // completes document$ at once on file:// pages), run on DOMContentLoaded.
    const fallback = () => setTimeout(() => { if (!emitted) init(); }, 0);
    if (document.readyState === 'loading') {
      document.addEventListener('DOMContentLoaded', fallback, { once: true });
    } else {
      fallback();
    }
  }

  // For debugging and tests: `groundwiki.graphs()` gives the live force-graph instances.
  window.groundwiki = { loaded: true, init, tagColor, graphs: () => widgets.map((w) => w.graph) };

  start();
})();
